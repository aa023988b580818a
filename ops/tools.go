package ops

import (
	"context"
	"encoding/json"

	"github.com/airlock-app/airlock/api"
)

// The six tools, as the MCP server and the CLI call them. Inputs and outputs are plain
// JSON-friendly structs. Tiers: ops_plan, ops_diff, ops_verify and
// ops_journal are P0; ops_apply is P2; ops_approve is interactive-only — the app passes a
// person's answer as an [Attestation], never anything from the agent's input.

// Tool names.
const (
	ToolPlan    = api.ToolOpsPlan
	ToolDiff    = api.ToolOpsDiff
	ToolApprove = api.ToolOpsApprove
	ToolApply   = api.ToolOpsApply
	ToolVerify  = api.ToolOpsVerify
	ToolJournal = api.ToolOpsJournal
)

// ToolDescriptions are one-paragraph descriptions for the MCP tool list.
var ToolDescriptions = map[string]string{
	ToolPlan: "Open an operation plan for a change to live infrastructure: target (provider, account, region or device), intent, " +
		"the exact apply command (argv or shell), optional snapshot and diff commands, working directory, steps with effect, " +
		"reversibility (reversible|hard|irreversible) and blast radius (low|med|high), and read-only verify assertions. " +
		"Returns the plan id and its canonical sha256.",
	ToolDiff: "Attach the machine-checkable diff of a plan: run its diff command read-only (run=true), run another read-only " +
		"command, or attach a file (e.g. a terraform plan). No diff, no approval.",
	ToolApprove: "Ask the person to approve a plan. Interactive-only: the person sees the hash and the exact change and " +
		"confirms it; a single-use token valid 10 minutes (60 at most) is returned once.",
	ToolApply: "Apply an approved plan with its single-use token. The token is redeemed before anything runs; an unknown, " +
		"used, expired or other plan's token, or any drift from the approved command, snapshot command or working " +
		"directory, and nothing runs. A failed apply does not give the token back.",
	ToolVerify:  "Run a plan's read-only assertions after the apply and record the evidence.",
	ToolJournal: "Query the project's append-only ops journal by plan, status or event; verify=true checks its hash chain and authentication.",
}

// Attestation is the person's answer, filled by the app from a TTY or a click.
type Attestation struct {
	By          string
	Interactive bool
}

// ApproveInput is ops_approve's input.
type ApproveInput = api.ApproveInput

// ApplyInput is ops_apply's input.
type ApplyInput = api.ApplyInput

// VerifyInput is ops_verify's input.
type VerifyInput = api.VerifyInput

// JournalInput is ops_journal's input.
type JournalInput = api.JournalInput

// JournalEntryView is a journal entry as the surfaces show it.
type JournalEntryView = api.JournalEntryView

// JournalOutput is ops_journal's output.
type JournalOutput = api.JournalPage

// OpsPlan is the ops_plan tool.
func (s *Service) OpsPlan(ctx context.Context, in PlanInput) (*PlanView, error) {
	return s.CreatePlan(ctx, in)
}

// OpsDiff is the ops_diff tool.
func (s *Service) OpsDiff(ctx context.Context, in DiffInput) (*DiffResult, error) {
	return s.AttachDiff(ctx, in)
}

// OpsApprove is the ops_approve tool. who carries the person's answer; without
// who.Interactive the approval is refused.
func (s *Service) OpsApprove(ctx context.Context, in ApproveInput, who Attestation) (*ApproveResult, error) {
	ttl, err := ParseTokenTTL(in.TTL)
	if err != nil {
		return nil, err
	}
	return s.Approve(ctx, in.PlanID, ApproveOptions{TTL: ttl, ConfirmedHashPrefix: in.ConfirmHashPrefix, By: who.By, Interactive: who.Interactive})
}

// OpsApply is the ops_apply tool. A failed apply returns its result and an [*ApplyError].
func (s *Service) OpsApply(ctx context.Context, in ApplyInput) (*ApplyResult, error) {
	return s.Apply(ctx, in.PlanID, in.Token, in.ApplyOptions)
}

// OpsVerify is the ops_verify tool.
func (s *Service) OpsVerify(ctx context.Context, in VerifyInput) (*VerifyResult, error) {
	return s.Verify(ctx, in.PlanID, in.By)
}

// OpsJournal is the ops_journal tool. Without a project it uses the plan's project.
func (s *Service) OpsJournal(ctx context.Context, in JournalInput) (*JournalOutput, error) {
	if in.Project == "" && in.PlanID != "" {
		rec, err := s.loadPlan(ctx, s.db, in.PlanID)
		if err != nil {
			return nil, err
		}
		in.Project = rec.Project
	}
	entries, err := s.Journal(ctx, in.Query())
	if err != nil {
		return nil, err
	}
	out := &JournalOutput{Project: in.Project, Entries: make([]JournalEntryView, len(entries))}
	for i, e := range entries {
		v := JournalEntryView{Seq: e.Seq, ID: e.ID, PlanID: e.PlanID, Event: e.Event, Status: e.Status, Actor: e.Actor,
			At: e.At, PrevHash: e.PrevHash, Hash: e.Hash}
		if json.Valid([]byte(e.Detail)) {
			v.Detail = json.RawMessage(e.Detail)
		} else if e.Detail != "" {
			v.Detail, _ = json.Marshal(e.Detail)
		}
		out.Entries[i] = v
	}
	if in.Verify {
		rep, err := s.VerifyJournal(ctx, in.Project)
		if err != nil {
			return nil, err
		}
		out.Verification = &rep
	}
	return out, nil
}
