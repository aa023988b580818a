package ops

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/sqlitedb"
	"github.com/airlock-app/airlock/redact"
)

// PlanInput is what ops_plan takes: the plan's content, and optionally the id of an older
// plan for the same target that this one replaces.
type PlanInput = api.PlanInput

// supersedable are the statuses a newer plan may replace.
var supersedable = []Status{StatusDraft, StatusDiffed, StatusApproved, StatusExpired, StatusFailed, StatusRejected}

// CreatePlan validates, redacts and stores a plan in status draft and journals it. The
// working directory is made absolute and its symlinks resolved (it must exist); an empty
// project becomes the working directory's project key. With Supersedes, the older plan
// (same project and target) becomes superseded and any live token of it is revoked.
func (s *Service) CreatePlan(ctx context.Context, in PlanInput) (*PlanView, error) {
	p := in.OperationPlan
	if p.Workdir == "" {
		return nil, fieldErr("workdir", "is required")
	}
	wd, err := resolveDir(p.Workdir)
	if err != nil {
		return nil, fieldErr("workdir", err.Error())
	}
	p.Workdir = wd
	if p.Project == "" {
		p.Project = "dir:" + wd
	}
	redactPlanText(&p)
	if err := Validate(&p); err != nil {
		return nil, err
	}
	id, err := s.newID("op-")
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	now := s.nowUTC()
	rec := &PlanRecord{ID: id, Project: p.Project, Hash: PlanHash(&p), Spec: string(spec), Status: StatusDraft,
		Provider: p.Target.Provider, Account: p.Target.Account, Region: p.Target.Region, Device: p.Target.Device,
		Intent: p.Intent, Supersedes: in.Supersedes, CreatedBy: redact.String(in.By), CreatedAt: now, UpdatedAt: now}

	var old *PlanRecord
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(rec).Error; err != nil {
			return err
		}
		if in.Supersedes == "" {
			return nil
		}
		var o PlanRecord
		if err := tx.First(&o, "id = ?", in.Supersedes).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return fieldErr("supersedes", fmt.Sprintf("names plan %s, which does not exist", in.Supersedes))
			}
			return err
		}
		if o.Project != rec.Project || o.Provider != rec.Provider || o.Account != rec.Account || o.Region != rec.Region || o.Device != rec.Device {
			return fieldErr("supersedes", fmt.Sprintf("names plan %s, which is for another project or target", o.ID))
		}
		res := tx.Model(&PlanRecord{}).Where("id = ? AND status IN ?", o.ID, supersedable).
			Updates(map[string]any{"status": StatusSuperseded, "superseded_by": rec.ID, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return fieldErr("supersedes", fmt.Sprintf("names plan %s, which is %s and can no longer be superseded", o.ID, o.Status))
		}
		if err := tx.Model(&ApprovalToken{}).Where("plan_id = ? AND used_at IS NULL AND revoked_at IS NULL", o.ID).
			Update("revoked_at", now.UnixNano()).Error; err != nil {
			return err
		}
		o.Status, o.SupersededBy = StatusSuperseded, rec.ID
		old = &o
		return nil
	})
	if err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return nil, err
		}
		return nil, fmt.Errorf("store plan: %w", err)
	}
	if _, err := s.appendJournal(ctx, journalRecord{Project: rec.Project, PlanID: rec.ID, Event: EventPlanned, Status: rec.Status,
		Actor: in.By, Detail: map[string]any{"hash": rec.Hash, "intent": p.Intent, "target": p.Target,
			"apply": p.Apply.String(), "workdir": p.Workdir, "supersedes": in.Supersedes}}); err != nil {
		return nil, err
	}
	if old != nil {
		if _, err := s.appendJournal(ctx, journalRecord{Project: old.Project, PlanID: old.ID, Event: EventSuperseded,
			Status: StatusSuperseded, Actor: in.By, Detail: map[string]any{"superseded_by": rec.ID}}); err != nil {
			return nil, err
		}
		s.publishPlan(old)
	}
	s.publishPlan(rec)
	return s.Plan(ctx, rec.ID)
}

func resolveDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("cannot be resolved: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", real)
	}
	return real, nil
}

// redactPlanText redacts the free-text fields. Commands are not redacted (what is hashed
// is what runs); Validate refuses a command or an expected text that carries a credential.
func redactPlanText(p *OperationPlan) {
	p.Intent = redact.String(p.Intent)
	p.Target.Provider = redact.String(p.Target.Provider)
	p.Target.Account = redact.String(p.Target.Account)
	p.Target.Region = redact.String(p.Target.Region)
	p.Target.Device = redact.String(p.Target.Device)
	for i := range p.Steps {
		p.Steps[i].Description = redact.String(p.Steps[i].Description)
		p.Steps[i].Effect = redact.String(p.Steps[i].Effect)
		p.Steps[i].Rollback = redact.String(p.Steps[i].Rollback)
	}
	for i := range p.Verify {
		p.Verify[i].Name = redact.String(p.Verify[i].Name)
	}
}

func (s *Service) newID(prefix string) (string, error) {
	b := make([]byte, 8)
	if _, err := s.random.Read(b); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return prefix + hex.EncodeToString(b), nil
}

// PlanView is a plan as the surfaces show it.
type PlanView = api.PlanView

// TokenView describes the newest approval of a plan (never the token itself).
type TokenView = api.PlanTokenView

// ArtifactView is a stored artifact.
type ArtifactView = api.PlanArtifactView

func artifactView(a *Artifact) *ArtifactView {
	return &ArtifactView{ID: a.ID, Kind: a.Kind, Source: a.Source, ExitCode: a.ExitCode, TimedOut: a.TimedOut,
		Truncated: a.Truncated, Size: a.Size, SHA256: a.SHA256, Content: a.Content, CreatedAt: a.CreatedAt}
}

// Plan returns one plan with its latest diff and approval.
func (s *Service) Plan(ctx context.Context, id string) (*PlanView, error) {
	rec, err := s.loadPlan(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	return s.view(ctx, rec)
}

func (s *Service) view(ctx context.Context, rec *PlanRecord) (*PlanView, error) {
	v := &PlanView{ID: rec.ID, Project: rec.Project, Hash: rec.Hash, Status: rec.Status, Supersedes: rec.Supersedes,
		SupersededBy: rec.SupersededBy, CreatedBy: rec.CreatedBy, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt}
	p, err := decodeSpec(rec)
	if err == nil {
		v.Plan = *p
		v.Intact = PlanHash(p) == rec.Hash
	}
	if d, err := s.latestArtifact(ctx, rec.ID, ArtifactDiff); err != nil {
		return nil, err
	} else if d != nil {
		v.Diff = artifactView(d)
	}
	var toks []ApprovalToken
	if err := s.db.WithContext(ctx).Where("plan_id = ?", rec.ID).Order("id DESC").Limit(1).Find(&toks).Error; err != nil {
		return nil, fmt.Errorf("read approval of plan %s: %w", rec.ID, err)
	}
	if len(toks) == 1 {
		t := toks[0]
		now := s.nowUTC().UnixNano()
		v.Token = &TokenView{ApprovedBy: t.ApprovedBy, ApprovedAt: time.Unix(0, t.CreatedAt).UTC(), ExpiresAt: time.Unix(0, t.ExpiresAt).UTC(),
			Used: t.UsedAt != nil, Revoked: t.RevokedAt != nil, Live: t.UsedAt == nil && t.RevokedAt == nil && t.ExpiresAt > now}
	}
	return v, nil
}

func decodeSpec(rec *PlanRecord) (*OperationPlan, error) {
	var p OperationPlan
	dec := json.NewDecoder(strings.NewReader(rec.Spec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("plan %s: stored content is unreadable: %w", rec.ID, err)
	}
	return &p, nil
}

func (s *Service) loadPlan(ctx context.Context, db *gorm.DB, id string) (*PlanRecord, error) {
	var rec PlanRecord
	if err := db.WithContext(ctx).First(&rec, "id = ?", id).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, fmt.Errorf("plan %s: %w (list plans with `airlock ops list`)", id, ErrPlanNotFound)
		}
		return nil, fmt.Errorf("read plan %s: %w", id, err)
	}
	return &rec, nil
}

// PlanFilter selects plans for [Service.List].
type PlanFilter = api.PlanFilter

// PlanSummary is one line of [Service.List].
type PlanSummary = api.PlanSummary

// List returns plans, newest first.
func (s *Service) List(ctx context.Context, f PlanFilter) ([]PlanSummary, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	tx := s.db.WithContext(ctx).Model(&PlanRecord{})
	tx = tx.Scopes(sqlitedb.EqIfSet("project", f.Project), sqlitedb.EqIfSet("status", f.Status))
	var recs []PlanRecord
	if err := tx.Order("created_at DESC, id").Limit(f.Limit).Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("list plans: %w", err)
	}
	out := make([]PlanSummary, len(recs))
	for i, r := range recs {
		out[i] = PlanSummary{ID: r.ID, Project: r.Project, Status: r.Status, Hash: r.Hash, Provider: r.Provider,
			Account: r.Account, Region: r.Region, Device: r.Device, Intent: r.Intent, UpdatedAt: r.UpdatedAt}
	}
	return out, nil
}

// setStatus moves a plan from one of the given statuses to to, returning false when the
// plan was not in any of them (someone else moved it first).
func (s *Service) setStatus(ctx context.Context, rec *PlanRecord, to Status, from ...Status) (bool, error) {
	now := s.nowUTC()
	res := s.db.WithContext(ctx).Model(&PlanRecord{}).Where("id = ? AND status IN ?", rec.ID, from).
		Updates(map[string]any{"status": to, "updated_at": now})
	if res.Error != nil {
		return false, fmt.Errorf("plan %s: set status %s: %w", rec.ID, to, res.Error)
	}
	if res.RowsAffected != 1 {
		return false, nil
	}
	rec.Status, rec.UpdatedAt = to, now
	s.publishPlan(rec)
	return true, nil
}

// Evidence returns every artifact kept for a plan, oldest first: diffs, snapshots before
// and after, the apply's output, and each verify assertion's output.
func (s *Service) Evidence(ctx context.Context, planID string) ([]ArtifactView, error) {
	if _, err := s.loadPlan(ctx, s.db, planID); err != nil {
		return nil, err
	}
	var arts []Artifact
	if err := s.db.WithContext(ctx).Where("plan_id = ?", planID).Order("id").Find(&arts).Error; err != nil {
		return nil, fmt.Errorf("read evidence of plan %s: %w", planID, err)
	}
	out := make([]ArtifactView, len(arts))
	for i := range arts {
		out[i] = *artifactView(&arts[i])
	}
	return out, nil
}
