package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/secrets"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/ops/sandboxrunner"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress"
)

// registeringRunner runs ops commands in the sandbox and records each sandbox's pid
// for as long as it runs, so the local API refuses requests from inside it.
type registeringRunner struct {
	core  *Core
	inner sandboxrunner.Runner
}

func (r registeringRunner) Run(ctx context.Context, spec ops.RunSpec) (ops.RunResult, error) {
	inner := r.inner
	onStart, done := r.core.trackSandboxes(inner.OnStart)
	defer done()
	inner.OnStart = onStart
	return inner.Run(ctx, spec)
}

// opsRunner runs the ops commands of the core's plans.
func (c *Core) opsRunner() registeringRunner {
	return registeringRunner{core: c, inner: sandboxrunner.Runner{Policy: c.opsPolicy, Egress: c.opsEgress, Ask: c.opsAsk}}
}

// opsAsk is the ask-only channel of an ops command's sandbox: its requests are a session
// of that plan's step, in its directory, under the policy it runs with.
func (c *Core) opsAsk(spec ops.RunSpec, pol sandbox.Policy) sandbox.Egress {
	return c.askChannel(api.Context{Session: "ops-" + spec.PlanID + "-" + spec.Purpose, Cwd: spec.Dir, Workspace: spec.Dir,
		Caller: api.Caller{Description: "ops " + spec.Purpose + " of plan " + spec.PlanID},
		Policy: api.PolicySummary{Mode: string(pol.Mode), Network: pol.Network}})
}

// opsEgress connects an ops command under network_access = "allowlist" to the egress
// proxy as runEgress connects a dispatch run: the policy's lists, each connection in the
// command's output and the audit, an unknown domain a P1 network_domain request.
func (c *Core) opsEgress(spec ops.RunSpec, pol sandbox.Policy, log io.Writer) sandbox.Egress {
	ask := permission.Request{Tool: permission.ToolNetworkDomain, Context: api.Context{Cwd: spec.Dir, Workspace: spec.Dir,
		Caller: api.Caller{Description: "ops " + spec.Purpose + " of plan " + spec.PlanID},
		Policy: api.PolicySummary{Mode: string(pol.Mode), Network: pol.Network, EgressConnected: true}}}
	return sandbox.Egress(egress.Hook(c.egressConfig(pol, log, &ask)))
}

// opsStateDir is the ops flow's state outside the database (ops.Config.StateDir).
func (c *Core) opsStateDir() string { return filepath.Join(c.Paths.DataDir, "ops") }

func (c *Core) openOps(ctx context.Context) error {
	runner := c.opsRunner()
	svc, err := ops.Open(ctx, ops.Config{
		DB: c.DB, Runner: runner, Publisher: c.Bus, StateDir: c.opsStateDir(),
		Keys: ops.StoredKeySource{Store: c.Secrets, IsNotFound: func(e error) bool { return errors.Is(e, secrets.ErrNotFound) }},
		// Open holds the database's lock: an apply this core does not run is dead.
		Exclusive:  true,
		NewJournal: c.newJournal,
	})
	if err != nil {
		return err
	}
	c.Ops = svc
	return nil
}

// opsReadTimeout bounds the window's reads of plans and the journal (an API read is
// bounded by its request).
const opsReadTimeout = 3 * time.Second

// opsActionTimeout bounds an approval or a rejection from the window. The journal entry
// that follows the minted token may wait for the keyring, and an approval cut off between
// the two would leave a live token nobody holds.
const opsActionTimeout = 30 * time.Second

// opsApproveMu serializes approvals: two clicks (or two terminals) at the same moment
// give one token and one clear "already approved", never a database race.
var opsApproveMu sync.Mutex

// opsContext is the context of an ops operation: the request's for the API, and for the
// window a background one bounded by d (0: unbounded, as an apply runs as long as it runs).
func opsContext(cl Caller, d time.Duration) (context.Context, context.CancelFunc) {
	if cl.window && d > 0 {
		return context.WithTimeout(cl.Context(), d)
	}
	return context.WithCancel(cl.Context())
}

// opsActor names who performs an ops step in the journal: the window, or what the API
// caller said (def when it said nothing).
func opsActor(cl Caller, said, def string) string {
	if cl.window {
		return permission.ByWindow
	}
	if said == "" {
		return def
	}
	return said
}

func (c *Core) opsService() (*ops.Service, error) {
	if c.Ops == nil {
		return nil, api.Errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the ops service is not running", "restart Airlock")
	}
	return c.Ops, nil
}

// OpsCreatePlan opens a plan from a plan file's text (decoded strictly: an unknown field
// is an error naming it).
func (c *Core) OpsCreatePlan(cl Caller, f api.PlanSubmission) (*api.PlanView, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	in, err := ops.DecodePlanInput([]byte(f.Data), f.BaseDir)
	if err != nil {
		return nil, err
	}
	if in.By == "" {
		in.By = opsActor(cl, f.By, "")
	}
	ctx, cancel := opsContext(cl, opsActionTimeout)
	defer cancel()
	return svc.OpsPlan(ctx, in)
}

// OpsPlans lists plans, newest first.
func (c *Core) OpsPlans(cl Caller, f api.PlanFilter) ([]api.PlanSummary, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	ctx, cancel := opsContext(cl, opsReadTimeout)
	defer cancel()
	list, err := svc.List(ctx, f)
	if list == nil && err == nil {
		list = []api.PlanSummary{}
	}
	return list, err
}

// OpsPlan is one plan with its latest diff and approval.
func (c *Core) OpsPlan(cl Caller, id string) (*api.PlanView, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	ctx, cancel := opsContext(cl, opsReadTimeout)
	defer cancel()
	return svc.Plan(ctx, id)
}

// OpsDiff attaches the plan's diff: its own diff command run read-only, another
// read-only command, or a file.
func (c *Core) OpsDiff(cl Caller, id string, in api.DiffInput) (*api.DiffResult, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	in.PlanID, in.By = id, opsActor(cl, in.By, "")
	ctx, cancel := opsContext(cl, 0)
	defer cancel()
	return svc.OpsDiff(ctx, in)
}

// OpsApprovalPrompt is what the person sees before approving: the hash, the exact
// command, snapshot command and working directory, the steps and the diff. It refuses a
// plan that cannot be approved, saying why (no diff, a live token, a changed input).
func (c *Core) OpsApprovalPrompt(cl Caller, id string) (*api.ApprovalPrompt, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	ctx, cancel := opsContext(cl, opsReadTimeout)
	defer cancel()
	return svc.ApprovalPrompt(ctx, id)
}

// OpsApprove mints the plan's single-use token. Only a person approves: a click in the
// window, which must send the plan hash it showed in full, or a terminal caller proven
// as the approvals answer is (answerer) who typed the hash's first characters. The
// result carries the token: the only time it exists outside the person's hands.
func (c *Core) OpsApprove(cl Caller, id string, in api.ApproveBody) (*api.ApproveResult, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	if cl.window {
		if h := strings.ToLower(strings.TrimSpace(in.ConfirmHashPrefix)); len(h) != 64 {
			return nil, fmt.Errorf("approve plan %s: the window must send the full plan hash it showed (64 hex characters), got %d characters", id, len(h))
		}
	}
	// A TTL out of bounds is refused before the proof is checked: nothing would come of it.
	if _, err := ops.ParseTokenTTL(in.TTL); err != nil {
		return nil, err
	}
	by, err := c.who(cl, nil) // ops checks the hash prefix itself
	if err != nil {
		return nil, err
	}
	if !permission.ByPerson(by) {
		return nil, c.needPerson("approving a plan", "airlock ops approve "+id)
	}
	opsApproveMu.Lock()
	defer opsApproveMu.Unlock()
	ctx, cancel := opsContext(cl, opsActionTimeout)
	defer cancel()
	return svc.OpsApprove(ctx, api.ApproveInput{PlanID: id, TTL: in.TTL, ConfirmHashPrefix: in.ConfirmHashPrefix},
		ops.Attestation{By: by, Interactive: true})
}

// OpsApproveRequest is an agent asking the person to approve a plan. The broker's
// ops_approve request is interactive-only: it waits until a person answers in the window
// or at a terminal, and only then is the token minted, attested by that answer. A
// decision other than allow is the answer, without a token.
func (c *Core) OpsApproveRequest(cl Caller, id, ttl string, rc permission.Context) (permission.Decision, *api.ApproveResult, error) {
	svc, err := c.opsService()
	if err != nil {
		return permission.Decision{}, nil, err
	}
	ctx := cl.Context()
	// Before the person is asked: a token that would be refused (or dead at birth) is
	// not worth a question.
	if _, err := ops.ParseTokenTTL(ttl); err != nil {
		return permission.Decision{}, nil, err
	}
	prompt, err := svc.ApprovalPrompt(ctx, id)
	if err != nil {
		return permission.Decision{}, nil, err
	}
	params, err := json.Marshal(api.ApproveRequestParams{
		PlanID: prompt.PlanID, Hash: prompt.Hash, Intent: prompt.Intent, Target: prompt.Target,
		ApplyCommand: prompt.ApplyCommand, SnapshotCommand: prompt.SnapshotCommand, Workdir: prompt.Workdir,
		ConfirmCommand: prompt.ConfirmCommand, ConfirmWithinSeconds: prompt.ConfirmWithinSeconds,
		Steps: prompt.Steps, Diff: prompt.Diff, WorstBlastRadius: prompt.WorstBlastRadius,
		WorstReversibility: prompt.WorstReversibility, TTL: ttl,
	})
	if err != nil {
		return permission.Decision{}, nil, fmt.Errorf("describe plan %s: %w", id, err)
	}
	req := permission.Request{Tool: permission.ToolOpsApprove, Params: params, Context: rc}
	if cl.r != nil {
		if peer, ok := localapi.PeerFrom(ctx); ok && peer.PID > 0 {
			req.Context.Caller.PID = peer.PID
		}
	}
	d, err := c.Broker.Await(ctx, req)
	if err != nil {
		return d, nil, err
	}
	if d.Verdict != permission.Allow {
		return d, nil, nil
	}
	if !permission.ByPerson(d.AnsweredBy) {
		// The broker never lets anything but a person allow ops_approve; refuse anyway
		// rather than mint a token on someone else's word.
		return d, nil, api.Errorf(http.StatusForbidden, api.CodeNotInteractive,
			fmt.Sprintf("ops_approve was allowed by %q, not by a person", d.AnsweredBy),
			"approve the plan in the Airlock window or with `airlock approvals allow` in a terminal")
	}
	opsApproveMu.Lock()
	defer opsApproveMu.Unlock()
	res, err := svc.OpsApprove(ctx, api.ApproveInput{PlanID: id, TTL: ttl, ConfirmHashPrefix: prompt.Hash},
		ops.Attestation{By: d.AnsweredBy, Interactive: true})
	return d, res, err
}

// OpsReject records the person's "no" with their reason: the plan becomes rejected and
// a live token is revoked.
func (c *Core) OpsReject(cl Caller, id string, in api.RejectBody) (*api.PlanView, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	ctx, cancel := opsContext(cl, opsActionTimeout)
	defer cancel()
	return svc.Reject(ctx, id, in.Reason, opsActor(cl, "", "cli"))
}

// OpsApply redeems the token and runs the approved plan. An apply that ran and failed
// is an answer, with its reason (the token is spent); a refused one (unknown, used,
// expired or another plan's token, drift) is an error and nothing ran.
func (c *Core) OpsApply(cl Caller, id string, in api.ApplyInput) (*api.ApplyResult, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	in.PlanID, in.By = id, opsActor(cl, in.By, "cli") // the journal names who applied, or tried to
	ctx, cancel := opsContext(cl, 0)
	defer cancel()
	res, err := svc.OpsApply(ctx, in)
	var ae *ops.ApplyError
	if errors.As(err, &ae) && res != nil {
		if res.Reason == "" {
			res.Reason = ae.Error()
		}
		return res, nil
	}
	return res, err
}

// OpsVerify runs the plan's read-only assertions and records the evidence.
func (c *Core) OpsVerify(cl Caller, id string, in api.VerifyInput) (*api.VerifyResult, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	in.PlanID, in.By = id, opsActor(cl, in.By, "cli")
	ctx, cancel := opsContext(cl, 0)
	defer cancel()
	return svc.OpsVerify(ctx, in)
}

// OpsJournal reads a project's journal (without a project, the plan's) and, with
// in.Verify, checks its chain: a check that cannot run is an error.
func (c *Core) OpsJournal(cl Caller, in api.JournalInput) (*api.JournalPage, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	ctx, cancel := opsContext(cl, opsReadTimeout)
	defer cancel()
	return svc.OpsJournal(ctx, in)
}

// OpsProjects lists the projects that have a journal.
func (c *Core) OpsProjects(cl Caller) ([]string, error) {
	svc, err := c.opsService()
	if err != nil {
		return nil, err
	}
	ctx, cancel := opsContext(cl, opsReadTimeout)
	defer cancel()
	list, err := svc.Projects(ctx)
	if list == nil && err == nil {
		list = []string{}
	}
	return list, err
}

// opsRoutes serve the ops operations over the local API.
func (c *Core) opsRoutes() {
	caller := func(r *http.Request) Caller { return APICaller(r, api.Proof{}) }
	handle(c, api.OpsCreatePlan, func(r *http.Request, in api.PlanSubmission) (*api.PlanView, error) {
		return c.OpsCreatePlan(caller(r), in)
	})
	handle(c, api.OpsListPlans, func(r *http.Request, in api.PlanFilter) ([]api.PlanSummary, error) {
		return c.OpsPlans(caller(r), in)
	})
	handle(c, api.OpsGetPlan, func(r *http.Request, _ api.None) (*api.PlanView, error) {
		return c.OpsPlan(caller(r), r.PathValue("id"))
	})
	handle(c, api.OpsDiff, func(r *http.Request, in api.DiffInput) (*api.DiffResult, error) {
		return c.OpsDiff(caller(r), r.PathValue("id"), in)
	})
	handle(c, api.OpsApprovalPrompt, func(r *http.Request, _ api.None) (*api.ApprovalPrompt, error) {
		return c.OpsApprovalPrompt(caller(r), r.PathValue("id"))
	})
	handle(c, api.OpsApprove, func(r *http.Request, in api.ApproveBody) (*api.ApproveResult, error) {
		proof := in.Proof
		if proof.Password == "" && proof.Confirmation == "" {
			proof.Confirmation = in.ConfirmHashPrefix // terminal_proof = "tty": the typed prefix confirms
		}
		return c.OpsApprove(APICaller(r, proof), r.PathValue("id"), in)
	})
	handle(c, api.OpsReject, func(r *http.Request, in api.RejectBody) (*api.PlanView, error) {
		return c.OpsReject(caller(r), r.PathValue("id"), in)
	})
	handle(c, api.OpsApply, func(r *http.Request, in api.ApplyInput) (*api.ApplyResult, error) {
		return c.OpsApply(caller(r), r.PathValue("id"), in)
	})
	handle(c, api.OpsVerify, func(r *http.Request, in api.VerifyInput) (*api.VerifyResult, error) {
		return c.OpsVerify(caller(r), r.PathValue("id"), in)
	})
	handle(c, api.OpsJournal, func(r *http.Request, in api.JournalInput) (*api.JournalPage, error) {
		return c.OpsJournal(caller(r), in)
	})
	handle(c, api.OpsProjects, func(r *http.Request, _ api.None) ([]string, error) {
		return c.OpsProjects(caller(r))
	})
}
