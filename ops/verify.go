package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/redact"
)

// AssertionResult is the evidence of one assertion.
type AssertionResult = api.AssertionResult

// VerifyResult is the outcome of [Service.Verify].
type VerifyResult = api.VerifyResult

// ConfirmResult is what became of a commit-confirm plan's confirm ([api.ConfirmResult]).
type ConfirmResult = api.ConfirmResult

// Confirm outcomes; each is also the journal event that records it.
const (
	ConfirmSent     = api.ConfirmSent
	ConfirmFailed   = api.ConfirmFailed
	ConfirmWithheld = api.ConfirmWithheld
)

// verifiable are the statuses Verify runs in (re-verifying is allowed).
var verifiable = []Status{StatusApplied, StatusVerified, StatusVerifyFailed}

// Verify runs the plan's assertions read-only, each re-checked against the read-only
// allowlist, records each one's evidence (output, its sha256, exit status) and sets the
// plan verified or verify_failed.
func (s *Service) Verify(ctx context.Context, planID, by string) (*VerifyResult, error) {
	rec, err := s.loadPlan(ctx, s.db, planID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(verifiable, rec.Status) {
		return nil, &StatusError{PlanID: rec.ID, Op: "verify", Status: rec.Status, Hint: "verify runs after a successful apply"}
	}
	p, err := s.intactPlan(rec)
	if err != nil {
		return nil, err
	}
	out := &VerifyResult{PlanID: rec.ID, Status: StatusVerified}
	for i, a := range p.Verify {
		r := AssertionResult{Index: i, Name: a.Name, Command: redact.String(a.Command), WantExit: a.WantExit(), ExpectText: a.ExpectText, ExitCode: -1}
		cmd, perr := ParseReadOnlyCommand(a.Command)
		if perr != nil {
			r.Reason = "refused: " + perr.Error()
		} else {
			res, rerr := s.runner.Run(ctx, RunSpec{Command: Command{Argv: cmd.Argv}, Dir: p.Workdir, Timeout: s.readTO,
				OutputCap: s.outCap, ReadOnly: true, Network: p.Network, Purpose: "verify", PlanID: rec.ID})
			raw := combinedOutput(res)
			r.ExitCode, r.SHA256, r.Output = res.ExitCode, sha256Hex(raw), storedText(raw)
			switch {
			case rerr != nil:
				r.ExitCode, r.Reason = -1, "could not run: "+redact.String(rerr.Error())
			case res.TimedOut:
				r.Reason = fmt.Sprintf("timed out after %s", s.readTO)
			case res.ExitCode != a.WantExit():
				r.Reason = fmt.Sprintf("exit status %d, expected %d", res.ExitCode, a.WantExit())
			case a.ExpectText != "" && !bytes.Contains(res.Stdout, []byte(a.ExpectText)):
				r.Reason = fmt.Sprintf("output does not contain %q", a.ExpectText)
			default:
				r.Passed = true
			}
		}
		if !r.Passed {
			out.Status = StatusVerifyFailed
		}
		art := &Artifact{PlanID: rec.ID, Kind: ArtifactVerify, Source: r.Command, ExitCode: r.ExitCode, SHA256: r.SHA256,
			Size: int64(len(r.Output)), Content: r.Output, CreatedAt: s.nowUTC()}
		if r.SHA256 == "" {
			art.SHA256 = sha256Hex(nil)
			art.Content = r.Reason
		}
		if err := s.db.WithContext(ctx).Create(art).Error; err != nil {
			return nil, fmt.Errorf("verify plan %s: store evidence: %w", rec.ID, err)
		}
		out.Assertions = append(out.Assertions, r)
	}
	// Only the first verify after the apply may confirm: a re-verify, or one after a
	// failed verify, finds the device rolled back (or about to be).
	confirming := !p.Confirm.IsZero() && rec.Status == StatusApplied
	if confirming {
		// The one confirm belongs to the verify that moves the plan out of applied:
		// of concurrent verifies, exactly one.
		won, err := s.setStatus(ctx, rec, out.Status, StatusApplied)
		if err != nil {
			return nil, err
		}
		confirming = won
	}
	if !confirming {
		if _, err := s.setStatus(ctx, rec, out.Status, verifiable...); err != nil {
			return nil, err
		}
	}
	event := EventVerified
	if out.Status == StatusVerifyFailed {
		event = EventVerifyFailed
	}
	summary := make([]map[string]any, len(out.Assertions))
	for i, r := range out.Assertions {
		summary[i] = map[string]any{"index": r.Index, "command": r.Command, "passed": r.Passed, "exit_code": r.ExitCode,
			"output_sha256": r.SHA256, "reason": r.Reason}
	}
	if _, err := s.appendJournal(ctx, journalRecord{Project: rec.Project, PlanID: rec.ID, Event: event, Status: out.Status,
		Actor: by, Detail: map[string]any{"assertions": summary}}); err != nil {
		return nil, err
	}
	if confirming {
		out.Confirm = s.confirm(ctx, rec, p, out.Status == StatusVerified, by)
		out.Status = rec.Status
	}
	return out, nil
}

// confirm ends a commit-confirm apply: it runs the plan's confirm command when every
// assertion passed and the device's rollback window (counted from the apply's start,
// as journaled) has not run out, and otherwise withholds it so the device rolls back
// by itself. Either way the outcome is journaled; a confirm that fails or is withheld
// leaves the plan verify_failed.
func (s *Service) confirm(ctx context.Context, rec *PlanRecord, p *OperationPlan, passed bool, by string) *ConfirmResult {
	bg := context.WithoutCancel(ctx)
	window := time.Duration(p.ConfirmWithinSeconds) * time.Second
	r := &ConfirmResult{Command: p.Confirm.String(), ExitCode: -1}
	started, err := s.applyStartedAt(bg, rec.ID)
	switch {
	case err != nil:
		r.Outcome, r.Reason = ConfirmWithheld, "the apply's start is not in the journal ("+err.Error()+"): the rollback window cannot be checked, so nothing was sent and the device rolls back by itself"
	case !passed:
		r.Deadline = started.Add(window)
		r.Outcome, r.Reason = ConfirmWithheld, fmt.Sprintf("an assertion failed: nothing was sent, and the device rolls back by itself by %s", r.Deadline.Format(time.RFC3339))
	case !s.nowUTC().Before(started.Add(window)):
		r.Deadline = started.Add(window)
		r.Outcome, r.Reason = ConfirmWithheld, fmt.Sprintf("the rollback window (%s from the apply's start) ended at %s: the device has rolled back by itself, and a late confirm could confirm another pending commit", window, r.Deadline.Format(time.RFC3339))
	default:
		r.Deadline = started.Add(window)
		// The confirm runs under the approval, as the apply did: on the approved copies.
		spec, perr := s.confirmSpec(bg, rec, p)
		if perr != nil {
			r.Outcome, r.Reason = ConfirmWithheld, fmt.Sprintf("the confirm cannot run the bytes that were approved (%s): nothing was sent, and the device rolls back by itself by %s",
				redact.String(perr.Error()), r.Deadline.Format(time.RFC3339))
			break
		}
		res, rerr := s.runner.Run(ctx, spec)
		raw := combinedOutput(res)
		r.ExitCode, r.SHA256, r.Output = res.ExitCode, sha256Hex(raw), storedText(raw)
		switch {
		case rerr != nil:
			r.ExitCode, r.Reason = -1, "could not run: "+redact.String(rerr.Error())
		case res.TimedOut:
			r.Reason = "timed out"
		case res.ExitCode != 0:
			r.Reason = fmt.Sprintf("exited with status %d", res.ExitCode)
		}
		r.Outcome = ConfirmSent
		if r.Reason != "" {
			r.Outcome, r.Reason = ConfirmFailed, r.Reason+": the device rolls back by itself by "+r.Deadline.Format(time.RFC3339)
		}
		art := &Artifact{PlanID: rec.ID, Kind: ArtifactConfirm, Source: redact.String(r.Command), ExitCode: r.ExitCode, TimedOut: res.TimedOut,
			Truncated: res.Truncated, Size: int64(len(raw)), SHA256: sha256Hex(raw), Content: r.Output, CreatedAt: s.nowUTC()}
		if err := s.db.WithContext(bg).Create(art).Error; err != nil {
			s.log.Error("ops: could not store the confirm's output", "plan", rec.ID, "err", err)
		}
	}
	if r.Outcome != ConfirmSent {
		if _, err := s.setStatus(bg, rec, StatusVerifyFailed, StatusVerified, StatusVerifyFailed); err != nil {
			s.log.Error("ops: could not record the withheld confirm", "plan", rec.ID, "err", err)
		}
	}
	detail := map[string]any{"command": r.Command, "exit_code": r.ExitCode, "deadline": r.Deadline.Format(time.RFC3339Nano)}
	if r.SHA256 != "" {
		detail["output_sha256"] = r.SHA256
	}
	if r.Reason != "" {
		detail["reason"] = r.Reason
	}
	if _, err := s.appendJournal(bg, journalRecord{Project: rec.Project, PlanID: rec.ID, Event: string(r.Outcome), Status: rec.Status,
		Actor: by, Detail: detail}); err != nil {
		s.log.Error("ops: could not journal the confirm", "plan", rec.ID, "err", err)
	}
	return r
}

// confirmSpec is the run of p's confirm: on the approved copies of the inputs it names,
// from the token the apply spent. It fails when the confirm reads a file that is not
// pinned (a plan approved before confirms were checked) or a copy is not intact.
func (s *Service) confirmSpec(ctx context.Context, rec *PlanRecord, p *OperationPlan) (RunSpec, error) {
	spec := RunSpec{Command: p.Confirm, Dir: p.Workdir, Timeout: s.readTO, OutputCap: s.outCap, Network: p.Network,
		Purpose: "confirm", PlanID: rec.ID}
	if err := checkReads(p, approvedCommand{field: "confirm", name: "confirm", cmd: p.Confirm}); err != nil {
		return spec, err
	}
	var toks []ApprovalToken
	if err := s.db.WithContext(ctx).Where("plan_id = ? AND plan_hash = ? AND used_at IS NOT NULL", rec.ID, rec.Hash).
		Order("used_at DESC").Limit(1).Find(&toks).Error; err != nil {
		return spec, fmt.Errorf("read the approval the apply spent: %w", err)
	}
	if len(toks) == 0 {
		return spec, errors.New("no spent approval of this plan is recorded")
	}
	staged, err := s.inputs.staged(decodeDigests(toks[0].Inputs))
	if err != nil {
		return spec, err
	}
	spec.Inputs = pinnedFor(p.Confirm, p.Workdir, staged)
	if _, err := spec.CommandFor(func(in StagedInput) string { return in.Copy }); err != nil {
		return spec, err
	}
	return spec, nil
}

// applyStartedAt is when the plan's latest apply started, as its journal says.
func (s *Service) applyStartedAt(ctx context.Context, planID string) (time.Time, error) {
	var es []JournalEntry
	if err := s.db.WithContext(ctx).Where("plan_id = ? AND event = ?", planID, EventApplyStarted).Order("seq DESC").Limit(1).Find(&es).Error; err != nil {
		return time.Time{}, err
	}
	if len(es) == 0 {
		return time.Time{}, errors.New("no apply_started entry")
	}
	return time.Parse(time.RFC3339Nano, es[0].At)
}
