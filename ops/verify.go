package ops

import (
	"bytes"
	"context"
	"fmt"
	"github.com/airlock-app/airlock/api"
	"slices"

	"github.com/airlock-app/airlock/redact"
)

// AssertionResult is the evidence of one assertion.
type AssertionResult = api.AssertionResult

// VerifyResult is the outcome of [Service.Verify].
type VerifyResult = api.VerifyResult

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
	if _, err := s.setStatus(ctx, rec, out.Status, verifiable...); err != nil {
		return nil, err
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
	return out, nil
}
