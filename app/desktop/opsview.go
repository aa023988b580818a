package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/permission"
)

// The Ops page's façade: a plan's detail and evidence, the diff on demand, approval in
// the window (a click in the window is a person, as for permission requests), reject,
// apply with the token the person holds, verify, and the journal with its chain's
// verification. The calls and their wording are the local API's (app/ops.go).

// opsApproveMu serializes approvals from the window: two clicks (or two windows) at the
// same moment give one token and one clear "already approved", never a database race.
var opsApproveMu sync.Mutex

// opsActionTimeout bounds an approval or a rejection from the window. It is longer than
// statusTimeout: the journal entry that follows the minted token may wait for the
// keyring, and an approval cut off between the two would leave a live token nobody holds.
const opsActionTimeout = 30 * time.Second

// windowJournalLimit is how many of a project's newest journal entries the window shows.
const windowJournalLimit = 200

// OpsPlanDetail is one plan as the Ops page shows it: the plan with its latest diff and
// approval (never the token), every artifact kept for it, and the newest verification.
type OpsPlanDetail struct {
	Plan *ops.PlanView `json:"plan"`
	// Evidence lists every artifact kept for the plan, oldest first: diffs, snapshots
	// before and after, the apply's output, each verify assertion's output.
	Evidence []ops.ArtifactView `json:"evidence"`
	// Verification is the newest verify run (what was checked, pass or fail, the output),
	// rebuilt from the journal and the evidence; nil before the first verify.
	Verification *ops.VerifyResult `json:"verification,omitempty"`
}

// OpsJournalEntry is one journal entry as the window shows it; Detail is the entry's
// JSON detail as an object.
type OpsJournalEntry struct {
	Seq      int64          `json:"seq"`
	ID       uint           `json:"id"`
	PlanID   string         `json:"plan_id,omitempty"`
	Event    string         `json:"event"`
	Status   string         `json:"status,omitempty"`
	Actor    string         `json:"actor,omitempty"`
	At       string         `json:"at"`
	Detail   map[string]any `json:"detail,omitempty"`
	PrevHash string         `json:"prev_hash"`
	Hash     string         `json:"hash"`
}

// OpsJournalView is a project's journal, oldest first (the newest windowJournalLimit
// entries), and its chain's verification. A journal that fails to verify is a report
// (Verification.OK false, with its problems); VerifyError says the check itself could not
// run (the keyring did not answer), in which case Verification is nil.
type OpsJournalView struct {
	Project      string             `json:"project"`
	Entries      []OpsJournalEntry  `json:"entries"`
	Verification *ops.JournalReport `json:"verification,omitempty"`
	VerifyError  string             `json:"verify_error,omitempty"`
}

func (f *Facade) opsService() (*ops.Service, error) {
	if f.core == nil || f.core.Ops == nil {
		return nil, errNoCore
	}
	return f.core.Ops, nil
}

// OpsPlanDetail returns a plan, its evidence and its newest verification. The window
// re-reads it on ops.plan.updated for this plan.
func (f *Facade) OpsPlanDetail(id string) (*OpsPlanDetail, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	return opsPlanDetail(ctx, svc, id)
}

func opsPlanDetail(ctx context.Context, svc *ops.Service, id string) (*OpsPlanDetail, error) {
	p, err := svc.Plan(ctx, id)
	if err != nil {
		return nil, err
	}
	ev, err := svc.Evidence(ctx, id)
	if err != nil {
		return nil, err
	}
	if ev == nil {
		ev = []ops.ArtifactView{}
	}
	out := &OpsPlanDetail{Plan: p, Evidence: ev}
	j, err := svc.OpsJournal(ctx, ops.JournalInput{JournalQuery: ops.JournalQuery{Project: p.Project, PlanID: id, Limit: 10000}})
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
	var last *ops.JournalEntryView
	for i := range entries {
		if entries[i].Event == ops.EventVerified || entries[i].Event == ops.EventVerifyFailed {
			last = &entries[i]
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
	return res
}

// OpsRunDiff runs the plan's own diff command read-only and attaches its output: no
// diff, no approval. It refuses a plan without a diff command (attach one with `airlock
// ops diff PLAN --file F` then).
func (f *Facade) OpsRunDiff(id string) (*ops.DiffResult, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	return svc.OpsDiff(context.Background(), ops.DiffInput{PlanID: id, Run: true, By: permission.ByWindow})
}

// OpsApprovalPrompt is what the person sees before approving: the hash, the exact
// command, snapshot command and working directory, the steps and the diff. It refuses a
// plan that cannot be approved, saying why (no diff, a live token, a changed input).
func (f *Facade) OpsApprovalPrompt(id string) (*ops.ApprovalPrompt, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	return svc.ApprovalPrompt(ctx, id)
}

// OpsApprove approves a plan from the window. A click in the window is a person, so the
// approval is interactive; hash is the plan hash the window showed, and the approval is
// refused unless it is the plan's hash in full. ttl is a Go duration ("10m"; empty means
// 10 minutes, 60 at most). The result carries the single-use token: this is the only time
// it exists outside the person's hands (Airlock keeps its sha256), so the window shows it
// once and never asks for it again. While that token is live, approving again is refused
// and reveals nothing.
func (f *Facade) OpsApprove(id, hash, ttl string) (*ops.ApproveResult, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	hash = strings.ToLower(strings.TrimSpace(hash))
	if len(hash) != 64 {
		return nil, fmt.Errorf("approve plan %s: the window must send the full plan hash it showed (64 hex characters), got %d characters", id, len(hash))
	}
	opsApproveMu.Lock()
	defer opsApproveMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), opsActionTimeout)
	defer cancel()
	return svc.OpsApprove(ctx, ops.ApproveInput{PlanID: id, TTL: ttl, ConfirmHashPrefix: hash},
		ops.Attestation{By: permission.ByWindow, Interactive: true})
}

// OpsReject records the person's "no" with their reason: the plan becomes rejected and
// a live token is revoked.
func (f *Facade) OpsReject(id, reason string) (*ops.PlanView, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, errors.New("say why the plan is rejected: the reason goes into the journal")
	}
	ctx, cancel := context.WithTimeout(context.Background(), opsActionTimeout)
	defer cancel()
	return svc.Reject(ctx, id, reason, permission.ByWindow)
}

// OpsApply redeems the token and runs the approved plan (ops_apply needs
// the single-use token; the window holds it only while it shows it after approving, or
// the person pastes it). It returns when the apply ends; ops.plan.updated says
// "applying" meanwhile. An apply that ran and failed returns its result with the reason
// (the token is spent); a refused one (unknown, used, expired or another plan's token,
// drift) returns an error and nothing ran.
func (f *Facade) OpsApply(id, token string) (*ops.ApplyResult, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, errors.New("paste the approval token: it was shown once when the plan was approved; without it, approve again")
	}
	res, err := svc.OpsApply(context.Background(), ops.ApplyInput{PlanID: id, Token: token, ApplyOptions: ops.ApplyOptions{By: permission.ByWindow}})
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
func (f *Facade) OpsVerify(id string) (*ops.VerifyResult, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	return svc.OpsVerify(context.Background(), ops.VerifyInput{PlanID: id, By: permission.ByWindow})
}

// OpsProjects lists the projects that have a journal.
func (f *Facade) OpsProjects() ([]string, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	list, err := svc.Projects(ctx)
	if list == nil && err == nil {
		list = []string{}
	}
	return list, err
}

// OpsJournal is a project's journal (its newest entries, oldest first) and the check of
// its hash chain and authentication (`airlock ops journal --verify`). The window re-reads
// it on ops.journal.appended.
func (f *Facade) OpsJournal(project string) (*OpsJournalView, error) {
	svc, err := f.opsService()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(project) == "" {
		return nil, errors.New("choose a project to read its journal")
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	out := &OpsJournalView{Project: project, Entries: []OpsJournalEntry{}}
	q := ops.JournalQuery{Project: project, Limit: windowJournalLimit}
	rep, verr := svc.VerifyJournal(ctx, project)
	if verr != nil {
		// Without the report there is no last seq: read them all and keep the newest.
		out.VerifyError = verr.Error()
		q.Limit = 10000
	} else {
		out.Verification = &rep
		q.AfterSeq = max(0, rep.LastSeq-windowJournalLimit)
	}
	j, err := svc.OpsJournal(ctx, ops.JournalInput{JournalQuery: q})
	if err != nil {
		return nil, err
	}
	for _, e := range j.Entries {
		v := OpsJournalEntry{Seq: e.Seq, ID: e.ID, PlanID: e.PlanID, Event: e.Event, Status: string(e.Status), Actor: e.Actor,
			At: e.At, PrevHash: e.PrevHash, Hash: e.Hash}
		if len(e.Detail) > 0 {
			var m map[string]any
			if json.Unmarshal(e.Detail, &m) == nil {
				v.Detail = m
			} else {
				v.Detail = map[string]any{"text": string(e.Detail)}
			}
		}
		out.Entries = append(out.Entries, v)
	}
	if len(out.Entries) > windowJournalLimit {
		out.Entries = slices.Clone(out.Entries[len(out.Entries)-windowJournalLimit:])
	}
	return out, nil
}
