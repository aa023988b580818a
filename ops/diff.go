package ops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/airlock-app/airlock/api"
	"io"
	"os"
	"path/filepath"
	"slices"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/internal/capped"
	"github.com/airlock-app/airlock/redact"
)

// DiffInput is what ops_diff takes. Give exactly one of Run (run the plan's diff command),
// Command (run this command instead) or File (attach a file, relative to the plan's
// working directory). Commands run read-only through the [Runner].
type DiffInput = api.DiffInput

// DiffResult is the attached artifact and the plan's new status.
type DiffResult = api.DiffResult

// diffable are the statuses a diff may be attached in. An approved plan keeps the diff the
// person approved; a failed or expired one needs a fresh look before a new approval.
var diffable = []Status{StatusDraft, StatusDiffed, StatusFailed, StatusExpired}

const maxDiffFile = 64 << 20

// AttachDiff produces or reads the plan's machine-checkable diff and stores it with its
// sha256; the plan becomes diffed. A command that times out or exits with a status not in
// AcceptExit attaches nothing.
func (s *Service) AttachDiff(ctx context.Context, in DiffInput) (*DiffResult, error) {
	rec, err := s.loadPlan(ctx, s.db, in.PlanID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(diffable, rec.Status) {
		return nil, &StatusError{PlanID: rec.ID, Op: "diff", Status: rec.Status, Hint: diffHint(rec.Status)}
	}
	p, err := s.intactPlan(rec)
	if err != nil {
		return nil, err
	}
	given := 0
	for _, b := range []bool{in.Run, in.Command != nil, in.File != ""} {
		if b {
			given++
		}
	}
	if given != 1 {
		return nil, fieldErr("diff", "needs exactly one of run (the plan's diff command), command or file")
	}
	before, err := digestInputs(p.Workdir, p.Inputs)
	if err != nil {
		return nil, err
	}
	art := &Artifact{PlanID: rec.ID, Kind: ArtifactDiff, CreatedAt: s.nowUTC(), Inputs: encodeDigests(before)}
	switch {
	case in.File != "":
		if err := s.readDiffFile(p.Workdir, in.File, art); err != nil {
			return nil, err
		}
	default:
		cmd := p.Diff
		if in.Command != nil {
			cmd = *in.Command
			if err := validateCommand(cmd, "command", true); err != nil {
				return nil, err
			}
		} else if cmd.IsZero() {
			return nil, fieldErr("run", "the plan has no diff command: give command or file instead")
		}
		accept := in.AcceptExit
		if len(accept) == 0 {
			accept = []int{0, 1}
		}
		res, err := s.runner.Run(ctx, RunSpec{Command: cmd, Dir: p.Workdir, Timeout: s.readTO, OutputCap: s.outCap,
			ReadOnly: true, Network: p.Network, Purpose: "diff", PlanID: rec.ID})
		if err != nil {
			return nil, fmt.Errorf("diff plan %s: run %s: %w", rec.ID, redact.String(cmd.String()), err)
		}
		if res.TimedOut {
			return nil, fmt.Errorf("diff plan %s: %s timed out after %s: nothing attached", rec.ID, redact.String(cmd.String()), s.readTO)
		}
		if !slices.Contains(accept, res.ExitCode) {
			return nil, fmt.Errorf("diff plan %s: %s exited %d (accepted: %v): nothing attached; output: %s", rec.ID,
				redact.String(cmd.String()), res.ExitCode, accept, excerpt(redact.String(string(res.Stderr)+string(res.Stdout))))
		}
		raw := combinedOutput(res)
		art.Source = redact.String(cmd.String())
		art.ExitCode = res.ExitCode
		art.Truncated = res.Truncated
		art.Size = int64(len(raw))
		art.SHA256 = sha256Hex(raw)
		art.Content = storedText(raw)
	}
	after, err := digestInputs(p.Workdir, p.Inputs)
	if err != nil {
		return nil, err
	}
	if d := compareDigests(before, after, "while the diff was made"); d != nil {
		return nil, fmt.Errorf("diff plan %s: nothing attached: %w", rec.ID, d)
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&PlanRecord{}).Where("id = ? AND status IN ?", rec.ID, diffable).
			Updates(map[string]any{"status": StatusDiffed, "updated_at": s.nowUTC()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errStatusMoved
		}
		return tx.Create(art).Error
	})
	if errors.Is(err, errStatusMoved) {
		return nil, fmt.Errorf("diff plan %s: the plan changed status meanwhile: nothing attached", rec.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("diff plan %s: store: %w", rec.ID, err)
	}
	rec.Status = StatusDiffed
	s.publishPlan(rec)
	if _, err := s.appendJournal(ctx, journalRecord{Project: rec.Project, PlanID: rec.ID, Event: EventDiffAttached,
		Status: StatusDiffed, Actor: in.By, Detail: map[string]any{"source": art.Source, "sha256": art.SHA256,
			"size": art.Size, "exit_code": art.ExitCode, "truncated": art.Truncated, "inputs": before}}); err != nil {
		return nil, err
	}
	return &DiffResult{PlanID: rec.ID, PlanHash: rec.Hash, Status: StatusDiffed, Diff: artifactView(art), Inputs: before}, nil
}

var errStatusMoved = errors.New("status moved")

func diffHint(st Status) string {
	switch st {
	case StatusApproved:
		return "it was approved with the diff it has; reject it first to attach another"
	case StatusSuperseded:
		return "a newer plan replaced it"
	}
	return "diffs attach to draft, diffed, failed or expired plans; open a new plan for a new change"
}

func (s *Service) readDiffFile(workdir, name string, art *Artifact) error {
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(workdir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fieldErr("file", err.Error())
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fieldErr("file", err.Error())
	}
	if !fi.Mode().IsRegular() {
		return fieldErr("file", path+" is not a regular file")
	}
	h := sha256.New()
	head := capped.NewBuffer(maxStoredArtifact)
	n, err := io.Copy(io.MultiWriter(h, head), io.LimitReader(f, maxDiffFile+1))
	if err != nil {
		return fieldErr("file", err.Error())
	}
	if n > maxDiffFile {
		return fieldErr("file", fmt.Sprintf("%s is larger than %d MiB", path, maxDiffFile>>20))
	}
	art.Source = path
	art.Size = n
	art.SHA256 = hex.EncodeToString(h.Sum(nil))
	art.Truncated = n > maxStoredArtifact
	kept := head.Bytes()
	if bytes.IndexByte(kept, 0) >= 0 {
		// A binary artifact (a `terraform plan -out` file): keep its hash, show what it is.
		art.Content = fmt.Sprintf("[binary file, %d bytes, sha256 %s]", n, art.SHA256)
		return nil
	}
	art.Content = storedText(kept)
	return nil
}

// combinedOutput is stdout, then stderr under a marker when there is any.
func combinedOutput(r RunResult) []byte {
	if len(r.Stderr) == 0 {
		return r.Stdout
	}
	out := append([]byte{}, r.Stdout...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, "--- stderr ---\n"...)
	return append(out, r.Stderr...)
}

// storedText is what is kept of an output: valid UTF-8, capped, redacted.
func storedText(b []byte) string {
	if len(b) > maxStoredArtifact {
		b = b[:maxStoredArtifact]
	}
	return redact.String(string(bytes.ToValidUTF8(b, []byte("\uFFFD"))))
}

func excerpt(s string) string {
	const n = 2000
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (s *Service) latestArtifact(ctx context.Context, planID, kind string) (*Artifact, error) {
	var arts []Artifact
	if err := s.db.WithContext(ctx).Where("plan_id = ? AND kind = ?", planID, kind).Order("id DESC").Limit(1).Find(&arts).Error; err != nil {
		return nil, fmt.Errorf("read %s of plan %s: %w", kind, planID, err)
	}
	if len(arts) == 0 {
		return nil, nil
	}
	return &arts[0], nil
}

// intactPlan decodes the stored plan and checks it still hashes to its recorded hash.
func (s *Service) intactPlan(rec *PlanRecord) (*OperationPlan, error) {
	p, err := decodeSpec(rec)
	if err != nil {
		return nil, err
	}
	if got := PlanHash(p); got != rec.Hash {
		return nil, &DriftError{Field: FieldPlan, Detail: fmt.Sprintf("the stored plan %s hashes to %s… but was opened as %s…: the database was edited", rec.ID, got[:12], rec.Hash[:12])}
	}
	return p, nil
}
