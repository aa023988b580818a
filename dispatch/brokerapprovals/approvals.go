// Package brokerapprovals connects dispatch to the permission broker: a run's own command
// becomes an "exec" request carrying the task's argv (so the task's creation counts as
// the P1 approval), an escalation becomes an isolation_escalation request, and the
// broker's pending requests feed the inbox. The broker's hooks apply as for any tool
// call: the run executes the argv a before_tool_use hook rewrote its command to (the
// broker judged that one), and the after_tool_use hooks receive how it ended.
package brokerapprovals

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/poll"
	"github.com/airlock-app/airlock/permission"
)

// Approvals implements dispatch.Approvals and dispatch.PendingApprovals over a Broker.
type Approvals struct {
	b *permission.Broker
}

// New returns the adapter.
func New(b *permission.Broker) *Approvals { return &Approvals{b: b} }

var (
	_ dispatch.Approvals        = (*Approvals)(nil)
	_ dispatch.PendingApprovals = (*Approvals)(nil)
	_ dispatch.ApprovalOutcomes = (*Approvals)(nil)
)

// Request maps a dispatch approval request to the broker's.
func Request(req dispatch.ApprovalRequest) permission.Request {
	params, _ := json.Marshal(map[string]any{"argv": req.Argv})
	pr := permission.Request{
		ID: req.ID, Tool: permission.ToolExec, Params: params,
		Context: permission.Context{
			Run: strconv.FormatUint(uint64(req.RunID), 10), Task: req.Task, Department: req.Department, Cwd: req.Cwd,
			Policy: permission.PolicySummary{
				Mode: req.Policy.SandboxMode, Network: req.Policy.Network,
				ApprovalPolicy: permission.ApprovalPolicy(req.Policy.ApprovalPolicy), Posture: req.Policy.Posture,
				Profile: req.Policy.Profile,
				// "sandbox" when the command runs in the micro-VM (dispatch resolves auto
				// before asking): the broker then judges it by the VM's guarantees.
				ExecutionMode: req.Policy.ExecutionMode,
			},
			Caller:   permission.Caller{Description: "dispatch"}, // in-process: no PID (a recovered request re-attaches by ID)
			TaskArgv: req.TaskArgv,
		},
	}
	if req.Kind == dispatch.ApprovalEscalation {
		reason := "re-run with more access"
		if req.Grant != nil {
			reason = "re-run with " + req.Grant.String()
		}
		pr.Escalation = &permission.Escalation{Reason: reason, Denial: req.Denial, Grant: req.Grant}
	}
	return pr
}

// Await asks the broker. When the broker's verdict is to ask a person, OnPending is
// called first so dispatch can mark the run waiting_approval and give back its slot.
func (a *Approvals) Await(ctx context.Context, req dispatch.ApprovalRequest) (dispatch.ApprovalDecision, error) {
	pr := Request(req)
	if dl, ok := ctx.Deadline(); ok {
		pr.Timeout = time.Until(dl)
	}
	// The broker has no callback for "now waiting for a person": when its verdict will be
	// ask, watch its pending list and report the request once it is there (so an answer
	// given right after the run shows waiting_approval finds it). Check runs no hooks, so
	// with before_tool_use hooks (which may rewrite the command or raise its tier) the
	// verdict is unknown until Await: watch then too.
	var watching sync.WaitGroup
	done := make(chan struct{})
	if req.OnPending != nil && (len(a.b.Settings().BeforeHooks) > 0 || a.b.Check(ctx, pr).Decision.Verdict == permission.Ask) {
		watching.Add(1)
		go func() {
			defer watching.Done()
			if poll.Until(done, 5*time.Millisecond, func() bool { return a.isPending(req.ID) }) {
				req.OnPending(req.ID)
			}
		}()
	}
	d, err := a.b.Await(ctx, pr)
	close(done)
	watching.Wait()
	out := dispatch.ApprovalDecision{
		Allow: d.Verdict == permission.Allow, RequestID: d.RequestID, Tier: string(d.Tier), Layer: string(d.Layer),
		Reasons: d.Reasons, AnsweredBy: d.AnsweredBy,
	}
	if out.Allow {
		out.Grant = d.Grant
	}
	if err != nil {
		return out, fmt.Errorf("permission broker: %w", err)
	}
	if out.Allow && len(d.Params) > 0 && !jsonEqual(d.Params, pr.Params) {
		// A before_tool_use hook rewrote the command; the broker judged the rewritten one,
		// so that is what runs. Parameters a run cannot execute are refused, not ignored.
		argv := permission.Request{Params: d.Params}.Argv()
		if len(argv) == 0 || argv[0] == "" {
			out.Allow = false
			out.Reasons = append(out.Reasons, fmt.Sprintf(`a before_tool_use hook rewrote the run's command to %s, which has no "argv" to run; `+
				`a hook that rewrites a scheduled run's command must answer {"params": {"argv": ["cmd", "arg", ...]}}`, d.Params))
			return out, nil
		}
		out.Argv = argv
	}
	return out, nil
}

// After gives how an allowed run's command ended to the broker's after_tool_use hooks,
// exactly as an agent's tool call reports its outcome (POST /v1/permission/after): the
// request as dispatch asked it, the decision with the params that ran, the outcome.
func (a *Approvals) After(ctx context.Context, req dispatch.ApprovalRequest, dec dispatch.ApprovalDecision, out dispatch.RunOutcome) {
	pr := Request(req)
	ran := pr.Params
	if len(dec.Argv) > 0 {
		ran, _ = json.Marshal(map[string]any{"argv": dec.Argv})
	}
	verdict := permission.Deny
	if dec.Allow {
		verdict = permission.Allow
	}
	d := permission.Decision{
		RequestID: dec.RequestID, Verdict: verdict, Tier: permission.Tier(dec.Tier), Layer: permission.Layer(dec.Layer),
		Reasons: dec.Reasons, Params: ran, AnsweredBy: dec.AnsweredBy,
	}
	a.b.AfterToolUse(ctx, pr, d, permission.Outcome{Ran: out.Ran, ExitCode: out.ExitCode, Error: out.Error, SandboxDenied: out.SandboxDenied})
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

func (a *Approvals) isPending(id string) bool {
	for _, p := range a.b.Pending() {
		if p.ID == id {
			return true
		}
	}
	return false
}

// Pending lists the broker's pending requests for the inbox.
func (a *Approvals) Pending() []dispatch.InboxApproval {
	var out []dispatch.InboxApproval
	for _, p := range a.b.Pending() {
		ia := dispatch.InboxApproval{
			ID: p.ID, Tool: p.Request.Tool, Tier: string(p.Tier), Kind: string(p.Kind), Summary: p.Summary,
			RequestedAt: p.CreatedAt, Deadline: p.Deadline, InteractiveOnly: p.InteractiveOnly,
		}
		if id, err := strconv.ParseUint(p.Request.Context.Run, 10, 64); err == nil {
			ia.RunID = uint(id)
		}
		out = append(out, ia)
	}
	return out
}
