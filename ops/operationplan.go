package ops

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/redact"
)

// Status is where a plan stands in the flow ([api.PlanStatus]).
type Status = api.PlanStatus

// Plan statuses.
const (
	StatusDraft        = api.PlanDraft
	StatusDiffed       = api.PlanDiffed
	StatusApproved     = api.PlanApproved
	StatusApplying     = api.PlanApplying
	StatusApplied      = api.PlanApplied
	StatusFailed       = api.PlanFailed
	StatusVerified     = api.PlanVerified
	StatusVerifyFailed = api.PlanVerifyFailed
	StatusRejected     = api.PlanRejected
	StatusExpired      = api.PlanExpired
	StatusSuperseded   = api.PlanSuperseded
)

// Statuses lists every status, in flow order.
var Statuses = []Status{StatusDraft, StatusDiffed, StatusApproved, StatusApplying, StatusApplied, StatusFailed,
	StatusVerified, StatusVerifyFailed, StatusRejected, StatusExpired, StatusSuperseded}

// Reversibility says how a step can be undone.
type Reversibility = api.Reversibility

// Reversibility values.
const (
	Reversible   Reversibility = "reversible"
	Hard         Reversibility = "hard"
	Irreversible Reversibility = "irreversible"
)

// BlastRadius says how much a step can break.
type BlastRadius = api.BlastRadius

// Blast radius values.
const (
	BlastLow  BlastRadius = "low"
	BlastMed  BlastRadius = "med"
	BlastHigh BlastRadius = "high"
)

// Target is what the plan changes: a cloud account and region, or a device.
type Target = api.OpsTarget

// Step is one effect of the plan, as the person reviewing it should read it.
type Step = api.OpsStep

// Assertion is one read-only check run by Verify. Command is a single command line
// parsed by [ParseReadOnlyCommand] (words, quotes; no shell control characters) and must
// pass the read-only allowlist.
type Assertion = api.OpsAssertion

// OperationPlan is the content of a plan: everything its canonical hash covers.
type OperationPlan = api.OperationPlan

// Limits on plan content.
const (
	MaxPlanTimeout = 6 * time.Hour
	maxTextField   = 4096
	maxSteps       = 200
	maxAssertions  = 100
)

// Validate checks every field of p and returns a [ValidationError] naming the first
// wrong one. Workdir must be absolute; [Service.CreatePlan] resolves it before validating.
func Validate(p *OperationPlan) error {
	if strings.TrimSpace(p.Project) == "" {
		return fieldErr("project", "is required (the app fills it from the working directory)")
	}
	if strings.TrimSpace(p.Target.Provider) == "" {
		return fieldErr("target.provider", "is required, e.g. aws, gcp, vyos, sqlite, git")
	}
	if p.Target.Account == "" && p.Target.Region == "" && p.Target.Device == "" {
		return fieldErr("target", "needs an account, a region or a device")
	}
	for name, v := range map[string]string{"target.provider": p.Target.Provider, "target.account": p.Target.Account,
		"target.region": p.Target.Region, "target.device": p.Target.Device, "intent": p.Intent} {
		if len(v) > maxTextField {
			return fieldErr(name, fmt.Sprintf("is longer than %d bytes", maxTextField))
		}
	}
	if strings.TrimSpace(p.Intent) == "" {
		return fieldErr("intent", "is required: say in one sentence what the change is for")
	}
	if err := validateCommand(p.Apply, "apply", true); err != nil {
		return err
	}
	if err := validateCommand(p.Snapshot, "snapshot", false); err != nil {
		return err
	}
	if err := validateCommand(p.Diff, "diff", false); err != nil {
		return err
	}
	if err := validateCommand(p.Confirm, "confirm", false); err != nil {
		return err
	}
	switch {
	case !p.Confirm.IsZero() && p.ConfirmWithinSeconds <= 0:
		return fieldErr("confirm_within_seconds", "is required with confirm: the device's rollback window in seconds, as the apply command sets it (VyOS commit-confirm 5 is 300)")
	case p.Confirm.IsZero() && p.ConfirmWithinSeconds != 0:
		return fieldErr("confirm", "is required with confirm_within_seconds: the command that confirms the commit (VyOS confirm, Junos commit)")
	case time.Duration(p.ConfirmWithinSeconds)*time.Second > MaxPlanTimeout:
		return fieldErr("confirm_within_seconds", fmt.Sprintf("must be at most %d", int(MaxPlanTimeout.Seconds())))
	}
	if p.Workdir == "" {
		return fieldErr("workdir", "is required")
	}
	if !filepath.IsAbs(p.Workdir) || filepath.Clean(p.Workdir) != p.Workdir {
		return fieldErr("workdir", "must be an absolute, clean path")
	}
	if p.TimeoutSeconds < 0 || time.Duration(p.TimeoutSeconds)*time.Second > MaxPlanTimeout {
		return fieldErr("timeout_seconds", fmt.Sprintf("must be between 0 (the default) and %d", int(MaxPlanTimeout.Seconds())))
	}
	if len(p.Steps) == 0 {
		return fieldErr("steps", "needs at least one step describing the effect")
	}
	if len(p.Steps) > maxSteps {
		return fieldErr("steps", fmt.Sprintf("has more than %d steps", maxSteps))
	}
	for i, s := range p.Steps {
		f := "steps[" + strconv.Itoa(i) + "]"
		if strings.TrimSpace(s.Description) == "" {
			return fieldErr(f+".description", "is required")
		}
		if strings.TrimSpace(s.Effect) == "" {
			return fieldErr(f+".effect", "is required, e.g. \"add column\"")
		}
		switch s.Reversibility {
		case Reversible, Hard, Irreversible:
		default:
			return fieldErr(f+".reversibility", fmt.Sprintf("is %q: use reversible, hard or irreversible", s.Reversibility))
		}
		switch s.BlastRadius {
		case BlastLow, BlastMed, BlastHigh:
		default:
			return fieldErr(f+".blast_radius", fmt.Sprintf("is %q: use low, med or high", s.BlastRadius))
		}
		if len(s.Description) > maxTextField || len(s.Effect) > maxTextField || len(s.Rollback) > maxTextField {
			return fieldErr(f, fmt.Sprintf("has a field longer than %d bytes", maxTextField))
		}
	}
	for i, in := range p.Inputs {
		f := "inputs[" + strconv.Itoa(i) + "]"
		if in == "" || strings.ContainsRune(in, 0) || filepath.Clean(in) != in {
			return fieldErr(f, fmt.Sprintf("%q must be a clean file path (relative to workdir, or absolute)", in))
		}
	}
	if len(p.Inputs) > maxAssertions {
		return fieldErr("inputs", fmt.Sprintf("has more than %d files", maxAssertions))
	}
	if len(p.Inputs) > 0 {
		// The apply, the confirm and the snapshot run on the approved copies: each input
		// must be named where one of them can be pointed at its copy.
		var all []StagedInput
		for _, in := range p.Inputs {
			all = append(all, StagedInput{Path: in, SHA256: strings.Repeat("0", 64)})
		}
		named := map[string]bool{}
		for _, ac := range approvedCommands(p) {
			spec := RunSpec{Command: ac.cmd, Dir: p.Workdir, Inputs: pinnedFor(ac.cmd, p.Workdir, all)}
			if _, err := spec.CommandFor(StagedPath); err != nil {
				return err
			}
			for _, in := range spec.Inputs {
				named[in.Path] = true
			}
		}
		for _, in := range p.Inputs {
			if !named[in] {
				return fieldErr("inputs", fmt.Sprintf("%q is not named in the apply command (nor the confirm or snapshot): Airlock runs them on the approved copy of each input, "+
					"so a command must name it as a word (psql -f migrate.sql, sqlite3 db < migrate.sql, sqlite3 db '.read migrate.sql'); "+
					"a file read only by a script the command runs cannot be pinned", in))
			}
		}
	}
	if len(p.Verify) == 0 {
		return fieldErr("verify", "needs at least one read-only assertion to check the outcome")
	}
	if len(p.Verify) > maxAssertions {
		return fieldErr("verify", fmt.Sprintf("has more than %d assertions", maxAssertions))
	}
	for i, a := range p.Verify {
		f := "verify[" + strconv.Itoa(i) + "]"
		if _, err := ParseReadOnlyCommand(a.Command); err != nil {
			return fieldErr(f+".command", err.Error())
		}
		if kinds := redact.Kinds(a.Command); len(kinds) > 0 {
			return fieldErr(f+".command", "carries a credential ("+kinds[0]+"): assertions are stored exactly; read credentials from the environment instead")
		}
		if kinds := redact.Kinds(a.ExpectText); len(kinds) > 0 {
			return fieldErr(f+".expect_text", "carries a credential ("+kinds[0]+"): assertions are stored exactly; check for a part of the output that is not secret")
		}
		if a.ExpectExit != nil && (*a.ExpectExit < 0 || *a.ExpectExit > 255) {
			return fieldErr(f+".expect_exit", "must be between 0 and 255")
		}
		if len(a.ExpectText) > maxTextField || len(a.Name) > maxTextField {
			return fieldErr(f, fmt.Sprintf("has a field longer than %d bytes", maxTextField))
		}
	}
	return nil
}
