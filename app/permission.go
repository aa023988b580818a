package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/permission/preflight"
	"github.com/airlock-app/airlock/redact"
)

// permissionSettings maps config.toml's permission keys onto the broker's settings.
func permissionSettings(f config.File) permission.Settings {
	var s permission.Settings
	if f.ApprovalPolicy != nil {
		s.ApprovalPolicy = *f.ApprovalPolicy
	}
	if f.ApprovalsReviewer != nil {
		s.ApprovalsReviewer = *f.ApprovalsReviewer
	}
	s.Permission.Tiers = f.Permission.Tiers
	s.Permission.RequestTimeout = f.Permission.RequestTimeout
	for _, r := range f.Permission.Rules {
		s.Permission.Rules = append(s.Permission.Rules, permission.RuleSetting{Tool: r.Tool, Pattern: r.Pattern, Action: r.Action})
	}
	for _, h := range f.Hooks.BeforeToolUse {
		s.Hooks.BeforeToolUse = append(s.Hooks.BeforeToolUse, permission.HookSetting{Command: h.Command, Tools: h.Tools, Timeout: h.Timeout})
	}
	for _, h := range f.Hooks.AfterToolUse {
		s.Hooks.AfterToolUse = append(s.Hooks.AfterToolUse, permission.HookSetting{Command: h.Command, Tools: h.Tools, Timeout: h.Timeout})
	}
	s.Reviewer.Command = f.Reviewer.Command
	s.Reviewer.Timeout = f.Reviewer.Timeout
	s.Ops.Strict = f.Ops.Strict
	return s
}

// preflightOptions tell the classifier where Airlock keeps what an agent must not touch.
func (c *Core) preflightOptions() preflight.Options {
	return preflight.Options{Home: c.getenv("HOME"), AirlockPaths: []string{
		c.Paths.ConfigFile, c.Paths.DataDir, c.Paths.Database, c.Paths.RuntimeDir, c.Paths.Socket,
	}}
}

func (c *Core) openPermission(ctx context.Context) error {
	eff, err := c.resolvePermission()
	if err != nil {
		return fmt.Errorf("permission settings: %w", err)
	}
	c.Broker, err = permission.NewBroker(ctx, permission.BrokerOptions{
		DB: c.DB, Settings: eff, Publisher: c.Bus, Preflight: c.preflightOptions(), SettingsFor: c.permissionFor,
		Isolation: permission.SandboxIsolation{PolicyFor: c.sandboxPolicyFor}, Attended: c.attended,
	})
	return err
}

// attended reports whether anything can put a question to the person now: whatever
// follows the requests as they are raised — the window (its events), the tray,
// notifications, or an event stream such as `airlock approvals watch`. With [approvals]
// wait_unattended = true it is always so: questions wait for their deadline.
func (c *Core) attended() bool {
	if c.Config != nil {
		if v := c.Config.State().File.Approvals.WaitUnattended; v != nil && *v {
			return true
		}
	}
	return c.Bus != nil && c.Bus.Watching(api.TopicPermissionRequested) > 0
}

// errNoBroker says the broker is not running (the core is still starting, or failed
// to open it).
var errNoBroker = api.Errorf(http.StatusServiceUnavailable, api.CodeUnavailable,
	"the permission broker is not running", "restart Airlock; `airlock status` says why it did not start")

// brokerTimeout bounds an operation on the broker's database (a window's caller has no
// request whose end would).
const brokerTimeout = 10 * time.Second

// broker is the running broker, or errNoBroker.
func (c *Core) broker() (*permission.Broker, error) {
	if c.Broker == nil {
		return nil, errNoBroker
	}
	return c.Broker, nil
}

// PendingApprovals lists the requests waiting for a person, oldest first (the window's
// "Waiting for you", `airlock approvals list`).
func (c *Core) PendingApprovals(Caller) []api.PendingRequest {
	b, err := c.broker()
	if err != nil {
		return []api.PendingRequest{}
	}
	return b.Pending()
}

// AnswerApproval answers a pending request. Who answers is established from the caller
// (the window, or the proof an API request carries), never from the body: a terminal
// confirms with the id's first 6 characters (or the whole id when it is shorter).
func (c *Core) AnswerApproval(cl Caller, id string, in api.AnswerIn) (api.Decision, error) {
	b, err := c.broker()
	if err != nil {
		return api.Decision{}, err
	}
	cl.proof = in.Proof
	by, err := c.who(cl, func(typed string) bool {
		return len(typed) >= min(6, len(id)) && strings.HasPrefix(id, typed)
	})
	if err != nil {
		return api.Decision{}, err
	}
	ctx, cancel := context.WithTimeout(cl.Context(), brokerTimeout)
	defer cancel()
	return b.Answer(ctx, id, permission.Answer{Allow: in.Allow, Scope: in.Scope, Pattern: in.Pattern,
		Reason: in.Reason, By: by, Interactive: permission.ByPerson(by)})
}

// Grants lists the remembered grants, newest first.
func (c *Core) Grants(cl Caller) ([]api.GrantRecord, error) {
	b, err := c.broker()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(cl.Context(), brokerTimeout)
	defer cancel()
	list, err := b.Grants().List(ctx, permission.GrantFilter{})
	if list == nil && err == nil {
		list = []api.GrantRecord{}
	}
	return list, err
}

// RevokeGrant revokes a remembered allow (the next identical request asks again) and
// tells the windows (grants.changed).
func (c *Core) RevokeGrant(cl Caller, id string) (api.Revoked, error) {
	b, err := c.broker()
	if err != nil {
		return api.Revoked{}, err
	}
	ctx, cancel := context.WithTimeout(cl.Context(), brokerTimeout)
	defer cancel()
	if err := b.Grants().Revoke(ctx, id); err != nil {
		return api.Revoked{}, err
	}
	out := api.Revoked{Revoked: id}
	c.Bus.Publish(api.TopicGrantsChanged, out)
	return out, nil
}

// Audit lists the decisions taken, newest first, narrowed by f.
func (c *Core) Audit(cl Caller, f api.AuditFilter) ([]api.AuditRecord, error) {
	b, err := c.broker()
	if err != nil {
		return nil, err
	}
	q := permission.AuditQuery{Tool: f.Tool, Run: f.Run, Session: f.Session, Verdict: f.Verdict, Limit: f.Limit}
	if f.Since != "" {
		d, err := time.ParseDuration(f.Since)
		if err != nil {
			return nil, api.Errorf(http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("since=%q is not a duration", f.Since), "use for example since=24h")
		}
		q.Since = time.Now().Add(-d)
	}
	ctx, cancel := context.WithTimeout(cl.Context(), brokerTimeout)
	defer cancel()
	recs, err := b.Audit(ctx, q)
	if recs == nil && err == nil {
		recs = []api.AuditRecord{}
	}
	return recs, err
}

func (c *Core) permissionRoutes() {
	handle(c, api.PermissionCheck, func(r *http.Request, req api.Request) (api.Evaluation, error) {
		b, err := c.broker()
		if err != nil {
			return api.Evaluation{}, err
		}
		return b.Check(r.Context(), req), nil
	})
	// Await blocks until the request is decided or the caller hangs up.
	handle(c, api.PermissionAwait, func(r *http.Request, req api.Request) (api.Decision, error) {
		ctx := r.Context()
		if peer, ok := localapi.PeerFrom(ctx); ok {
			// One client process (every loopback TCP client together), and each session
			// it serves (an MCP server's), is one caller whose waiting requests the
			// broker caps.
			process := "a loopback TCP client"
			if peer.PID > 0 {
				req.Context.Caller.PID = peer.PID
				process = fmt.Sprintf("the process %d", peer.PID)
			}
			who := process
			if s := req.Context.Session; s != "" {
				who += " in session " + api.Label(s, api.LabelName)
			}
			ctx = permission.WithProcessCaller(ctx, process, who)
		}
		return c.awaitRequest(ctx, req)
	})
	handle(c, api.ListApprovals, func(r *http.Request, _ api.None) ([]api.PendingRequest, error) {
		return c.PendingApprovals(APICaller(r, api.Proof{})), nil
	})
	// How a person at a terminal proves presence: the CLI asks the password under os.
	handle(c, api.ApprovalsProof, func(r *http.Request, _ api.None) (api.ProofSummary, error) {
		return c.Proof(), nil
	})
	handle(c, api.AnswerApproval, func(r *http.Request, in api.AnswerIn) (api.Decision, error) {
		return c.AnswerApproval(APICaller(r, in.Proof), r.PathValue("id"), in)
	})
	handle(c, api.ListGrants, func(r *http.Request, _ api.None) ([]api.GrantRecord, error) {
		return c.Grants(APICaller(r, api.Proof{}))
	})
	handle(c, api.RevokeGrant, func(r *http.Request, _ api.None) (api.Revoked, error) {
		return c.RevokeGrant(APICaller(r, api.Proof{}), r.PathValue("id"))
	})
	handle(c, api.ListAudit, func(r *http.Request, f api.AuditFilter) ([]api.AuditRecord, error) {
		return c.Audit(APICaller(r, api.Proof{}), f)
	})
}

// awaitRequest asks the broker and waits for its decision (a person's, when it asks one),
// noting a denial for the request's run.
func (c *Core) awaitRequest(ctx context.Context, req api.Request) (api.Decision, error) {
	b, err := c.broker()
	if err != nil {
		return api.Decision{}, err
	}
	d, err := b.Await(ctx, req)
	if err != nil {
		return api.Decision{}, err
	}
	c.noteDenial(ctx, req, d)
	return d, nil
}

// noteDenial tells dispatch about a denied tool call made during one of its runs
// (the run's processes carry AIRLOCK_RUN_ID): the same request denied three times
// pauses the run instead of letting an agent retry in a loop.
func (c *Core) noteDenial(ctx context.Context, req permission.Request, d permission.Decision) {
	if d.Verdict != permission.Deny || req.Context.Run == "" || c.Dispatch == nil {
		return
	}
	id, err := strconv.ParseUint(req.Context.Run, 10, 64)
	if err != nil {
		return
	}
	subject := req.Tool + " " + req.Subject()
	if paused, err := c.Dispatch.RecordDenial(ctx, uint(id), subject); err != nil {
		slog.Warn("record a denial for its run", "run", id, "error", err)
	} else if paused {
		slog.Info("run paused after the same request was denied three times", "run", id, "request", redact.String(subject))
	}
}
