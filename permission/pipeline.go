package permission

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/permission/preflight"
	"github.com/airlock-app/airlock/redact"
	"github.com/airlock-app/airlock/sandbox"
)

// compiled is an Effective configuration ready for the hot path.
type compiled struct {
	eff      Effective
	tiers    TierTable
	rules    *RuleSet
	reviewer *Reviewer
}

func compile(e Effective) (*compiled, error) {
	rs, err := NewRuleSet(e.Rules)
	if err != nil {
		return nil, err
	}
	c := &compiled{eff: e, tiers: NewTierTable(e.Tiers), rules: rs}
	if len(e.ReviewerCommand) > 0 {
		c.reviewer = &Reviewer{Command: e.ReviewerCommand, Timeout: e.ReviewerTimeout}
	}
	return c, nil
}

// Evaluation is the pipeline's full account of one request, for `airlock check` and
// the popup: every step's input to the final decision.
type Evaluation = api.Evaluation

// evalMode says which side-effecting steps run.
type evalMode struct {
	hooks    bool
	reviewer bool
}

var strictMessage = "ops.strict is on: destructive shell commands are denied. Make the change through the ops flow instead: ops_plan → ops_diff → ops_approve → ops_apply"

// evaluate runs the pipeline's steps 1–7 of the package doc (the person is step 7's fallback, handled by the
// broker when the verdict is ask).
func (b *Broker) evaluate(ctx context.Context, req *Request, mode evalMode) Evaluation {
	cfg, cfgErr := b.configFor(ctx, req)
	if cfgErr != nil {
		d := Decision{RequestID: req.ID, Verdict: Deny, Tier: P2, Layer: LayerPolicy, Params: req.Params,
			Reasons: []string{"the policy of this request could not be resolved, so it is refused: " + cfgErr.Error()}}
		return Evaluation{Decision: d, BaseTier: P2}
	}
	pol := cfg.eff.ApprovalPolicy
	polFrom := cfg.eff.ApprovalPolicyFrom
	if p := req.Context.Policy.ApprovalPolicy; p != "" {
		// A run's recorded policy applies, but never below what a project file around
		// its directory tightened it to.
		if parsed, err := ParseApprovalPolicy(string(p)); err == nil && (polFrom != FromProject || policyRank(parsed) >= policyRank(pol)) {
			pol, polFrom = parsed, "request"
		}
	}
	rev := cfg.eff.Reviewer
	if r := req.Context.Policy.Reviewer; r == ReviewerUser {
		rev = r // a run may only narrow the reviewer to the person
	}
	tier := cfg.tiers.For(req.Tool, req.Context.Policy.Posture)
	ev := Evaluation{BaseTier: tier, ApprovalPolicy: pol, PolicyFrom: polFrom, Reviewer: rev}
	d := Decision{RequestID: req.ID, Tier: tier, Params: req.Params}
	interactive := false
	mark := func(k Kind, reason string) {
		interactive = true
		if d.Kind == "" {
			d.Kind = k
		}
		if reason != "" {
			d.Reasons = append(d.Reasons, reason)
		}
	}
	finish := func(v Verdict, l Layer, reason string) Evaluation {
		d.Verdict, d.Layer = v, l
		if reason != "" {
			d.Reasons = append(d.Reasons, reason)
		}
		d.InteractiveOnly = interactive
		if interactive {
			d.Tier = P2
		} else {
			d.Tier = tier
		}
		ev.Decision = d
		return ev
	}

	switch req.Tool {
	case ToolOpsApprove:
		mark(KindOpsApprove, "ops_approve is interactive-only: the person approves the plan hash")
	case ToolAuthorizeDirectory:
		mark(KindDirectoryAuthorization, "authorizing a directory is interactive-only")
	}
	if req.Escalation != nil {
		reason := "asks for more access than the sandbox gives: " + req.Escalation.Reason + suffix(req.Escalation.Denial)
		if g := req.Escalation.Grant; g != nil {
			d.Grant = g
			reason += "; allowing it once gives " + g.String()
		}
		mark(KindIsolationEscalation, reason)
	}

	// 1. Isolation.
	var isolationFailed, isolationRefused error
	isolationCheck := func() {
		iso := b.iso.Load()
		if iso == nil || req.Escalation != nil {
			return
		}
		if err := (*iso).Check(ctx, *req); err != nil {
			ev.Isolation = err.Error()
			if _, denied := sandbox.IsDenied(err); denied {
				// An escalation is offered only when allowing it runs the call: exactly
				// the access the denials name, for this one call.
				g, gerr := sandbox.GrantFor(denialsOf(err))
				if gerr == nil && req.IsShell() && len(g.Readable) > 0 {
					gerr = sandbox.ErrNoGrant // the OS layer hides them from every command
				}
				if gerr != nil {
					isolationRefused = err
					return
				}
				d.Grant = &g
				mark(KindIsolationEscalation, err.Error()+"; allowing it once gives "+g.String())
			} else {
				isolationFailed = err
			}
		}
	}
	isolationCheck()
	if isolationFailed != nil {
		return finish(Deny, LayerIsolation, "the sandbox could not check the call, so it is refused: "+isolationFailed.Error())
	}
	if isolationRefused != nil {
		return finish(Deny, LayerIsolation, isolationRefused.Error())
	}

	// 2. beforeToolUse hooks.
	// hookRaisedP2: a hook asked for a person; the reviewer (step 7) does not answer it.
	hookRaisedP2 := false
	if mode.hooks && len(cfg.eff.BeforeHooks) > 0 {
		hr := runBeforeHooks(ctx, cfg.eff.BeforeHooks, *req, tier)
		d.Reasons = append(d.Reasons, hr.reasons...)
		if hr.blocked {
			return finish(Deny, LayerHook, "")
		}
		tier = tier.Max(hr.tier)
		hookRaisedP2 = hr.tier == P2
		if hr.params != nil {
			req.Params, d.Params = hr.params, hr.params
			if ev.Isolation == "" {
				isolationCheck() // the rewritten call gets its own sandbox verdict
				if isolationFailed != nil {
					return finish(Deny, LayerIsolation, "the sandbox could not check the call, so it is refused: "+isolationFailed.Error())
				}
				if isolationRefused != nil {
					return finish(Deny, LayerIsolation, isolationRefused.Error())
				}
			}
		}
	} else if !mode.hooks && len(cfg.eff.BeforeHooks) > 0 {
		ev.Notes = append(ev.Notes, "before_tool_use hooks were not run")
	}

	// 3. Preflight.
	reqParams := req.ParamMap()
	subject := api.SubjectOf(reqParams)
	shell := api.IsShellCall(req.Tool, reqParams)
	var segments []Segment
	if shell {
		opts := b.preflight
		opts.Cwd = req.Context.Cwd // a relative path there can name a credential file
		a := preflight.Analyze(api.CommandOf(reqParams), opts)
		ev.Findings, ev.KnownSafe, ev.Segments = a.Findings, a.KnownSafe, a.Segments
		segments = make([]Segment, len(a.Segments))
		for i, s := range a.Segments {
			segments[i] = Segment{Source: s.Source, Unwrapped: s.Unwrapped}
		}
		if len(a.Findings) > 0 {
			tier = tier.Max(P2)
			reasons := a.Reasons()
			if a.Destructive() {
				if cfg.eff.OpsStrict {
					d.Kind = KindBashDestructive
					interactive = true
					d.Reasons = append(d.Reasons, reasons...)
					return finish(Deny, LayerPreflight, strictMessage)
				}
				mark(KindBashDestructive, "")
			}
			if a.SelfApproval() {
				mark(KindSelfApproval, "")
			}
			d.Reasons = append(d.Reasons, reasons...)
		}
	} else if req.Tool == ToolWriteFile || req.Tool == ToolEditFile {
		// A file tool reaches the same files a redirection does: Airlock's own files and
		// the agent's hook settings are self-approval; start-up files and system files
		// are P2 (not "bash_destructive": nothing is destroyed, and no shell runs).
		if p, _ := reqParams["path"].(string); p != "" {
			a := preflight.Analysis{Findings: preflight.FileWrite(p, req.Context.Cwd, b.preflight)}
			ev.Findings = a.Findings
			if len(a.Findings) > 0 {
				tier = tier.Max(P2) // asks every time, never "always"
				if a.SelfApproval() {
					mark(KindSelfApproval, "")
				}
				d.Reasons = append(d.Reasons, a.Reasons()...)
			}
		}
	} else if req.Tool == ToolReadFile || req.Tool == ToolSearchFiles {
		// Reading credentials is P2 whatever tool does it: a hook's Read runs on the host,
		// where the sandbox hides nothing. A search reads contents only with a regex.
		var p string
		for _, k := range []string{"path", "file_path", "file", "dir", "directory"} { // as the isolation check reads them
			if p, _ = reqParams[k].(string); p != "" {
				break
			}
		}
		regex, _ := reqParams["regex"].(string)
		search := req.Tool == ToolSearchFiles
		if fs := preflight.FileRead(p, req.Context.Cwd, !search || regex != "", search, b.preflight); len(fs) > 0 {
			ev.Findings = fs
			tier = tier.Max(P2) // asks every time, never "always"; not interactive-only
			d.Reasons = append(d.Reasons, preflight.Analysis{Findings: fs}.Reasons()...)
		}
	}

	// 4. Rules.
	forceAsk := false
	m := cfg.rules.Evaluate(req.Tool, subject, segments)
	if req.Tool == ToolExec && m.Action != ActionDeny {
		// A run's own command is a shell command too: what a deny rule for bash refuses
		// is refused in a scheduled run as well.
		if mb := cfg.rules.Evaluate(ToolBash, subject, segments); mb.Action == ActionDeny {
			m = mb
		}
	}
	if m.Rule != nil {
		r := *m.Rule
		ev.Rule = &r
		d.Rule = r.String()
	}
	switch m.Action {
	case ActionDeny:
		return finish(Deny, LayerRule, "denied by rule "+m.Rule.String())
	case ActionAllow:
		if !interactive && !hookRaisedP2 {
			return finish(Allow, LayerRule, "allowed by rule "+m.Rule.String())
		}
		if hookRaisedP2 {
			// A hook asked for a person: no rule answers for them.
			ev.Notes = append(ev.Notes, "rule "+m.Rule.String()+" cannot satisfy a request a hook raised to P2")
		} else {
			ev.Notes = append(ev.Notes, "rule "+m.Rule.String()+" cannot satisfy an interactive-only request")
		}
	case ActionAsk:
		forceAsk = true
		d.Reasons = append(d.Reasons, "rule "+m.Rule.String()+" asks")
	}

	// 5. Tier, task grant and remembered grants.
	verdict, layer := Ask, LayerTier
	switch {
	case interactive:
		d.Reasons = append(d.Reasons, "interactive-only: only a person can allow it, in the window or at a terminal with their login password")
	case tier == P0 && !forceAsk:
		verdict = Allow
	case tier.Rank() <= P1.Rank():
		if taskApproves(req) {
			return finish(Allow, LayerTask, "the task's exact command, approved when the task was created")
		}
		// untrusted honours no remembered grant, except for a known-safe command, which
		// it treats as on-request does (it never asks less than on-request, nor more for
		// the commands its list calls safe).
		if pol != PolicyUntrusted || shell && ev.KnownSafe {
			if g := b.grants.Match(req.Tool, subject, segments, req.Context); g != nil {
				ev.Grant = &g.GrantRecord
				return finish(Allow, LayerGrant, fmt.Sprintf("remembered grant %s (%s %q)", g.ID, g.Scope, g.Pattern))
			}
		}
	}

	// 6. Approval policy.
	switch pol {
	case PolicyUntrusted:
		// untrusted only adds asking: a command off the known-safe list asks even where the
		// tiers would let it run. It never allows what on-request asks about (a P1 tier, an
		// ask rule or a finding asks under both).
		if verdict == Allow && shell && !ev.KnownSafe {
			verdict, layer = Ask, LayerPolicy
			d.Reasons = append(d.Reasons, "approval_policy untrusted: the command is not on the known-safe read-only list")
		}
	case PolicyOnFailure:
		if verdict == Ask && !interactive && !forceAsk && tier == P1 && sandboxed(req.Context.Policy) {
			return finish(Allow, LayerPolicy, "approval_policy on-failure: runs in the sandbox unwatched; a sandbox denial asks to re-run with more access")
		}
	case PolicyNever:
		if verdict == Ask {
			if interactive || tier == P2 {
				what := "a P2 request"
				if interactive {
					what = "an interactive-only request (" + string(d.Kind) + ")"
				}
				return finish(Deny, LayerPolicy, "approval_policy never asks nothing, and "+what+" cannot run without a person")
			}
			return finish(Allow, LayerPolicy, "approval_policy never: P1 runs without asking")
		}
	}
	if verdict == Allow {
		return finish(Allow, layer, "")
	}

	// 7. Reviewer.
	if rev == ReviewerAuto && !interactive && hookRaisedP2 {
		d.Reasons = append(d.Reasons, "a before_tool_use hook raised it to P2, so the person answers it, not the auto reviewer")
	} else if rev == ReviewerAuto && !interactive {
		switch {
		case cfg.reviewer == nil:
			d.Reasons = append(d.Reasons, "auto_review has no [reviewer] command; asking the person")
		case !mode.reviewer:
			ev.Notes = append(ev.Notes, "the auto reviewer was not consulted")
		default:
			out, err := cfg.reviewer.Review(ctx, ReviewInput{Tool: req.Tool, Params: req.Params, Tier: tier, Reasons: d.Reasons, Context: req.Context})
			switch {
			case err != nil:
				d.Reasons = append(d.Reasons, err.Error()+"; asking the person")
			case out.Risk == "critical":
				d.AnsweredBy = "reviewer"
				return finish(Deny, LayerReviewer, "the reviewer rated the risk critical, which is always denied"+suffix(out.Rationale))
			case out.Decision == "allow":
				d.AnsweredBy = "reviewer"
				return finish(Allow, LayerReviewer, "allowed by the reviewer (risk "+out.Risk+")"+suffix(out.Rationale))
			default:
				d.AnsweredBy = "reviewer"
				return finish(Deny, LayerReviewer, "denied by the reviewer (risk "+out.Risk+")"+suffix(out.Rationale))
			}
		}
	}
	return finish(Ask, layer, "")
}

// sandboxed reports whether a policy confines the process (full-access does not; an
// unknown mode is not assumed to).
func sandboxed(p PolicySummary) bool {
	return p.Mode == "read-only" || p.Mode == "workspace-write"
}

// taskApproves reports whether the request is the dispatch task's own, exact command.
func taskApproves(req *Request) bool {
	if len(req.Context.TaskArgv) == 0 {
		return false
	}
	if argv := req.Argv(); argv != nil {
		return slices.Equal(argv, req.Context.TaskArgv)
	}
	return req.Command() == api.ShellJoin(req.Context.TaskArgv)
}

// describe renders a request in one line for events and logs.
func describe(req Request) string {
	return strings.TrimSpace(req.Tool + " " + req.Subject())
}

// summary is a request's one line in a list, a popup's title or a notification: what
// describe says, credentials redacted, made a bounded single line (api.Label). The
// command itself stays exact in the request's parameters.
func summary(req Request) string {
	s := describe(req)
	if len(s) > 16*api.LabelSummary {
		// Redaction need not read past what the label shows; a secret cut here lies
		// beyond the label's end.
		s = strings.ToValidUTF8(s[:16*api.LabelSummary], "")
	}
	return api.Label(redact.String(s), api.LabelSummary)
}

var _ = json.Valid
