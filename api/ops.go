package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The ops flow's wire: plan → diff → approve → apply → verify → journal. Package ops
// aliases these types; the core serves the routes below, the CLI, the MCP server's ops
// tools and the window use them.

// Ops routes.
var (
	// OpsCreatePlan opens a plan from a plan file's text.
	OpsCreatePlan = route[PlanSubmission, *PlanView]("POST", "/v1/ops/plans")
	// OpsListPlans lists plans, newest first.
	OpsListPlans = route[PlanFilter, []PlanSummary]("GET", "/v1/ops/plans")
	// OpsGetPlan is one plan with its latest diff and approval.
	OpsGetPlan = route[None, *PlanView]("GET", "/v1/ops/plans/{id}")
	// OpsDiff attaches the plan's diff (the path's id wins over DiffInput.PlanID).
	OpsDiff = route[DiffInput, *DiffResult]("POST", "/v1/ops/plans/{id}/diff")
	// OpsApprovalPrompt is what a person sees before approving.
	OpsApprovalPrompt = route[None, *ApprovalPrompt]("GET", "/v1/ops/plans/{id}/approval")
	// OpsApprove mints the single-use token; only a person may (ApproveBody.Proof).
	OpsApprove = route[ApproveBody, *ApproveResult]("POST", "/v1/ops/plans/{id}/approve")
	// OpsReject records a person's "no".
	OpsReject = route[RejectBody, *PlanView]("POST", "/v1/ops/plans/{id}/reject")
	// OpsApply redeems the token and runs the plan. An apply that ran and failed is an
	// answer (Status failed, with its Reason), not an error.
	OpsApply = route[ApplyInput, *ApplyResult]("POST", "/v1/ops/plans/{id}/apply")
	// OpsVerify runs the plan's read-only assertions.
	OpsVerify = route[VerifyInput, *VerifyResult]("POST", "/v1/ops/plans/{id}/verify")
	// OpsJournal reads a project's journal (Verify: with its chain's check).
	OpsJournal = route[JournalInput, *JournalPage]("GET", "/v1/ops/journal")
	// OpsProjects lists the projects that have a journal.
	OpsProjects = route[None, []string]("GET", "/v1/ops/projects")
)

// PlanStatus is where a plan stands in the flow:
//
//	draft → diffed → approved → applying → applied | failed → verified | verify_failed
//
// plus rejected (a person said no), expired (the approval token lapsed unused),
// superseded (a newer plan for the same target replaced it). A failed or expired plan
// can be diffed again and re-approved; a new approval is always needed for another apply.
type PlanStatus string

// Plan statuses.
const (
	PlanDraft        PlanStatus = "draft"
	PlanDiffed       PlanStatus = "diffed"
	PlanApproved     PlanStatus = "approved"
	PlanApplying     PlanStatus = "applying"
	PlanApplied      PlanStatus = "applied"
	PlanFailed       PlanStatus = "failed"
	PlanVerified     PlanStatus = "verified"
	PlanVerifyFailed PlanStatus = "verify_failed"
	PlanRejected     PlanStatus = "rejected"
	PlanExpired      PlanStatus = "expired"
	PlanSuperseded   PlanStatus = "superseded"
)

// Reversibility says how a step can be undone: reversible, hard or irreversible.
type Reversibility string

// BlastRadius says how much a step can break: low, med or high.
type BlastRadius string

// OpsTarget is what the plan changes: a cloud account and region, or a device.
type OpsTarget struct {
	Provider string `json:"provider"`          // e.g. aws, gcp, cloudflare, vyos, sqlite, git
	Account  string `json:"account,omitempty"` // account, project or subscription
	Region   string `json:"region,omitempty"`
	Device   string `json:"device,omitempty"` // a router, a host, a database file
}

// OpsStep is one effect of the plan, as the person reviewing it should read it.
type OpsStep struct {
	Description   string        `json:"description"`
	Effect        string        `json:"effect"` // e.g. "add firewall rule", "add column"
	Reversibility Reversibility `json:"reversibility"`
	BlastRadius   BlastRadius   `json:"blast_radius"`
	Rollback      string        `json:"rollback,omitempty"` // how to undo it, when reversible or hard
}

// OpsAssertion is one read-only check run by verify. Command is a single command line
// (words, quotes; no shell control characters) that must pass the read-only allowlist.
// It passes when the exit status equals ExpectExit (0 when unset) and, when ExpectText
// is set, stdout contains ExpectText.
type OpsAssertion struct {
	Name       string `json:"name,omitempty"`
	Command    string `json:"command"`
	ExpectText string `json:"expect_text,omitempty"`
	ExpectExit *int   `json:"expect_exit,omitempty"`
}

// WantExit is the exit status the assertion expects.
func (a OpsAssertion) WantExit() int {
	if a.ExpectExit == nil {
		return 0
	}
	return *a.ExpectExit
}

// OpsCommand is an exact command: either Argv, executed directly without a shell, or
// Shell, a string run as `/bin/sh -c <Shell>` (for redirections and pipelines such as
// `sqlite3 db.sqlite < migrate.sql`). Exactly one is set. Both forms are hashed exactly
// as given: no expansion, trimming or normalisation happens before hashing or running.
type OpsCommand struct {
	Argv  []string `json:"argv,omitempty"`
	Shell string   `json:"shell,omitempty"`
}

// IsZero reports whether neither form is set (json's omitzero uses it).
func (c OpsCommand) IsZero() bool { return len(c.Argv) == 0 && c.Shell == "" }

// Kind is "argv", "shell" or "" for the zero command.
func (c OpsCommand) Kind() string {
	switch {
	case len(c.Argv) > 0:
		return "argv"
	case c.Shell != "":
		return "shell"
	}
	return ""
}

// Equal reports whether two commands are identical in form and content.
func (c OpsCommand) Equal(o OpsCommand) bool {
	if c.Shell != o.Shell || len(c.Argv) != len(o.Argv) {
		return false
	}
	for i := range c.Argv {
		if c.Argv[i] != o.Argv[i] {
			return false
		}
	}
	return true
}

// String renders the command for people: a shell string as written, argv shell-quoted.
func (c OpsCommand) String() string {
	if c.Shell != "" {
		return c.Shell
	}
	return ShellJoin(c.Argv)
}

// OperationPlan is the content of a plan: everything its canonical hash covers.
type OperationPlan struct {
	Project string    `json:"project"` // project key: "dir:<working directory, symlinks resolved>" or "name:<name>"
	Target  OpsTarget `json:"target"`
	Intent  string    `json:"intent"`
	// Apply is the exact mutation.
	Apply OpsCommand `json:"apply"`
	// Snapshot, when set, is run read-only before and after the apply; its output is kept.
	Snapshot OpsCommand `json:"snapshot,omitzero"`
	// Diff, when set, is the read-only command `ops diff --run` runs to produce the diff.
	Diff OpsCommand `json:"diff,omitzero"`
	// Workdir is the absolute working directory, symlinks resolved, of every command.
	Workdir string `json:"workdir"`
	// Network says the apply needs the network (cloud CLIs); the sandbox posture decides.
	Network bool `json:"network,omitempty"`
	// TimeoutSeconds bounds the apply; 0 means the service default.
	TimeoutSeconds int            `json:"timeout_seconds,omitempty"`
	Steps          []OpsStep      `json:"steps"`
	Verify         []OpsAssertion `json:"verify"`
	// Inputs are files the apply reads (a migration script, a terraform plan file),
	// relative to Workdir. Their sha256 is pinned when the diff is attached; at approval
	// their bytes are kept, and the apply command, which must name each input as a word,
	// is run on those copies. An apply refuses if any changed since (drift in "inputs").
	Inputs []string `json:"inputs,omitempty"`
	// Confirm, when set, makes the apply a commit-confirm: Apply commits with the
	// device's own rollback timer (VyOS `commit-confirm N`, Junos `commit confirmed N`),
	// and the first verify after the apply runs Confirm (VyOS `confirm`, Junos `commit`)
	// only when every assertion passed and the window has not run out; otherwise Airlock
	// withholds it and the device rolls back by itself.
	Confirm OpsCommand `json:"confirm,omitzero"`
	// ConfirmWithinSeconds is the device's rollback window as the apply command sets it
	// (required with Confirm). Airlock sends no confirm once that long has passed since
	// the apply started: by then the device has rolled back, and a late confirm could
	// confirm someone else's pending commit.
	ConfirmWithinSeconds int `json:"confirm_within_seconds,omitempty"`
}

// PlanInput is what ops_plan takes, and the format of a plan file: the plan's content,
// and optionally the id of an older plan for the same target that this one replaces.
type PlanInput struct {
	OperationPlan
	Supersedes string `json:"supersedes,omitempty"`
	By         string `json:"by,omitempty"` // who opened the plan (agent or person), for the journal
}

// PlanSubmission is OpsCreatePlan's body: the plan file as written (the core decodes
// it strictly, naming an unknown field), the directory relative paths in it are
// relative to, and who opens it when the file does not say.
type PlanSubmission struct {
	Data    string `json:"data"`
	BaseDir string `json:"base_dir"`
	By      string `json:"by,omitempty"`
}

// InputDigest is the sha256 of one of a plan's input files.
type InputDigest struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// PlanView is a plan as the surfaces show it.
type PlanView struct {
	ID           string        `json:"id"`
	Project      string        `json:"project"`
	Hash         string        `json:"hash"`
	Status       PlanStatus    `json:"status"`
	Plan         OperationPlan `json:"plan"`
	Supersedes   string        `json:"supersedes,omitempty"`
	SupersededBy string        `json:"superseded_by,omitempty"`
	CreatedBy    string        `json:"created_by,omitempty"`
	CreatedAt    time.Time     `json:"created_at"`
	UpdatedAt    time.Time     `json:"updated_at"`
	// Intact is false when the stored plan no longer hashes to Hash (the database was edited).
	Intact bool              `json:"intact"`
	Diff   *PlanArtifactView `json:"diff,omitempty"`
	Token  *PlanTokenView    `json:"token,omitempty"`
}

// PlanTokenView describes the newest approval of a plan (never the token itself).
type PlanTokenView struct {
	ApprovedBy string    `json:"approved_by,omitempty"`
	ApprovedAt time.Time `json:"approved_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	Used       bool      `json:"used"`
	Revoked    bool      `json:"revoked"`
	Live       bool      `json:"live"`
}

// PlanArtifactView is evidence kept for a plan: a diff, a snapshot, the apply's output,
// a verify assertion's output. Content is redacted and capped; SHA256 is of the bytes
// as produced.
type PlanArtifactView struct {
	ID        uint      `json:"id"`
	Kind      string    `json:"kind"`
	Source    string    `json:"source"`
	ExitCode  int       `json:"exit_code"`
	TimedOut  bool      `json:"timed_out,omitempty"`
	Truncated bool      `json:"truncated,omitempty"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
}

// PlanFilter selects plans (OpsListPlans' query).
type PlanFilter struct {
	Project string     `json:"project,omitempty"`
	Status  PlanStatus `json:"status,omitempty"`
	Limit   int        `json:"limit,omitempty"` // default 100
}

// PlanSummary is one line of the plan list.
type PlanSummary struct {
	ID        string     `json:"id"`
	Project   string     `json:"project"`
	Status    PlanStatus `json:"status"`
	Hash      string     `json:"hash"`
	Provider  string     `json:"provider"`
	Account   string     `json:"account,omitempty"`
	Region    string     `json:"region,omitempty"`
	Device    string     `json:"device,omitempty"`
	Intent    string     `json:"intent"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// DiffInput is what ops_diff takes. Give exactly one of Run (run the plan's diff
// command), Command (run this command instead) or File (attach a file, relative to the
// plan's working directory). Commands run read-only.
type DiffInput struct {
	PlanID  string      `json:"plan_id,omitempty"`
	Run     bool        `json:"run,omitempty"`
	Command *OpsCommand `json:"command,omitempty"`
	File    string      `json:"file,omitempty"`
	// AcceptExit lists the exit statuses that mean "the diff was produced"; default 0 and 1
	// (diff(1) and `git diff --exit-code` exit 1 when there are differences). Use 0 and 2 for
	// `terraform plan -detailed-exitcode`.
	AcceptExit []int  `json:"accept_exit,omitempty"`
	By         string `json:"by,omitempty"`
}

// DiffResult is the attached artifact and the plan's new status.
type DiffResult struct {
	PlanID   string            `json:"plan_id"`
	PlanHash string            `json:"plan_hash"`
	Status   PlanStatus        `json:"status"`
	Diff     *PlanArtifactView `json:"diff"`
	// Inputs are the plan's input files as the diff saw them.
	Inputs []InputDigest `json:"inputs,omitempty"`
}

// ApprovalPrompt is what a person must see before approving: the hash, the exact change
// and the diff. The permission popup, the window and the CLI show it.
type ApprovalPrompt struct {
	PlanID          string     `json:"plan_id"`
	Hash            string     `json:"hash"`
	Status          PlanStatus `json:"status"`
	Target          OpsTarget  `json:"target"`
	Intent          string     `json:"intent"`
	ApplyCommand    string     `json:"apply_command"`
	SnapshotCommand string     `json:"snapshot_command,omitempty"`
	// ConfirmCommand is the commit-confirm plan's confirm, sent only after every
	// assertion passed within ConfirmWithinSeconds of the apply's start.
	ConfirmCommand       string            `json:"confirm_command,omitempty"`
	ConfirmWithinSeconds int               `json:"confirm_within_seconds,omitempty"`
	Workdir              string            `json:"workdir"`
	Network              bool              `json:"network"`
	Steps                []OpsStep         `json:"steps"`
	Verify               []OpsAssertion    `json:"verify"`
	Diff                 *PlanArtifactView `json:"diff"`
	// Inputs are the plan's input files as they are now (they must match the diff's).
	Inputs []InputDigest `json:"inputs,omitempty"`
	// Worst is the highest blast radius and the least reversible step, for the popup's badge.
	WorstBlastRadius   BlastRadius   `json:"worst_blast_radius"`
	WorstReversibility Reversibility `json:"worst_reversibility"`
}

// ApproveInput is ops_approve's input, as the core hands it to package ops.
type ApproveInput struct {
	PlanID string `json:"plan_id"`
	// TTL is a Go duration ("10m", "1h"); empty means 10 minutes.
	TTL string `json:"ttl,omitempty"`
	// ConfirmHashPrefix is the start of the plan hash the person typed (at least 8 characters).
	ConfirmHashPrefix string `json:"confirm_hash_prefix"`
}

// ApproveBody is OpsApprove's body: the plan hash's start as the person typed it, the
// token's lifetime, and the proof that a person approves (a login password, or under
// terminal_proof = "tty" the typed prefix itself, which the core takes as the
// confirmation when Proof carries none).
type ApproveBody struct {
	TTL               string `json:"ttl,omitempty"`
	ConfirmHashPrefix string `json:"confirm_hash_prefix"`
	Proof             Proof  `json:"proof"`
}

// ApproveResult carries the token. Token appears here exactly once; only its sha256 is
// stored, so it cannot be shown again.
type ApproveResult struct {
	PlanID     string    `json:"plan_id"`
	PlanHash   string    `json:"plan_hash"`
	Token      string    `json:"token"`
	ExpiresAt  time.Time `json:"expires_at"`
	DiffSHA256 string    `json:"diff_sha256"`
}

// RejectBody is OpsReject's body.
type RejectBody struct {
	Reason string `json:"reason"`
}

// ApplyOptions are what the caller presents besides the token. The command, snapshot
// command and working directory, when given, must equal the approved ones exactly (an
// agent that means to run something else is refused before the token is spent).
type ApplyOptions struct {
	By              string      `json:"by,omitempty"`
	ApplyCommand    *OpsCommand `json:"apply_command,omitempty"`
	SnapshotCommand *OpsCommand `json:"snapshot_command,omitempty"`
	Workdir         string      `json:"workdir,omitempty"`
}

// ApplyInput is ops_apply's input and OpsApply's body (the path's id wins over PlanID).
type ApplyInput struct {
	PlanID string `json:"plan_id,omitempty"`
	Token  string `json:"token"`
	ApplyOptions
}

// ApplyResult is the outcome of an apply that ran.
type ApplyResult struct {
	PlanID         string            `json:"plan_id"`
	PlanHash       string            `json:"plan_hash"`
	Status         PlanStatus        `json:"status"` // applied or failed
	ExitCode       int               `json:"exit_code"`
	TimedOut       bool              `json:"timed_out,omitempty"`
	Duration       time.Duration     `json:"duration_ns"`
	Output         *PlanArtifactView `json:"output,omitempty"`
	SnapshotBefore *PlanArtifactView `json:"snapshot_before,omitempty"`
	SnapshotAfter  *PlanArtifactView `json:"snapshot_after,omitempty"`
	Reason         string            `json:"reason,omitempty"` // why it failed
}

// VerifyInput is ops_verify's input and OpsVerify's body (the path's id wins over PlanID).
type VerifyInput struct {
	PlanID string `json:"plan_id,omitempty"`
	By     string `json:"by,omitempty"`
}

// AssertionResult is the evidence of one assertion.
type AssertionResult struct {
	Index      int    `json:"index"`
	Name       string `json:"name,omitempty"`
	Command    string `json:"command"`
	Passed     bool   `json:"passed"`
	ExitCode   int    `json:"exit_code"`
	WantExit   int    `json:"want_exit"`
	ExpectText string `json:"expect_text,omitempty"`
	Output     string `json:"output"` // redacted, capped
	SHA256     string `json:"sha256"` // of the output as produced
	Reason     string `json:"reason,omitempty"`
}

// VerifyResult is the outcome of a verify run.
type VerifyResult struct {
	PlanID     string            `json:"plan_id"`
	Status     PlanStatus        `json:"status"` // verified or verify_failed
	Assertions []AssertionResult `json:"assertions"`
	// Confirm is what became of a commit-confirm plan's confirm (nil for other plans and
	// for a re-verify, which never confirms).
	Confirm *ConfirmResult `json:"confirm,omitempty"`
}

// ConfirmOutcome says what became of a commit-confirm plan's confirm.
type ConfirmOutcome string

// Confirm outcomes.
const (
	// ConfirmSent: every assertion passed and the confirm command succeeded.
	ConfirmSent ConfirmOutcome = "confirmed"
	// ConfirmFailed: the confirm command ran and failed; the device rolls back by itself.
	ConfirmFailed ConfirmOutcome = "confirm_failed"
	// ConfirmWithheld: an assertion failed or the window ran out; nothing was sent and
	// the device rolls back by itself.
	ConfirmWithheld ConfirmOutcome = "confirm_withheld"
)

// ConfirmResult is the evidence of a commit-confirm plan's confirm.
type ConfirmResult struct {
	Outcome  ConfirmOutcome `json:"outcome"`
	Command  string         `json:"command"`
	ExitCode int            `json:"exit_code"`        // -1 when it did not run
	Output   string         `json:"output,omitempty"` // redacted, capped
	SHA256   string         `json:"sha256,omitempty"` // of the output as produced
	Reason   string         `json:"reason,omitempty"`
	// Deadline is when the device's rollback window ends (the apply's start plus
	// ConfirmWithinSeconds).
	Deadline time.Time `json:"deadline"`
}

// JournalQuery selects journal entries. Project is required; the rest filter.
type JournalQuery struct {
	Project  string     `json:"project"`
	PlanID   string     `json:"plan_id,omitempty"`
	Status   PlanStatus `json:"status,omitempty"` // the plan's status recorded with the entry
	Event    string     `json:"event,omitempty"`
	AfterSeq int64      `json:"after_seq,omitempty"`
	Limit    int        `json:"limit,omitempty"` // default 200, at most 10000
}

// JournalInput is ops_journal's input and OpsJournal's query: a JournalQuery (without a
// project, the plan's) and whether to check the chain. It is flat, so it travels in a
// URL query.
type JournalInput struct {
	Project  string     `json:"project,omitempty"`
	PlanID   string     `json:"plan_id,omitempty"`
	Status   PlanStatus `json:"status,omitempty"`
	Event    string     `json:"event,omitempty"`
	AfterSeq int64      `json:"after_seq,omitempty"`
	Limit    int        `json:"limit,omitempty"`
	Verify   bool       `json:"verify,omitempty"`
}

// Query is the input's selection of entries.
func (in JournalInput) Query() JournalQuery {
	return JournalQuery{Project: in.Project, PlanID: in.PlanID, Status: in.Status, Event: in.Event,
		AfterSeq: in.AfterSeq, Limit: in.Limit}
}

// JournalEntryView is a journal entry as the surfaces show it; Detail is the entry's
// JSON detail (an object).
type JournalEntryView struct {
	Seq      int64           `json:"seq"`
	ID       uint            `json:"id"`
	PlanID   string          `json:"plan_id,omitempty"`
	Event    string          `json:"event"`
	Status   PlanStatus      `json:"status,omitempty"`
	Actor    string          `json:"actor,omitempty"`
	At       string          `json:"at"`
	Detail   json.RawMessage `json:"detail,omitempty" ts_type:"Record<string, any>"`
	PrevHash string          `json:"prev_hash"`
	Hash     string          `json:"hash"`
}

// JournalProblem is one thing wrong with a journal, naming the row.
type JournalProblem struct {
	Kind   string `json:"kind"` // edited, deleted, inserted, reordered, head, key, anchor, truncated, rolled back
	Seq    int64  `json:"seq"`  // the seq the row carries (or the first missing seq)
	ID     uint   `json:"id"`   // the row id (0 for missing rows)
	Detail string `json:"detail"`
}

func (p JournalProblem) String() string {
	if p.ID == 0 {
		return fmt.Sprintf("%s: seq %d: %s", p.Kind, p.Seq, p.Detail)
	}
	return fmt.Sprintf("%s: seq %d (row id %d): %s", p.Kind, p.Seq, p.ID, p.Detail)
}

// JournalReport is the check of a project's journal: its hash chain, each entry's
// authentication and the authenticated head. A journal that fails is a report (OK
// false, with its problems), not an error.
type JournalReport struct {
	Project string `json:"project"`
	Entries int    `json:"entries"`
	// Expected is how many entries the journal should hold: the anchor's last seq when it
	// is ahead of what the database holds (a truncation), Entries otherwise.
	Expected int              `json:"expected"`
	LastSeq  int64            `json:"last_seq"`
	OK       bool             `json:"ok"`
	Problems []JournalProblem `json:"problems,omitempty"`
}

// JournalPage is a project's journal entries, oldest first, and, when asked for, its
// chain's check. VerifyError says the check itself could not run (the keyring did not
// answer); the window shows the entries anyway, the API answers an error instead.
type JournalPage struct {
	Project      string             `json:"project"`
	Entries      []JournalEntryView `json:"entries"`
	Verification *JournalReport     `json:"verification,omitempty"`
	VerifyError  string             `json:"verify_error,omitempty"`
}

// PlanDetail is one plan as the window's Ops page shows it: the plan with its latest
// diff and approval (never the token), every artifact kept for it, oldest first (diffs,
// snapshots before and after, the apply's output, each verify assertion's output), and
// the newest verify run, rebuilt from the journal and the evidence (nil before the first).
type PlanDetail struct {
	Plan         *PlanView          `json:"plan"`
	Evidence     []PlanArtifactView `json:"evidence"`
	Verification *VerifyResult      `json:"verification,omitempty"`
}

// ApproveRequestParams are the parameters of the broker's interactive-only ops_approve
// request, which an agent's approve-request raises: what the person's popup shows
// before they approve (fields in sorted order, as the request is audited).
type ApproveRequestParams struct {
	ApplyCommand         string            `json:"apply_command"`
	ConfirmCommand       string            `json:"confirm_command,omitempty"`
	ConfirmWithinSeconds int               `json:"confirm_within_seconds,omitempty"`
	Diff                 *PlanArtifactView `json:"diff"`
	Hash                 string            `json:"hash"`
	Intent               string            `json:"intent"`
	PlanID               string            `json:"plan_id"`
	SnapshotCommand      string            `json:"snapshot_command"`
	Steps                []OpsStep         `json:"steps"`
	Target               OpsTarget         `json:"target"`
	TTL                  string            `json:"ttl"`
	Workdir              string            `json:"workdir"`
	WorstBlastRadius     BlastRadius       `json:"worst_blast_radius"`
	WorstReversibility   Reversibility     `json:"worst_reversibility"`
}

// OpsApproveRequest is an agent asking the person to approve a plan (the MCP ops_approve
// tool): the broker's interactive-only ops_approve request waits for a person, and only
// then is the token minted.
var OpsApproveRequest = route[ApproveRequestBody, ApproveRequestAnswer]("POST", "/v1/ops/plans/{id}/approve-request")

// ApproveRequestBody is OpsApproveRequest's body: the token's lifetime and who asks.
type ApproveRequestBody struct {
	TTL     string  `json:"ttl,omitempty"`
	Context Context `json:"context"`
}

// ApproveRequestAnswer is what the agent gets back: the person's decision and, when they
// approved, the token (shown this once).
type ApproveRequestAnswer struct {
	Decision Decision       `json:"decision"`
	Approval *ApproveResult `json:"approval,omitempty"`
}

// The bounds of an approval token's TTL (ApproveBody.TTL).
const (
	DefaultTokenTTL = 10 * time.Minute
	// MinTokenTTL: a shorter token would expire before an apply could redeem it.
	MinTokenTTL = 10 * time.Second
	MaxTokenTTL = 60 * time.Minute
)

// ParseTokenTTL reads an approval's TTL as a caller gives it ("": the default) within
// its bounds, so that a wrong one is refused before the person is asked to approve.
func ParseTokenTTL(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultTokenTTL, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("ttl %q is not a duration such as 10m or 1h", s)
	}
	if d < MinTokenTTL || d > MaxTokenTTL {
		return 0, fmt.Errorf("ttl %s is out of bounds: give one from %s (time to run the apply) to %s", d, MinTokenTTL, MaxTokenTTL)
	}
	return d, nil
}
