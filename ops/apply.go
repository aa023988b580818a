package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/deadowner"
	"github.com/airlock-app/airlock/redact"
)

// ApplyOptions are what the caller presents besides the token. The command, snapshot
// command and working directory, when given, must equal the approved ones exactly (an
// agent that means to run something else is refused before the token is spent).
type ApplyOptions = api.ApplyOptions

// ApplyResult is the outcome of an apply that ran.
type ApplyResult = api.ApplyResult

// ApplyError is returned (with the result) when the apply ran, or began, and failed. The
// token is spent: a retry needs a new diff and a new approval.
type ApplyError struct {
	PlanID string
	Reason string
}

func (e *ApplyError) Error() string {
	return fmt.Sprintf("apply plan %s failed: %s; the token is spent, attach a fresh diff and approve again to retry", e.PlanID, e.Reason)
}

// Apply redeems the token and runs the plan. Before anything runs it checks, in order:
// the token exists (ErrTokenUnknown), belongs to this plan (ErrTokenOtherPlan), is unused
// (ErrTokenUsed), not revoked (the plan was rejected or superseded: StatusError), not
// expired (ErrTokenExpired), the plan is approved (StatusError), and nothing drifted
// from what was approved (DriftError naming apply_command, snapshot_command, workdir or
// plan). Then one conditional UPDATE redeems the token; only the caller that wins it runs
// anything. The apply is journaled as started before the command runs and as finished or
// failed after; the snapshot command runs read-only before and after.
func (s *Service) Apply(ctx context.Context, planID, token string, opt ApplyOptions) (*ApplyResult, error) {
	th := tokenHash(token)
	var toks []ApprovalToken
	if err := s.db.WithContext(ctx).Where("token_hash = ?", th).Limit(1).Find(&toks).Error; err != nil {
		return nil, fmt.Errorf("apply plan %s: read token: %w", planID, err)
	}
	rec, err := s.loadPlan(ctx, s.db, planID)
	if err != nil {
		return nil, err
	}
	refuse := func(e error, reason string) (*ApplyResult, error) {
		s.journalRefusal(ctx, rec, EventApplyRefused, opt.By, reason)
		return nil, fmt.Errorf("apply plan %s: %w", rec.ID, e)
	}
	if len(toks) == 0 {
		return refuse(ErrTokenUnknown, "unknown token")
	}
	tok := toks[0]
	now := s.nowUTC().UnixNano()
	switch {
	case tok.PlanID != rec.ID:
		return refuse(ErrTokenOtherPlan, "token of plan "+tok.PlanID+" presented")
	case tok.UsedAt != nil:
		return refuse(ErrTokenUsed, "token already used")
	case tok.RevokedAt != nil:
		return refuse(&StatusError{PlanID: rec.ID, Op: "apply", Status: rec.Status, Hint: "its approval was revoked when it was rejected or superseded"},
			"token revoked (plan "+string(rec.Status)+")")
	case tok.ExpiresAt <= now:
		if rec.Status == StatusApproved {
			if err := s.expire(ctx, rec); err != nil {
				return nil, err
			}
		}
		return refuse(ErrTokenExpired, "token expired")
	case rec.Status != StatusApproved:
		return refuse(&StatusError{PlanID: rec.ID, Op: "apply", Status: rec.Status, Hint: "only an approved plan can be applied"},
			"plan is "+string(rec.Status))
	}
	p, derr := checkDrift(rec, &tok, opt)
	if derr != nil {
		return refuse(derr, derr.Error())
	}
	// What runs reads the approved copies; a copy that is not intact, or an input the
	// command does not name, refuses before the token is spent.
	staged, err := s.inputs.staged(decodeDigests(tok.Inputs))
	if err != nil {
		return refuse(err, err.Error())
	}
	applySpec := RunSpec{Command: p.Apply, Dir: p.Workdir, Network: p.Network, Purpose: "apply", PlanID: rec.ID, Inputs: pinnedFor(p.Apply, p.Workdir, staged)}
	if err := checkApplyReads(p); err != nil {
		return refuse(err, err.Error())
	}
	for _, ac := range approvedCommands(p) {
		spec := RunSpec{Command: ac.cmd, Dir: p.Workdir, Inputs: pinnedFor(ac.cmd, p.Workdir, staged)}
		if _, err := spec.CommandFor(func(in StagedInput) string { return in.Copy }); err != nil {
			return refuse(err, err.Error())
		}
	}

	// Redeem: the one conditional UPDATE that decides who runs.
	won, err := s.redeem(ctx, th, rec.ID, tok.PlanHash, now, opt.By)
	if err != nil {
		return nil, fmt.Errorf("apply plan %s: redeem token: %w", rec.ID, err)
	}
	if !won {
		var again ApprovalToken
		if err := s.db.WithContext(ctx).First(&again, "token_hash = ?", th).Error; err != nil {
			return refuse(ErrTokenUnknown, "token vanished while redeeming")
		}
		switch {
		case again.UsedAt != nil:
			return refuse(ErrTokenUsed, "token already used")
		case again.RevokedAt != nil:
			return refuse(&StatusError{PlanID: rec.ID, Op: "apply", Status: StatusSuperseded, Hint: "its approval was revoked"}, "token revoked")
		default:
			return refuse(ErrTokenExpired, "token expired")
		}
	}

	// From here on the token is spent, whatever happens.
	bg := context.WithoutCancel(ctx)
	st := s.db.WithContext(bg).Model(&PlanRecord{}).Where("id = ? AND status = ? AND hash = ?", rec.ID, StatusApproved, tok.PlanHash).
		Updates(map[string]any{"status": StatusApplying, "applier_pid": os.Getpid(), "updated_at": s.nowUTC()})
	if st.Error != nil {
		return nil, fmt.Errorf("apply plan %s: mark applying: %w", rec.ID, st.Error)
	}
	if st.RowsAffected != 1 {
		fresh, _ := s.loadPlan(bg, s.db, rec.ID)
		if fresh != nil {
			rec = fresh
		}
		return refuse(&StatusError{PlanID: rec.ID, Op: "apply", Status: rec.Status, Hint: "it changed status while the token was redeemed; the token is spent"},
			"plan changed status during redeem")
	}
	s.markApplying(rec.ID, true)
	defer s.markApplying(rec.ID, false)
	rec.Status = StatusApplying
	s.publishPlan(rec)

	timeout := s.applyTO
	if p.TimeoutSeconds > 0 {
		timeout = time.Duration(p.TimeoutSeconds) * time.Second
	}
	if _, err := s.appendJournal(bg, journalRecord{Project: rec.Project, PlanID: rec.ID, Event: EventApplyStarted, Status: StatusApplying,
		Actor: opt.By, Detail: map[string]any{"hash": rec.Hash, "apply": p.Apply.String(), "snapshot": p.Snapshot.String(),
			"workdir": p.Workdir, "timeout": timeout.String(), "pid": os.Getpid(), "approval_ref": th[:12], "inputs": staged}}); err != nil {
		// Never run what the journal cannot record.
		s.finishApply(bg, rec, &ApplyResult{PlanID: rec.ID, PlanHash: rec.Hash, Status: StatusFailed, ExitCode: -1,
			Reason: "the journal could not record the start: nothing ran"}, opt.By)
		return nil, fmt.Errorf("apply plan %s: nothing ran: %w", rec.ID, err)
	}

	out := &ApplyResult{PlanID: rec.ID, PlanHash: rec.Hash, ExitCode: -1}
	if !p.Snapshot.IsZero() {
		art, ok := s.snapshot(ctx, rec.ID, p, staged, ArtifactSnapshotBefore)
		out.SnapshotBefore = artifactView(art)
		if !ok {
			out.Status, out.Reason = StatusFailed, "the snapshot before the apply failed: nothing was applied"
			s.finishApply(bg, rec, out, opt.By)
			return out, &ApplyError{PlanID: rec.ID, Reason: out.Reason}
		}
	}
	applySpec.Timeout, applySpec.OutputCap = timeout, s.outCap
	run, runErr := s.runner.Run(ctx, applySpec)
	raw := combinedOutput(run)
	outArt := &Artifact{PlanID: rec.ID, Kind: ArtifactApplyOutput, Source: redact.String(p.Apply.String()), ExitCode: run.ExitCode,
		TimedOut: run.TimedOut, Truncated: run.Truncated, Size: int64(len(raw)), SHA256: sha256Hex(raw), Content: storedText(raw),
		CreatedAt: s.nowUTC()}
	out.ExitCode, out.TimedOut, out.Duration = run.ExitCode, run.TimedOut, run.Duration
	switch {
	case runErr != nil:
		out.ExitCode = -1
		out.Reason = "the command could not run: " + redact.String(runErr.Error())
		outArt.Content = out.Reason
	case run.TimedOut:
		out.Reason = fmt.Sprintf("timed out after %s", timeout)
	case ctx.Err() != nil:
		out.Reason = "cancelled while running (the command was killed): " + ctx.Err().Error()
	case run.ExitCode != 0:
		out.Reason = fmt.Sprintf("exited with status %d", run.ExitCode)
	}
	if err := s.db.WithContext(bg).Create(outArt).Error; err != nil {
		s.log.Error("ops: could not store the apply output", "plan", rec.ID, "err", err)
	}
	out.Output = artifactView(outArt)
	if !p.Snapshot.IsZero() {
		art, _ := s.snapshot(bg, rec.ID, p, staged, ArtifactSnapshotAfter)
		out.SnapshotAfter = artifactView(art)
	}
	out.Status = StatusApplied
	if out.Reason != "" {
		out.Status = StatusFailed
	}
	s.finishApply(bg, rec, out, opt.By)
	if out.Status == StatusFailed {
		return out, &ApplyError{PlanID: rec.ID, Reason: out.Reason}
	}
	return out, nil
}

// redeem spends the token with one conditional UPDATE and reports whether this caller
// won it. Whatever the number of concurrent callers, at most one wins.
func (s *Service) redeem(ctx context.Context, tokenHash, planID, planHash string, now int64, by string) (bool, error) {
	res := s.db.WithContext(ctx).Exec(`UPDATE ops_approval_tokens SET used_at = ?, used_by = ?
		WHERE token_hash = ? AND plan_id = ? AND plan_hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?`,
		now, redact.String(by), tokenHash, planID, planHash, now)
	if res.Error != nil {
		return false, res.Error
	}
	return res.RowsAffected == 1, nil
}

// checkDrift compares the stored plan and the caller's presentation with what was approved.
func checkDrift(rec *PlanRecord, tok *ApprovalToken, opt ApplyOptions) (*OperationPlan, *DriftError) {
	p, err := decodeSpec(rec)
	if err != nil {
		return nil, &DriftError{Field: FieldPlan, Detail: err.Error()}
	}
	c := components(p)
	switch {
	case c.Apply != tok.ApplyHash:
		return nil, &DriftError{Field: FieldApplyCommand, Detail: "the stored apply command is not the one approved"}
	case c.Snapshot != tok.SnapshotHash:
		return nil, &DriftError{Field: FieldSnapshotCommand, Detail: "the stored snapshot command is not the one approved"}
	case c.Workdir != tok.WorkdirHash:
		return nil, &DriftError{Field: FieldWorkdir, Detail: "the stored working directory is not the one approved"}
	case PlanHash(p) != tok.PlanHash || rec.Hash != tok.PlanHash:
		return nil, &DriftError{Field: FieldPlan, Detail: "the stored plan no longer hashes to the approved hash (a field other than the commands and working directory changed)"}
	}
	if opt.ApplyCommand != nil && !opt.ApplyCommand.Equal(p.Apply) {
		return nil, &DriftError{Field: FieldApplyCommand, Detail: fmt.Sprintf("the command presented (%s) is not the approved one (%s)",
			redact.String(opt.ApplyCommand.String()), p.Apply.String())}
	}
	if opt.SnapshotCommand != nil && !opt.SnapshotCommand.Equal(p.Snapshot) {
		return nil, &DriftError{Field: FieldSnapshotCommand, Detail: fmt.Sprintf("the snapshot command presented (%s) is not the approved one (%s)",
			redact.String(opt.SnapshotCommand.String()), p.Snapshot.String())}
	}
	if opt.Workdir != "" && filepath.Clean(opt.Workdir) != p.Workdir {
		return nil, &DriftError{Field: FieldWorkdir, Detail: fmt.Sprintf("the working directory presented (%s) is not the approved one (%s)", opt.Workdir, p.Workdir)}
	}
	real, err := resolveDir(p.Workdir)
	if err != nil {
		return nil, &DriftError{Field: FieldWorkdir, Detail: fmt.Sprintf("the approved working directory %s %v", p.Workdir, err)}
	}
	if real != p.Workdir {
		return nil, &DriftError{Field: FieldWorkdir, Detail: fmt.Sprintf("the approved working directory %s now resolves to %s (a symlink changed)", p.Workdir, real)}
	}
	if tok.WorkdirID != "" {
		id, err := dirIdentity(p.Workdir)
		if err != nil {
			return nil, &DriftError{Field: FieldWorkdir, Detail: fmt.Sprintf("the approved working directory %s cannot be read: %v", p.Workdir, err)}
		}
		if id != tok.WorkdirID {
			return nil, &DriftError{Field: FieldWorkdir, Detail: fmt.Sprintf("%s is not the directory that was approved (device:inode %s, now %s): "+
				"another directory was moved to its path; put the approved one back, or attach a fresh diff and approve again", p.Workdir, tok.WorkdirID, id)}
		}
	}
	inputs, err := digestInputs(p.Workdir, p.Inputs)
	if err != nil {
		var de *DriftError
		if errors.As(err, &de) {
			return nil, de
		}
		return nil, &DriftError{Field: FieldInputs, Detail: err.Error()}
	}
	if d := compareDigests(decodeDigests(tok.Inputs), inputs, "since the plan was approved"); d != nil {
		return nil, d
	}
	return p, nil
}

// snapshot runs the plan's snapshot command read-only and stores its output. What it
// runs from the workdir (its program, a script) is the approved copy among staged.
func (s *Service) snapshot(ctx context.Context, planID string, p *OperationPlan, staged []StagedInput, kind string) (*Artifact, bool) {
	res, err := s.runner.Run(ctx, RunSpec{Command: p.Snapshot, Dir: p.Workdir, Timeout: s.readTO, OutputCap: s.outCap,
		ReadOnly: true, Network: p.Network, Purpose: "snapshot", PlanID: planID, Inputs: pinnedFor(p.Snapshot, p.Workdir, staged)})
	raw := combinedOutput(res)
	art := &Artifact{PlanID: planID, Kind: kind, Source: redact.String(p.Snapshot.String()), ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		Truncated: res.Truncated, Size: int64(len(raw)), SHA256: sha256Hex(raw), Content: storedText(raw), CreatedAt: s.nowUTC()}
	if err != nil {
		art.ExitCode = -1
		art.Content = "the snapshot command could not run: " + redact.String(err.Error())
	}
	if dberr := s.db.WithContext(context.WithoutCancel(ctx)).Create(art).Error; dberr != nil {
		s.log.Error("ops: could not store a snapshot", "plan", planID, "kind", kind, "err", dberr)
	}
	return art, err == nil && !res.TimedOut && res.ExitCode == 0
}

// finishApply records the outcome: status applied or failed, and the journal entry.
func (s *Service) finishApply(ctx context.Context, rec *PlanRecord, out *ApplyResult, by string) {
	if _, err := s.setStatus(ctx, rec, out.Status, StatusApplying); err != nil {
		s.log.Error("ops: could not record the apply outcome", "plan", rec.ID, "err", err)
	}
	event := EventApplyFinished
	if out.Status == StatusFailed {
		event = EventApplyFailed
	}
	detail := map[string]any{"exit_code": out.ExitCode, "timed_out": out.TimedOut, "duration": out.Duration.String()}
	if out.Reason != "" {
		detail["reason"] = out.Reason
	}
	if out.Output != nil {
		detail["output_sha256"] = out.Output.SHA256
		detail["output_truncated"] = out.Output.Truncated
	}
	if out.SnapshotBefore != nil {
		detail["snapshot_before_sha256"] = out.SnapshotBefore.SHA256
	}
	if out.SnapshotAfter != nil {
		detail["snapshot_after_sha256"] = out.SnapshotAfter.SHA256
	}
	if _, err := s.appendJournal(ctx, journalRecord{Project: rec.Project, PlanID: rec.ID, Event: event, Status: out.Status,
		Actor: by, Detail: detail}); err != nil {
		s.log.Error("ops: could not journal the apply outcome", "plan", rec.ID, "err", err)
	}
}

func (s *Service) markApplying(planID string, on bool) {
	s.applyingMu.Lock()
	defer s.applyingMu.Unlock()
	if s.applying == nil {
		s.applying = map[string]bool{}
	}
	if on {
		s.applying[planID] = true
	} else {
		delete(s.applying, planID)
	}
}

func (s *Service) isApplyingHere(planID string) bool {
	s.applyingMu.Lock()
	defer s.applyingMu.Unlock()
	return s.applying[planID]
}

// Recover marks plans left in applying by a process that ended mid-apply (a crash, a
// kill -9, a power cut): each becomes failed with an apply_outcome_unknown journal entry
// saying the apply started and its outcome is unknown, and why the applier is known to
// be gone. A plan being applied by this service is left alone, and without
// Config.Exclusive also one whose applier pid is alive. Call it when the app starts.
func (s *Service) Recover(ctx context.Context) (int, error) {
	var recs []PlanRecord
	if err := s.db.WithContext(ctx).Where("status = ?", StatusApplying).Find(&recs).Error; err != nil {
		return 0, fmt.Errorf("find interrupted applies: %w", err)
	}
	n := 0
	for i := range recs {
		rec := &recs[i]
		if s.isApplyingHere(rec.ID) {
			continue
		}
		evidence := fmt.Sprintf("its applier, pid %d, %s", rec.ApplierPID, deadowner.Describe(rec.ApplierPID))
		switch {
		case s.exclusive:
			evidence = deadowner.Evidence("", rec.ApplierPID)
		case rec.ApplierPID != 0 && rec.ApplierPID != os.Getpid() && processAlive(rec.ApplierPID):
			continue
		}
		ok, err := s.setStatus(ctx, rec, StatusFailed, StatusApplying)
		if err != nil {
			return n, err
		}
		if !ok {
			continue
		}
		n++
		// Was the apply journaled as started? The journal is written before the command runs.
		var last []JournalEntry
		if err := s.db.WithContext(ctx).Where("project = ? AND plan_id = ? AND event IN ?", rec.Project, rec.ID,
			[]string{EventApproved, EventApplyStarted}).Order("seq DESC").Limit(1).Find(&last).Error; err != nil {
			return n, fmt.Errorf("recover plan %s: read journal: %w", rec.ID, err)
		}
		reason := "outcome unknown: process ended during apply"
		if len(last) == 0 || last[0].Event != EventApplyStarted {
			reason = "nothing ran: process ended after the token was redeemed, before the apply started"
		}
		if _, err := s.appendJournal(ctx, journalRecord{Project: rec.Project, PlanID: rec.ID, Event: EventApplyUnknown, Status: StatusFailed,
			Actor: "airlock", Detail: map[string]any{"reason": reason, "evidence": evidence, "found_at": s.nowUTC().Format(time.RFC3339),
				"pid": rec.ApplierPID, "hint": recoverHint(rec.ID)}}); err != nil {
			return n, err
		}
	}
	return n, nil
}

// recoverHint is the way out of a plan whose apply died: both commands exist for a
// failed plan (a failed plan is diffable and rejectable).
func recoverHint(planID string) string {
	return fmt.Sprintf("inspect the target, attach a fresh diff (airlock ops diff %s --run) and approve again before retrying, or reject it (airlock ops reject %s --reason R)", planID, planID)
}
