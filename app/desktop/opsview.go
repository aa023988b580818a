package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app"
	"github.com/airlock-app/airlock/ops"
)

// The Ops page's façade: a plan's detail and evidence, the diff on demand, approval in
// the window (a click in the window is a person, as for permission requests), reject,
// apply with the token the person holds, verify, and the journal with its chain's
// verification. Each is the core's operation (app/ops.go) with the window's Caller, the
// same the local API's routes call.

// windowJournalLimit is how many of a project's newest journal entries the window shows.
const windowJournalLimit = 200

func (f *Facade) opsService() (*ops.Service, error) {
	if f.core == nil || f.core.Ops == nil {
		return nil, errNoCore
	}
	return f.core.Ops, nil
}

// OpsPlanDetail returns a plan, its evidence and its newest verification. The window
// re-reads it on ops.plan.updated for this plan.
func (f *Facade) OpsPlanDetail(id string) (*api.PlanDetail, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	p, err := f.core.OpsPlan(app.WindowCaller(), id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	ev, err := svc.Evidence(ctx, id)
	if err != nil {
		return nil, err
	}
	if ev == nil {
		ev = []api.PlanArtifactView{}
	}
	out := &api.PlanDetail{Plan: p, Evidence: ev}
	j, err := f.core.OpsJournal(app.WindowCaller(), api.JournalInput{Project: p.Project, PlanID: id, Limit: 10000})
	if err != nil {
		return nil, err
	}
	out.Verification = lastVerification(p, j.Entries, ev)
	return out, nil
}

// lastVerification rebuilds the newest verify run: pass or fail and the reason of each
// assertion come from its journal entry, the output from the verify artifacts it stored
// (the last len(assertions) of them, in order). A detail it cannot read gives nil.
func lastVerification(p *ops.PlanView, entries []ops.JournalEntryView, ev []ops.ArtifactView) *ops.VerifyResult {
	var last, confirm *ops.JournalEntryView
	for i := range entries {
		switch entries[i].Event {
		case ops.EventVerified, ops.EventVerifyFailed:
			last, confirm = &entries[i], nil
		case ops.EventConfirmed, ops.EventConfirmFailed, ops.EventConfirmWithheld:
			if last != nil {
				confirm = &entries[i]
			}
		}
	}
	if last == nil {
		return nil
	}
	var detail struct {
		Assertions []struct {
			Index    int    `json:"index"`
			Command  string `json:"command"`
			Passed   bool   `json:"passed"`
			ExitCode int    `json:"exit_code"`
			SHA256   string `json:"output_sha256"`
			Reason   string `json:"reason"`
		} `json:"assertions"`
	}
	if err := json.Unmarshal(last.Detail, &detail); err != nil {
		return nil
	}
	var outputs []ops.ArtifactView
	for _, a := range ev {
		if a.Kind == ops.ArtifactVerify {
			outputs = append(outputs, a)
		}
	}
	if len(outputs) > len(detail.Assertions) {
		outputs = outputs[len(outputs)-len(detail.Assertions):]
	}
	res := &ops.VerifyResult{PlanID: p.ID, Status: ops.Status(last.Status), Assertions: []ops.AssertionResult{}}
	for i, a := range detail.Assertions {
		r := ops.AssertionResult{Index: a.Index, Command: a.Command, Passed: a.Passed, ExitCode: a.ExitCode, SHA256: a.SHA256, Reason: a.Reason}
		if a.Index >= 0 && a.Index < len(p.Plan.Verify) {
			spec := p.Plan.Verify[a.Index]
			r.Name, r.ExpectText, r.WantExit = spec.Name, spec.ExpectText, spec.WantExit()
		}
		// The run stored one artifact per assertion, in order, just before its journal
		// entry; an output is shown only when it is that assertion's (same command, same
		// sha256 of the output as produced).
		if len(outputs) == len(detail.Assertions) {
			if o := outputs[i]; o.Source == a.Command && (a.SHA256 == "" || o.SHA256 == a.SHA256) {
				r.Output = o.Content
			}
		}
		res.Assertions = append(res.Assertions, r)
	}
	if confirm != nil {
		res.Confirm, res.Status = confirmFromJournal(confirm), ops.Status(confirm.Status)
	}
	return res
}

// confirmFromJournal rebuilds a commit-confirm plan's confirm from its journal entry
// (the outcome is the event; the output stays in the evidence).
func confirmFromJournal(e *ops.JournalEntryView) *ops.ConfirmResult {
	var d struct {
		Command  string `json:"command"`
		ExitCode int    `json:"exit_code"`
		SHA256   string `json:"output_sha256"`
		Reason   string `json:"reason"`
		Deadline string `json:"deadline"`
	}
	_ = json.Unmarshal(e.Detail, &d) // an edited detail shows what it still says
	r := &ops.ConfirmResult{Outcome: api.ConfirmOutcome(e.Event), Command: d.Command, ExitCode: d.ExitCode, SHA256: d.SHA256, Reason: d.Reason}
	r.Deadline, _ = time.Parse(time.RFC3339Nano, d.Deadline)
	return r
}

// OpsRunDiff runs the plan's own diff command read-only and attaches its output: no
// diff, no approval. It refuses a plan without a diff command (attach one with `airlock
// ops diff PLAN --file F` then).
func (f *Facade) OpsRunDiff(id string) (*api.DiffResult, error) {
	if _, err := f.opsService(); err != nil {
		return nil, err
	}
	return f.core.OpsDiff(app.WindowCaller(), id, api.DiffInput{Run: true})
}

// OpsApprovalPrompt is what the person sees before approving: the hash, the exact
// command, snapshot command and working directory, the steps and the diff. It refuses a
// plan that cannot be approved, saying why (no diff, a live token, a changed input).
func (f *Facade) OpsApprovalPrompt(id string) (*api.ApprovalPrompt, error) {
	if _, err := f.opsService(); err != nil {
		return nil, err
	}
	return f.core.OpsApprovalPrompt(app.WindowCaller(), id)
}

// OpsApprove approves a plan from the window. A click in the window is a person, so the
// approval is interactive; hash is the plan hash the window showed, and the approval is
// refused unless it is the plan's hash in full. ttl is a Go duration ("10m"; empty means
// 10 minutes, 60 at most). The result carries the single-use token: this is the only time
// it exists outside the person's hands (Airlock keeps its sha256), so the window shows it
// once and never asks for it again. While that token is live, approving again is refused
// and reveals nothing.
func (f *Facade) OpsApprove(id, hash, ttl string) (*api.ApproveResult, error) {
	if _, err := f.opsService(); err != nil {
		return nil, err
	}
	return f.core.OpsApprove(app.WindowCaller(), id, api.ApproveBody{TTL: ttl, ConfirmHashPrefix: hash})
}

// OpsReject records the person's "no" with their reason: the plan becomes rejected and
// a live token is revoked.
func (f *Facade) OpsReject(id, reason string) (*api.PlanView, error) {
	if _, err := f.opsService(); err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, errors.New("say why the plan is rejected: the reason goes into the journal")
	}
	return f.core.OpsReject(app.WindowCaller(), id, api.RejectBody{Reason: reason})
}

// OpsApply redeems the token and runs the approved plan (ops_apply needs
// the single-use token; the window holds it only while it shows it after approving, or
// the person pastes it). It returns when the apply ends; ops.plan.updated says
// "applying" meanwhile. An apply that ran and failed returns its result with the reason
// (the token is spent); a refused one (unknown, used, expired or another plan's token,
// drift) returns an error and nothing ran.
func (f *Facade) OpsApply(id, token string) (*api.ApplyResult, error) {
	if _, err := f.opsService(); err != nil {
		return nil, err
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, errors.New("paste the approval token: it was shown once when the plan was approved; without it, approve again")
	}
	return f.core.OpsApply(app.WindowCaller(), id, api.ApplyInput{Token: token})
}

// OpsVerify runs the plan's read-only assertions and records the evidence.
func (f *Facade) OpsVerify(id string) (*api.VerifyResult, error) {
	if _, err := f.opsService(); err != nil {
		return nil, err
	}
	return f.core.OpsVerify(app.WindowCaller(), id, api.VerifyInput{})
}

// OpsProjects lists the projects that have a journal.
func (f *Facade) OpsProjects() ([]string, error) {
	if _, err := f.opsService(); err != nil {
		return nil, err
	}
	return f.core.OpsProjects(app.WindowCaller())
}

// OpsJournal is a project's journal (its newest entries, oldest first) and the check of
// its hash chain and authentication (`airlock ops journal --verify`). A journal that
// fails to verify is a report (Verification.OK false, with its problems); VerifyError
// says the check itself could not run (the keyring did not answer), and the entries are
// shown anyway. The window re-reads it on ops.journal.appended.
func (f *Facade) OpsJournal(project string) (*api.JournalPage, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(project) == "" {
		return nil, errors.New("choose a project to read its journal")
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	in := api.JournalInput{Project: project, Limit: windowJournalLimit}
	rep, verr := svc.VerifyJournal(ctx, project)
	if verr == nil {
		in.AfterSeq = max(0, rep.LastSeq-windowJournalLimit)
	} else {
		// Without the report there is no last seq: read them all and keep the newest.
		in.Limit = 10000
	}
	out, err := f.core.OpsJournal(app.WindowCaller(), in)
	if err != nil {
		return nil, err
	}
	if verr != nil {
		out.VerifyError = verr.Error()
	} else {
		out.Verification = &rep
	}
	if out.Entries == nil {
		out.Entries = []api.JournalEntryView{}
	}
	if len(out.Entries) > windowJournalLimit {
		out.Entries = slices.Clone(out.Entries[len(out.Entries)-windowJournalLimit:])
	}
	return out, nil
}
