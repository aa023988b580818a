package ops

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/airlock-app/airlock/api"
	"io"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/redact"
)

// ApproveOptions carry a person's approval. They are filled by the app from a typed answer
// at a TTY or a click in the window, never from an agent's tool input.
type ApproveOptions struct {
	// TTL is how long the token stays valid; 0 means 10 minutes, more than 60 is refused.
	TTL time.Duration
	// ConfirmedHashPrefix is what the person typed: at least the first 8 characters of
	// the plan hash they were shown.
	ConfirmedHashPrefix string
	// By names the person (for the journal).
	By string
	// Interactive is true only when a person answered at a TTY or in the window.
	Interactive bool
}

// ApproveResult carries the token. Token appears here exactly once; only its sha256 is
// stored, so it cannot be shown again.
type ApproveResult = api.ApproveResult

// ApprovalPrompt is what a person must see before approving: the hash, the exact change
// and the diff. The permission popup and the CLI show it.
type ApprovalPrompt = api.ApprovalPrompt

// ApprovalPrompt returns what the person approves, refusing plans that cannot be approved
// (no diff, a live token, a changed database).
func (s *Service) ApprovalPrompt(ctx context.Context, planID string) (*ApprovalPrompt, error) {
	rec, err := s.loadPlan(ctx, s.db, planID)
	if err != nil {
		return nil, err
	}
	p, err := s.intactPlan(rec)
	if err != nil {
		return nil, err
	}
	if err := s.checkApprovable(ctx, rec); err != nil {
		return nil, err
	}
	if err := checkApplyReads(p); err != nil {
		return nil, fmt.Errorf("plan %s cannot be approved: %w", rec.ID, err)
	}
	d, err := s.latestArtifact(ctx, rec.ID, ArtifactDiff)
	if err != nil {
		return nil, err
	}
	inputs, err := digestInputs(p.Workdir, p.Inputs)
	if err != nil {
		return nil, err
	}
	if drift := compareDigests(decodeDigests(d.Inputs), inputs, "since the diff was attached (attach a fresh diff)"); drift != nil {
		return nil, drift
	}
	pr := &ApprovalPrompt{PlanID: rec.ID, Hash: rec.Hash, Status: rec.Status, Target: p.Target, Intent: p.Intent, Inputs: inputs,
		ApplyCommand: p.Apply.String(), SnapshotCommand: p.Snapshot.String(),
		ConfirmCommand: p.Confirm.String(), ConfirmWithinSeconds: p.ConfirmWithinSeconds, Workdir: p.Workdir, Network: p.Network,
		Steps: p.Steps, Verify: p.Verify, Diff: artifactView(d), WorstBlastRadius: BlastLow, WorstReversibility: Reversible}
	for _, st := range p.Steps {
		if rank(st.BlastRadius) > rank(pr.WorstBlastRadius) {
			pr.WorstBlastRadius = st.BlastRadius
		}
		if rank(st.Reversibility) > rank(pr.WorstReversibility) {
			pr.WorstReversibility = st.Reversibility
		}
	}
	return pr, nil
}

func rank[T ~string](v T) int {
	switch string(v) {
	case "med", "hard":
		return 1
	case "high", "irreversible":
		return 2
	}
	return 0
}

// checkApprovable expires a lapsed approval and says why a plan cannot be approved now.
func (s *Service) checkApprovable(ctx context.Context, rec *PlanRecord) error {
	if rec.Status == StatusApproved {
		live, err := s.liveToken(ctx, s.db, rec.ID)
		if err != nil {
			return err
		}
		if live {
			return fmt.Errorf("approve plan %s: %w", rec.ID, ErrLiveToken)
		}
		if err := s.expire(ctx, rec); err != nil {
			return err
		}
	}
	switch rec.Status {
	case StatusDiffed, StatusExpired:
	case StatusDraft:
		return fmt.Errorf("approve plan %s: %w", rec.ID, ErrNoDiff)
	case StatusFailed:
		return &StatusError{PlanID: rec.ID, Op: "approve", Status: rec.Status,
			Hint: "the failed apply may have changed the target: attach a fresh diff (airlock ops diff), then approve again"}
	default:
		return &StatusError{PlanID: rec.ID, Op: "approve", Status: rec.Status, Hint: "only diffed or expired plans can be approved"}
	}
	d, err := s.latestArtifact(ctx, rec.ID, ArtifactDiff)
	if err != nil {
		return err
	}
	if d == nil {
		return fmt.Errorf("approve plan %s: %w", rec.ID, ErrNoDiff)
	}
	return nil
}

// expire marks an approved plan whose token lapsed unused as expired, and journals it.
func (s *Service) expire(ctx context.Context, rec *PlanRecord) error {
	ok, err := s.setStatus(ctx, rec, StatusExpired, StatusApproved)
	if err != nil || !ok {
		return err
	}
	_, err = s.appendJournal(ctx, journalRecord{Project: rec.Project, PlanID: rec.ID, Event: EventExpired, Status: StatusExpired,
		Detail: map[string]any{"reason": "the approval token lapsed unused"}})
	return err
}

func (s *Service) liveToken(ctx context.Context, db *gorm.DB, planID string) (bool, error) {
	var n int64
	err := db.WithContext(ctx).Model(&ApprovalToken{}).
		Where("plan_id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?", planID, s.nowUTC().UnixNano()).Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("read approvals of plan %s: %w", planID, err)
	}
	return n > 0, nil
}

// Approve records a person's approval of the plan and mints its single-use token. It
// refuses unless opt.Interactive is set and opt.ConfirmedHashPrefix (at least 8 hex
// characters) starts the plan's hash, the plan has a diff and is diffed or expired, and no
// live token exists for it.
// ParseTokenTTL is api.ParseTokenTTL as a validation error of the ttl field.
func ParseTokenTTL(s string) (time.Duration, error) {
	d, err := api.ParseTokenTTL(s)
	if err != nil {
		return 0, fieldErr("ttl", err.Error())
	}
	return d, nil
}

func checkTokenTTL(d time.Duration) error {
	if _, err := api.ParseTokenTTL(d.String()); err != nil {
		return fieldErr("ttl", err.Error())
	}
	return nil
}

func (s *Service) Approve(ctx context.Context, planID string, opt ApproveOptions) (*ApproveResult, error) {
	rec, err := s.loadPlan(ctx, s.db, planID)
	if err != nil {
		return nil, err
	}
	if !opt.Interactive {
		s.journalRefusal(ctx, rec, EventApproveRefused, opt.By, "not interactive: a person must approve at a terminal or in the window")
		return nil, fmt.Errorf("approve plan %s: %w", rec.ID, ErrNotInteractive)
	}
	p, err := s.intactPlan(rec)
	if err != nil {
		return nil, err
	}
	ttl := opt.TTL
	if ttl == 0 {
		ttl = DefaultTokenTTL
	}
	if err := checkTokenTTL(ttl); err != nil {
		return nil, err
	}
	typed := strings.ToLower(strings.TrimSpace(opt.ConfirmedHashPrefix))
	if len(typed) < MinConfirmPrefix || !strings.HasPrefix(rec.Hash, typed) {
		return nil, &HashConfirmationError{Got: typed, Want: rec.Hash}
	}
	if err := s.checkApprovable(ctx, rec); err != nil {
		return nil, err
	}
	// Every file the apply reads is pinned below, or the approval is refused: a file it
	// names that is not an input would be read as it is when the apply runs.
	if err := checkApplyReads(p); err != nil {
		s.journalRefusal(ctx, rec, EventApproveRefused, opt.By, err.Error())
		return nil, fmt.Errorf("approve plan %s: %w", rec.ID, err)
	}
	diff, err := s.latestArtifact(ctx, rec.ID, ArtifactDiff)
	if err != nil {
		return nil, err
	}
	// The inputs are read once and kept: the apply runs these bytes, whatever happens
	// to the files in the working directory afterwards.
	inputs, err := s.inputs.capture(p.Workdir, p.Inputs)
	if err != nil {
		return nil, fmt.Errorf("approve plan %s: %w", rec.ID, err)
	}
	if d := compareDigests(decodeDigests(diff.Inputs), inputs, "since the diff was attached (attach a fresh diff)"); d != nil {
		return nil, d
	}
	workdirID, err := dirIdentity(p.Workdir)
	if err != nil {
		return nil, &DriftError{Field: FieldWorkdir, Detail: fmt.Sprintf("the working directory %s cannot be read: %v", p.Workdir, err)}
	}
	raw := make([]byte, 32)
	if _, err := io.ReadFull(s.random, raw); err != nil {
		return nil, fmt.Errorf("approve plan %s: random token: %w", rec.ID, err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := s.nowUTC()
	comp := components(p)
	row := &ApprovalToken{TokenHash: tokenHash(token), PlanID: rec.ID, PlanHash: rec.Hash, ApplyHash: comp.Apply,
		SnapshotHash: comp.Snapshot, WorkdirHash: comp.Workdir, DiffSHA256: diff.SHA256, Inputs: encodeDigests(inputs), WorkdirID: workdirID, ApprovedBy: redact.String(opt.By),
		CreatedAt: now.UnixNano(), ExpiresAt: now.Add(ttl).UnixNano()}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&PlanRecord{}).Where("id = ? AND hash = ? AND status IN ?", rec.ID, rec.Hash, []Status{StatusDiffed, StatusExpired}).
			Updates(map[string]any{"status": StatusApproved, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errStatusMoved
		}
		if live, err := s.liveToken(ctx, tx, rec.ID); err != nil {
			return err
		} else if live {
			return ErrLiveToken
		}
		return tx.Create(row).Error
	})
	switch {
	case errors.Is(err, errStatusMoved):
		return nil, fmt.Errorf("approve plan %s: it changed status meanwhile (another approval?): %w", rec.ID, ErrLiveToken)
	case errors.Is(err, ErrLiveToken):
		return nil, fmt.Errorf("approve plan %s: %w", rec.ID, ErrLiveToken)
	case err != nil:
		return nil, fmt.Errorf("approve plan %s: %w", rec.ID, err)
	}
	prev := rec.Status
	rec.Status = StatusApproved
	s.publishPlan(rec)
	expires := time.Unix(0, row.ExpiresAt).UTC()
	if _, err := s.appendJournal(ctx, journalRecord{Project: rec.Project, PlanID: rec.ID, Event: EventApproved, Status: StatusApproved,
		Actor: opt.By, Detail: map[string]any{"hash": rec.Hash, "expires_at": expires.Format(time.RFC3339), "ttl": ttl.String(),
			"diff_sha256": diff.SHA256, "inputs": inputs, "approval_ref": row.TokenHash[:12]}}); err != nil {
		// An approval the journal does not hold must not stand: no token nobody holds.
		undo := s.db.WithContext(context.WithoutCancel(ctx)).Transaction(func(tx *gorm.DB) error {
			if err := tx.Where("token_hash = ?", row.TokenHash).Delete(&ApprovalToken{}).Error; err != nil {
				return err
			}
			return tx.Model(&PlanRecord{}).Where("id = ? AND status = ?", rec.ID, StatusApproved).Update("status", prev).Error
		})
		rec.Status = prev
		s.publishPlan(rec)
		if undo != nil {
			return nil, fmt.Errorf("approve plan %s: the journal refused the approval (%w), and undoing it failed (%v): reject the plan before approving it again", rec.ID, err, undo)
		}
		return nil, fmt.Errorf("approve plan %s: nothing was approved, the journal refused it: %w", rec.ID, err)
	}
	return &ApproveResult{PlanID: rec.ID, PlanHash: rec.Hash, Token: token, ExpiresAt: expires, DiffSHA256: diff.SHA256}, nil
}

func tokenHash(token string) string { return sha256Hex([]byte(token)) }

// rejectable are the statuses a person may reject a plan in.
var rejectable = []Status{StatusDraft, StatusDiffed, StatusApproved, StatusExpired, StatusFailed}

// Reject records a person's "no": the plan becomes rejected, a live token is revoked, and
// the rejection and its reason are journaled.
func (s *Service) Reject(ctx context.Context, planID, reason, by string) (*PlanView, error) {
	rec, err := s.loadPlan(ctx, s.db, planID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(rejectable, rec.Status) {
		return nil, &StatusError{PlanID: rec.ID, Op: "reject", Status: rec.Status, Hint: "only plans not yet applied can be rejected"}
	}
	now := s.nowUTC()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&PlanRecord{}).Where("id = ? AND status IN ?", rec.ID, rejectable).
			Updates(map[string]any{"status": StatusRejected, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errStatusMoved
		}
		return tx.Model(&ApprovalToken{}).Where("plan_id = ? AND used_at IS NULL AND revoked_at IS NULL", rec.ID).
			Update("revoked_at", now.UnixNano()).Error
	})
	if errors.Is(err, errStatusMoved) {
		return nil, fmt.Errorf("reject plan %s: it changed status meanwhile; look again (airlock ops show %s)", rec.ID, rec.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("reject plan %s: %w", rec.ID, err)
	}
	rec.Status = StatusRejected
	s.publishPlan(rec)
	if _, err := s.appendJournal(ctx, journalRecord{Project: rec.Project, PlanID: rec.ID, Event: EventRejected, Status: StatusRejected,
		Actor: by, Detail: map[string]any{"reason": reason}}); err != nil {
		return nil, err
	}
	return s.Plan(ctx, rec.ID)
}

// journalRefusal records a refused step; a journal failure is logged, the refusal stands.
func (s *Service) journalRefusal(ctx context.Context, rec *PlanRecord, event, by, reason string) {
	// Recorded even when the caller went away.
	if _, err := s.appendJournal(context.WithoutCancel(ctx), journalRecord{Project: rec.Project, PlanID: rec.ID, Event: event, Status: rec.Status,
		Actor: by, Detail: map[string]any{"reason": reason}}); err != nil {
		s.log.Warn("ops: could not journal a refusal", "plan", rec.ID, "event", event, "err", err)
	}
}
