package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
)

// Inputs of the six ops tools.
type (
	opsPlanIn struct {
		Plan    map[string]any `json:"plan" jsonschema:"the plan, as in a plan.json: target {provider, account, region, device}, intent, workdir, apply {argv | shell}, inputs (every file the apply, confirm or snapshot names or runs: approval pins their bytes and refuses a plan that reads a file not listed), snapshot, diff, confirm and confirm_within_seconds (commit-confirm devices), timeout_seconds, steps [{description, effect, reversibility: reversible|hard|irreversible, blast_radius: low|med|high, rollback}], verify [{name, command, expect_text}], supersedes"`
		BaseDir string         `json:"base_dir,omitempty" jsonschema:"the directory relative paths in the plan are relative to (default: the workspace)"`
	}
	opsDiffIn struct {
		PlanID     string          `json:"plan_id" jsonschema:"the plan's id (op-…)"`
		Run        bool            `json:"run,omitempty" jsonschema:"run the plan's own diff command, read-only"`
		Command    *api.OpsCommand `json:"command,omitempty" jsonschema:"another read-only command to produce the diff: {argv: [...]} or {shell: \"...\"}"`
		File       string          `json:"file,omitempty" jsonschema:"attach this file as the diff instead (e.g. a terraform plan output)"`
		AcceptExit []int           `json:"accept_exit,omitempty" jsonschema:"exit statuses that mean the diff was produced (default 0 and 1; use 0 and 2 for terraform plan -detailed-exitcode)"`
	}
	opsApproveIn struct {
		PlanID string `json:"plan_id" jsonschema:"the plan's id (op-…), diffed"`
		TTL    string `json:"ttl,omitempty" jsonschema:"how long the token stays valid, e.g. 10m (default) up to 60m"`
	}
	opsApplyIn struct {
		PlanID string `json:"plan_id" jsonschema:"the plan's id (op-…), approved"`
		Token  string `json:"token" jsonschema:"the single-use token ops_approve returned"`
	}
	opsVerifyIn struct {
		PlanID string `json:"plan_id" jsonschema:"the plan's id (op-…)"`
	}
	opsJournalIn struct {
		PlanID  string `json:"plan_id,omitempty" jsonschema:"only this plan's entries"`
		Project string `json:"project,omitempty" jsonschema:"the project (default: the workspace's, dir:<path>)"`
		Status  string `json:"status,omitempty" jsonschema:"only entries recorded with this plan status"`
		Verify  bool   `json:"verify,omitempty" jsonschema:"check the journal's hash chain and authentication"`
	}
)

func needPlan(id string) error {
	if id == "" {
		return errors.New("plan_id is required (the op-… id ops_plan returned)")
	}
	return nil
}

// callOps performs one ops route of the core and renders its answer for the agent, or
// the error with its way out.
func callOps[In, Out any](ctx context.Context, s *Server, rt api.Route[In, Out], in In, args ...string) (Out, *mcp.CallToolResult, api.Outcome) {
	out, err := localapi.Call(ctx, s.opts.Client, rt, in, args...)
	if err != nil {
		return out, errorResult("%v", err), ranOK(err)
	}
	return out, jsonResult(out), ranOK(nil)
}

// jsonResult is an answer as the agent reads it: its JSON indented, keys sorted, and,
// when it is an object, the same as the structured content.
func jsonResult(v any) *mcp.CallToolResult {
	raw, err := json.Marshal(v)
	if err != nil {
		return errorResult("encode the answer: %v", err)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return errorResult("encode the answer: %v", err)
	}
	text, err := json.MarshalIndent(tree, "", "  ")
	if err != nil {
		return errorResult("encode the answer: %v", err)
	}
	res := textResult(string(text))
	if len(raw) > 0 && raw[0] == '{' {
		res.StructuredContent = tree
	}
	return res
}

func (s *Server) addOpsTools() {
	governed(s, &mcp.Tool{Name: api.ToolOpsPlan, Annotations: annotations("Open an ops plan", toolKind{}),
		Description: "Open an operation plan for a change to live infrastructure: target, intent, the exact apply command " +
			"(argv or shell), optional snapshot and diff commands, working directory, steps with effect, reversibility " +
			"(reversible|hard|irreversible) and blast radius (low|med|high), and read-only verify assertions. Returns the plan id and " +
			"its sha256. Next: ops_diff."},
		func(in *opsPlanIn) (string, error) {
			if len(in.Plan) == 0 {
				return "", errors.New("plan is required")
			}
			if in.BaseDir == "" {
				in.BaseDir = s.opts.Policy.Cwd
			} else {
				in.BaseDir = s.abs(in.BaseDir)
			}
			intent, _ := in.Plan["intent"].(string)
			return intent, nil
		},
		func(ctx context.Context, in opsPlanIn) (*mcp.CallToolResult, api.Outcome) {
			data, err := json.Marshal(in.Plan)
			if err != nil {
				return errorResult("encode the plan: %v", err), ranOK(err)
			}
			_, res, out := callOps(ctx, s, api.OpsCreatePlan, api.PlanSubmission{Data: string(data), BaseDir: in.BaseDir, By: s.session})
			return res, out
		})
	governed(s, &mcp.Tool{Name: api.ToolOpsDiff, Annotations: annotations("Attach a plan's diff", toolKind{}),
		Description: "Attach the machine-checkable diff of a plan: run its diff command read-only (run=true), run another read-only " +
			"command, or attach a file. No diff, no approval. Next: ops_approve."},
		func(in *opsDiffIn) (string, error) {
			if in.File != "" {
				if _, err := s.readable(&in.File); err != nil {
					return in.PlanID, err
				}
			}
			return in.PlanID, needPlan(in.PlanID)
		},
		func(ctx context.Context, in opsDiffIn) (*mcp.CallToolResult, api.Outcome) {
			body := api.DiffInput{Run: in.Run, Command: in.Command, File: in.File, AcceptExit: in.AcceptExit, By: s.session}
			_, res, out := callOps(ctx, s, api.OpsDiff, body, in.PlanID)
			return res, out
		})
	// ops_approve is not asked here: the core's approve-request route asks the broker's
	// interactive-only ops_approve request itself, and mints the token only after a person
	// allowed it.
	mcp.AddTool(s.mcp, &mcp.Tool{Name: api.ToolOpsApprove, Annotations: annotations("Ask the person to approve a plan", toolKind{}),
		Description: "Ask the person to approve a diffed plan. Interactive-only: the person sees the hash and the exact change in " +
			"the Airlock window (or at a terminal) and confirms; this call waits for them. Returns a single-use token valid 10 " +
			"minutes (60 at most), shown once. Next: ops_apply with the token."},
		func(ctx context.Context, req *mcp.CallToolRequest, in opsApproveIn) (*mcp.CallToolResult, any, error) {
			if err := needPlan(in.PlanID); err != nil {
				return errorResult("%v", err), nil, nil
			}
			c := call{tool: api.ToolOpsApprove, subject: in.PlanID}
			stop := s.progress(ctx, req, c)
			ans, err := localapi.Call(ctx, s.opts.Client, api.OpsApproveRequest,
				api.ApproveRequestBody{TTL: in.TTL, Context: s.context("mcp")}, in.PlanID)
			stop()
			if err != nil {
				var ae *api.Error
				if errors.As(err, &ae) && ae.Status == http.StatusNotFound && ae.Code == "" {
					return errorResult("this Airlock core cannot take approval requests from agents (no approve-request route): ask the person to run `airlock ops approve %s` in a terminal", in.PlanID), nil, nil
				}
				return errorResult("ops_approve %s: %v", in.PlanID, err), nil, nil
			}
			if ans.Decision.Verdict != api.Allow || ans.Approval == nil {
				return errorResult("%s", DenialText(api.ToolOpsApprove, in.PlanID, ans.Decision)), nil, nil
			}
			return jsonResult(ans.Approval), nil, nil
		})
	governed(s, &mcp.Tool{Name: api.ToolOpsApply, Annotations: annotations("Apply an approved plan", toolKind{Destructive: true, OpenWorld: true}),
		Description: "Apply an approved plan with its single-use token. The token is redeemed before anything runs; an unknown, " +
			"used, expired or other plan's token, or any drift from what was approved, and nothing runs. A failed apply does not " +
			"give the token back. Next: ops_verify."},
		func(in *opsApplyIn) (string, error) {
			if in.Token == "" {
				return in.PlanID, errors.New("token is required: get it from ops_approve")
			}
			return in.PlanID, needPlan(in.PlanID)
		},
		func(ctx context.Context, in opsApplyIn) (*mcp.CallToolResult, api.Outcome) {
			applied, res, out := callOps(ctx, s, api.OpsApply, api.ApplyInput{Token: in.Token, ApplyOptions: api.ApplyOptions{By: s.session}}, in.PlanID)
			if applied != nil && applied.Status == api.PlanFailed {
				res.IsError = true
			}
			return res, out
		})
	// Not read-only: for a commit-confirm plan the first verify sends the confirm the
	// person approved with the plan (only when every assertion passed).
	governed(s, &mcp.Tool{Name: api.ToolOpsVerify, Annotations: annotations("Verify an applied plan", toolKind{Idempotent: true, OpenWorld: true}),
		Description: "Run a plan's read-only verify assertions after the apply and record the evidence in the journal. For a " +
			"commit-confirm plan (one with a confirm step), the first verify after the apply also sends the approved confirm, " +
			"only when every assertion passed within the device's rollback window; otherwise none is sent and the device rolls " +
			"back by itself. A re-verify never confirms."},
		func(in *opsVerifyIn) (string, error) { return in.PlanID, needPlan(in.PlanID) },
		func(ctx context.Context, in opsVerifyIn) (*mcp.CallToolResult, api.Outcome) {
			_, res, out := callOps(ctx, s, api.OpsVerify, api.VerifyInput{}, in.PlanID)
			return res, out
		})
	governed(s, &mcp.Tool{Name: api.ToolOpsJournal, Annotations: annotations("Read the ops journal", toolKind{ReadOnly: true, Idempotent: true}),
		Description: "Query the project's append-only ops journal by plan or status; verify=true checks its hash chain and authentication."},
		func(in *opsJournalIn) (string, error) {
			if in.Project == "" && in.PlanID == "" {
				real, err := filepath.EvalSymlinks(s.opts.Policy.Cwd)
				if err != nil {
					real = s.opts.Policy.Cwd
				}
				in.Project = "dir:" + real
			}
			return in.Project + in.PlanID, nil
		},
		func(ctx context.Context, in opsJournalIn) (*mcp.CallToolResult, api.Outcome) {
			q := api.JournalInput{Project: in.Project, PlanID: in.PlanID, Status: api.PlanStatus(in.Status), Verify: in.Verify}
			_, res, out := callOps(ctx, s, api.OpsJournal, q)
			return res, out
		})
}
