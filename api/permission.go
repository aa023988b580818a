package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The permission broker's wire: what a tool call asks (Request), under which policy
// (Context), what the broker answers (Decision), what happened when it ran (Outcome),
// and what the approvals, grants and audit routes list. Package permission aliases
// these types; the MCP server and the hook adapter (app/gateway) and the CLI use them
// as they are.

// Verdict is the outcome of the pipeline for one request.
type Verdict string

// Verdicts.
const (
	Allow Verdict = "allow"
	Ask   Verdict = "ask"
	Deny  Verdict = "deny"
)

// Tier is how much confirmation a tool needs: P0 runs silently, P1 asks the first time
// and may be remembered, P2 asks every time.
type Tier string

// Rank orders tiers, P0 < P1 < P2; an unknown tier ranks as P2 (fail closed).
func (t Tier) Rank() int {
	switch t {
	case "P0":
		return 0
	case "P1":
		return 1
	default:
		return 2
	}
}

// Max returns the higher of two tiers; an empty tier counts as none.
func (t Tier) Max(o Tier) Tier {
	if o == "" {
		return t
	}
	if t == "" || o.Rank() > t.Rank() {
		return o
	}
	return t
}

// Layer names the pipeline step that produced a decision (isolation, hook, preflight,
// rule, grant, task, tier, policy, reviewer, person).
type Layer string

// Kind marks requests that need a person, whatever the rules, grants or policy say.
type Kind string

// Scope is how long and where a person's allow is remembered: once, session, task,
// department or always.
type Scope string

// Scopes an allow may choose (PendingRequest.Scopes lists those a request offers).
const (
	// ScopeOnce allows this one request.
	ScopeOnce Scope = "once"
	// ScopeSession remembers it for the rest of the agent session or dispatch run.
	ScopeSession Scope = "session"
	// ScopeTask remembers it for every later run of the request's dispatch task, and
	// for no other task.
	ScopeTask Scope = "task"
	// ScopeDepartment remembers it for every task and session of the request's
	// department, and for no other department.
	ScopeDepartment Scope = "department"
	// ScopeAlways remembers it from now on in the request's place: its department,
	// else its workspace or working directory (for a request with a department it is
	// the department grant, offered as ScopeDepartment).
	ScopeAlways Scope = "always"
)

// ApprovalPolicy says when the person is asked: untrusted, on-request, on-failure, never.
type ApprovalPolicy string

// ReviewerMode says who answers requests that ask: user, or auto_review first.
type ReviewerMode string

// PolicySummary is the effective sandbox and approval policy of the caller, as recorded
// when its run or session started.
type PolicySummary struct {
	Mode           string         `json:"mode,omitempty"`            // read-only | workspace-write | full-access
	Network        NetworkAccess  `json:"network"`                   // off | allowlist | on (old booleans decode)
	ApprovalPolicy ApprovalPolicy `json:"approval_policy,omitempty"` // empty: the broker's effective setting
	Reviewer       ReviewerMode   `json:"reviewer,omitempty"`        // empty: the broker's effective setting
	Posture        string         `json:"posture,omitempty"`         // "" or "cloudops"
	// Profile is the profile the request's run recorded (its task's or department's), or
	// the one an MCP session chose (--profile, AIRLOCK_PROFILE): it may only tighten the
	// broker's tiers and approval policy for the request.
	Profile string `json:"profile,omitempty"`
	// WritableRoots are the session's writable roots when its caller set them (an MCP
	// session started with --writable-root); empty: the configuration's.
	WritableRoots []string `json:"writable_roots,omitempty"`
	// ExecutionMode says where this request's command runs: "sandbox" when it runs in the
	// throwaway micro-VM (execution_mode sandbox, or auto routed to the VM); "" or
	// anything else: on the host. Only a bash/exec request is judged by the VM's
	// guarantees; file and web tools run on the host regardless.
	ExecutionMode string `json:"execution_mode,omitempty"`
	// EgressConnected says the caller runs this request's command with the egress proxy
	// connected (network_access = "allowlist"): the application layer then leaves its
	// network clients to the proxy. It widens nothing real: without the proxy the
	// command's network namespace has no way out, and without a namespace the
	// application layer refuses them anyway.
	EgressConnected bool `json:"egress_connected,omitempty"`
}

// Caller identifies the process waiting on a request, so a restarted broker can tell
// whether it is still there.
type Caller struct {
	PID         int    `json:"pid,omitempty"`
	Description string `json:"description,omitempty"` // e.g. "mcp:claude", "hook:claude", "dispatch"
}

// Context says who asks and under which policy.
type Context struct {
	Session    string        `json:"session,omitempty"`
	Run        string        `json:"run,omitempty"`
	Task       string        `json:"task,omitempty"`
	Department string        `json:"department,omitempty"`
	Workspace  string        `json:"workspace,omitempty"`
	Cwd        string        `json:"cwd,omitempty"`
	Policy     PolicySummary `json:"policy"`
	Caller     Caller        `json:"caller"`
	// TaskArgv is the exact argv of the dispatch task this run belongs to. Creating the
	// task was the person's approval of that command: a request whose argv equals it is
	// allowed as P1 (never when it is P2 or interactive-only).
	TaskArgv []string `json:"task_argv,omitempty"`
}

// SessionKey names what a "session" grant is remembered for: the agent session, or the
// dispatch run (a run is the session of the agents and commands it starts).
func (c Context) SessionKey() string {
	if c.Session != "" {
		return c.Session
	}
	if c.Run != "" {
		return "run-" + c.Run
	}
	return ""
}

// Grant is the extra access one call gets when a person allows its escalation:
// these paths writable, or the network on, and nothing else. It is never remembered:
// the policy of the next call is the policy in force.
type Grant struct {
	// Writable are real absolute paths (files or directories) made writable.
	Writable []string `json:"writable,omitempty"`
	// Network turns the network on.
	Network bool `json:"network,omitempty"`
	// Readable are credential paths the application layer lets one file-tool call read
	// (read_file, list_dir, search_files run outside the sandbox). The OS layer keeps
	// hiding them: a sandboxed command never gets a Readable grant.
	Readable []string `json:"readable,omitempty"`
}

// IsZero reports whether g grants nothing.
func (g Grant) IsZero() bool { return len(g.Writable) == 0 && !g.Network && len(g.Readable) == 0 }

// String says what g gives, for the person who is asked.
func (g Grant) String() string {
	var parts []string
	if len(g.Writable) > 0 {
		parts = append(parts, strings.Join(g.Writable, ", ")+" writable")
	}
	if g.Network {
		parts = append(parts, "the network on")
	}
	if len(g.Readable) > 0 {
		parts = append(parts, strings.Join(g.Readable, ", ")+" readable")
	}
	if len(parts) == 0 {
		return "nothing more"
	}
	return strings.Join(parts, " and ") + ", for this one call"
}

// Escalation asks for more access than the sandbox gave, typically after a command failed
// on a sandbox denial under on-failure. It is always interactive-only.
type Escalation struct {
	Reason string `json:"reason"`
	Denial string `json:"denial,omitempty"` // the sandbox's denial message
	// Grant is the exact extra access asked for; an allow carries it in Decision.Grant.
	Grant *Grant `json:"grant,omitempty"`
}

// Request is one tool call to decide: the body of PermissionCheck and PermissionAwait.
type Request struct {
	ID         string          `json:"id,omitempty"` // set by the broker when empty; a caller may reuse it to re-attach
	Tool       string          `json:"tool"`
	Params     json.RawMessage `json:"params,omitempty"`
	Context    Context         `json:"context"`
	Escalation *Escalation     `json:"escalation,omitempty"`
	// Timeout bounds the wait for the person (0: the configured request_timeout, which
	// defaults to waiting until the caller gives up).
	Timeout time.Duration `json:"timeout,omitempty"`
	// CallID is the caller's own name of this tool call (Claude Code's tool_use_id): the
	// outcome reported later (PermissionAfter) names it, so the audit row of the
	// decision says whether the call ran.
	CallID string `json:"call_id,omitempty"`
	// HandOver says the caller has a prompt of its own (Claude Code's) to put the
	// question to: when nobody answers in Airlock before Timeout, or nobody can
	// (AnswerUnattended), the answer is ask (AnsweredBy AnsweredHandedOver) instead of
	// deny, and the audit says it was handed over.
	HandOver bool `json:"hand_over,omitempty"`
	// AnswerUnattended asks for an answer at once when nothing can answer in Airlock now
	// (no window, tray, notification or terminal watching the approvals): ask when
	// HandOver, else deny (AnsweredBy AnsweredUnattended). Otherwise the request waits.
	AnswerUnattended bool `json:"answer_unattended,omitempty"`
}

// Who answered a request that no person or surface answered (Decision.AnsweredBy,
// AuditRecord.AnsweredBy).
const (
	// AnsweredExpired: its deadline passed with nobody answering; it was denied.
	AnsweredExpired = "expired"
	// AnsweredHandedOver: nobody answered (or could) in Airlock, and the caller put the
	// question to its own prompt (Claude Code's); the audit's Ran says what came of it.
	AnsweredHandedOver = "handed-over"
	// AnsweredUnattended: nothing could answer in Airlock when it was asked, and the
	// caller wanted an answer at once; it was denied.
	AnsweredUnattended = "unattended"
)

// Decision is the answer for one request.
type Decision struct {
	RequestID       string   `json:"request_id,omitempty"`
	Verdict         Verdict  `json:"verdict"`
	Tier            Tier     `json:"tier"`
	Layer           Layer    `json:"layer"`
	Reasons         []string `json:"reasons,omitempty"`
	InteractiveOnly bool     `json:"interactive_only"`
	Kind            Kind     `json:"kind,omitempty"`
	// Rule is the pattern of the rule that matched, if one did.
	Rule string `json:"rule,omitempty"`
	// Params are the parameters to run with (a before-hook may have rewritten them).
	Params json.RawMessage `json:"params,omitempty"`
	// AnsweredBy says who answered an ask: window, tray, cli-tty, api, reviewer, policy,
	// or nobody (AnsweredExpired, AnsweredHandedOver, AnsweredUnattended).
	AnsweredBy string        `json:"answered_by,omitempty"`
	Waited     time.Duration `json:"waited,omitempty"`
	// Scope is the grant scope the person chose when they allowed (once, session, task,
	// department, always).
	Scope Scope `json:"scope,omitempty"`
	// Grant is the extra sandbox access of an isolation escalation: set on the request
	// while it asks (what allowing it gives) and on the allow, for that one call only.
	Grant *Grant `json:"grant,omitempty"`
}

// Outcome is what happened when an allowed tool call ran, for after-hooks and the audit.
type Outcome struct {
	Ran      bool   `json:"ran"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Error    string `json:"error,omitempty"`
	// SandboxDenied is true when the run failed on a sandbox denial (under on-failure
	// the caller then submits a Request with an Escalation).
	SandboxDenied bool `json:"sandbox_denied,omitempty"`
}

// AfterToolUse is the body of PermissionAfter: an allowed call's outcome, for the
// after_tool_use hooks.
type AfterToolUse struct {
	Request  Request  `json:"request"`
	Decision Decision `json:"decision"`
	Outcome  Outcome  `json:"outcome"`
}

// Accepted is PermissionAfter's answer: the hooks run in the background.
type Accepted struct {
	Accepted bool `json:"accepted"`
}

// FindingCategory groups the dangerous-command classifier's findings.
type FindingCategory string

// Finding is one dangerous construct the classifier found in a shell command.
type Finding struct {
	Category FindingCategory `json:"category"`
	Reason   string          `json:"reason"`
	Command  string          `json:"command"` // the simple command it was found in, as written
}

// Segment is one simple command of a shell command line.
type Segment struct {
	Source    string `json:"source"`    // as written, wrappers included
	Unwrapped string `json:"unwrapped"` // the command after wrappers were stripped
}

// RuleAction is what a [[permission.rules]] entry does: allow, ask or deny.
type RuleAction string

// Rule is one [[permission.rules]] entry. Tool may itself use wildcards ("*" for every
// tool).
type Rule struct {
	Tool    string     `json:"tool"`
	Pattern string     `json:"pattern"`
	Action  RuleAction `json:"action"`
	Trusted bool       `json:"trusted"`
	Source  string     `json:"source,omitempty"` // where it came from, for messages
}

// String renders a rule for reasons and audit.
func (r Rule) String() string {
	return string(r.Action) + " " + r.Tool + " " + strconv.Quote(r.Pattern)
}

// Evaluation is PermissionCheck's answer: the verdict a request would get under the
// effective policy, without hooks, the reviewer or waiting, and why (`airlock check`).
type Evaluation struct {
	Decision       Decision       `json:"decision"`
	BaseTier       Tier           `json:"base_tier"`
	ApprovalPolicy ApprovalPolicy `json:"approval_policy"`
	PolicyFrom     string         `json:"approval_policy_from"`
	Reviewer       ReviewerMode   `json:"reviewer"`
	Isolation      string         `json:"isolation,omitempty"` // the sandbox's denial
	Findings       []Finding      `json:"findings,omitempty"`
	KnownSafe      bool           `json:"known_safe"`
	Segments       []Segment      `json:"segments,omitempty"`
	Rule           *Rule          `json:"rule,omitempty"`
	Grant          *GrantRecord   `json:"grant,omitempty"`
	Notes          []string       `json:"notes,omitempty"`
}

// PendingRequest is a request waiting for a person, as ListApprovals lists it (and the
// payload of the permission.requested event).
type PendingRequest struct {
	ID              string     `json:"id"`
	Request         Request    `json:"request"`
	Summary         string     `json:"summary"`
	Tier            Tier       `json:"tier"`
	Kind            Kind       `json:"kind,omitempty"`
	InteractiveOnly bool       `json:"interactive_only"`
	Reasons         []string   `json:"reasons,omitempty"`
	Scopes          []Scope    `json:"scopes"` // the scopes an allow may choose
	CreatedAt       time.Time  `json:"created_at"`
	Deadline        *time.Time `json:"deadline,omitempty"`
	CallerWaiting   bool       `json:"caller_waiting"` // false for a request recovered at start-up whose caller has not re-attached
	// Grant is what allowing an isolation escalation gives, for that one call.
	Grant *Grant `json:"grant,omitempty"`
}

// AnswerIn is the body of AnswerApproval. Who answered is not in it: the core sets that
// from how the answer arrived, so a By or Interactive the caller sends is ignored.
type AnswerIn struct {
	Allow   bool   `json:"allow"`
	Scope   Scope  `json:"scope,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Proof
	// By and Interactive are accepted and ignored: a caller's word for who it is.
	By          string `json:"by,omitempty"`
	Interactive bool   `json:"interactive,omitempty"`
}

// ProofSummary is how a person at a terminal proves presence when answering what only a
// person may answer ([approvals] terminal_proof): ApprovalsProof's answer.
type ProofSummary struct {
	// TerminalProof is os (the login password, checked by PAM in the core) or tty (the
	// weaker choice: having a terminal is enough).
	TerminalProof string `json:"terminal_proof"`
	// PAMService and PAMSource name the PAM service used under os, and why it was chosen.
	PAMService string `json:"pam_service,omitempty"`
	PAMSource  string `json:"pam_source,omitempty"`
	// PAM is false when the core was built without PAM: under os, only the window can
	// then answer what needs a person.
	PAM bool `json:"pam"`
	// Note says what the choice means.
	Note string `json:"note"`
}

// GrantRecord is a remembered P1 allow: a tool and a pattern, for one session, one
// dispatch task, one department, or always within a department (or, outside
// departments, a workspace). The broker's database row embeds it (its gorm tags are the
// columns), so what ListGrants lists is what is stored.
type GrantRecord struct {
	ID      string `gorm:"primaryKey" json:"id"`
	Tool    string `gorm:"index;not null" json:"tool"`
	Pattern string `gorm:"not null" json:"pattern"`
	Scope   Scope  `gorm:"not null" json:"scope"` // session | task | department | always
	Session string `gorm:"index" json:"session"`
	// Task is the dispatch task a task grant applies to (its name, unique among tasks;
	// removing the task revokes its grants).
	Task       string     `gorm:"index" json:"task,omitempty"`
	Department string     `gorm:"index" json:"department"`
	Workspace  string     `json:"workspace"`
	CreatedBy  string     `json:"created_by"` // window | tray | cli-tty | api
	RequestID  string     `json:"request_id"` // the request whose answer created it
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `gorm:"index" json:"revoked_at"`
}

// Revoked is RevokeGrant's answer (and the grants.changed event's payload).
type Revoked struct {
	Revoked string `json:"revoked"`
}

// AuditRecord is one decision: who asked, what, which layer decided, how long it waited,
// who answered. The broker's database row embeds it (its gorm tags are the columns).
type AuditRecord struct {
	ID              uint      `gorm:"primaryKey" json:"id"`
	RequestID       string    `gorm:"index" json:"request_id"`
	Tool            string    `gorm:"index" json:"tool"`
	Subject         string    `json:"subject"` // credentials redacted
	Tier            Tier      `json:"tier"`
	Verdict         Verdict   `gorm:"index" json:"verdict"`
	Layer           Layer     `json:"layer"`
	Kind            Kind      `json:"kind"`
	InteractiveOnly bool      `json:"interactive_only"`
	Reasons         string    `json:"reasons"` // JSON array
	Rule            string    `json:"rule"`
	Session         string    `json:"session"`
	Run             string    `gorm:"index" json:"run"`
	Task            string    `json:"task"`
	Department      string    `json:"department"`
	Cwd             string    `json:"cwd"`
	AskedBy         string    `json:"asked_by"` // the caller's description and pid
	AnsweredBy      string    `json:"answered_by"`
	WaitedMs        int64     `json:"waited_ms"`
	CreatedAt       time.Time `gorm:"index" json:"created_at"`
	// CallID is the caller's name of the call (Request.CallID), which its outcome names.
	CallID string `gorm:"index" json:"call_id,omitempty"`
	// Ran is what the caller reported after the decision (PermissionAfter): OutcomeRan,
	// OutcomeFailed, or "" when nothing was reported.
	Ran string `json:"ran,omitempty"`
	// RanError is the failure the caller reported (redacted).
	RanError string     `json:"ran_error,omitempty"`
	RanAt    *time.Time `json:"ran_at,omitempty"`
}

// What a call's reported outcome was (AuditRecord.Ran).
const (
	OutcomeRan    = "ran"
	OutcomeFailed = "failed"
)

// AuditFilter is ListAudit's query: each field narrows the listing.
type AuditFilter struct {
	Tool    string  `json:"tool,omitempty"`
	Run     string  `json:"run,omitempty"`
	Session string  `json:"session,omitempty"`
	Verdict Verdict `json:"verdict,omitempty"`
	// Since is a duration back from now ("24h").
	Since string `json:"since,omitempty"`
	Limit int    `json:"limit,omitempty"` // default 200
}

// SandboxIn is the body of RegisterSandbox: the host pid of a sandbox the caller started.
type SandboxIn struct {
	PID int `json:"pid"`
}

// SandboxRegistered is RegisterSandbox's answer.
type SandboxRegistered struct {
	Registered int `json:"registered"`
}

// SandboxForgotten is ForgetSandbox's answer.
type SandboxForgotten struct {
	Forgotten int `json:"forgotten"`
}

// EgressIn is the body of ServeEgress: a network_access = "allowlist" sandbox the caller
// started (its host pid, still held before its command), the run's working directory
// (the core resolves the [network] lists there) and the loopback address inside the
// sandbox's namespace to listen on.
type EgressIn struct {
	PID  int    `json:"pid"`
	Cwd  string `json:"cwd"`
	Addr string `json:"addr"`
	// Session and Caller name, for ServeAsk, the session the sandbox's requests belong to
	// and who started it (an MCP session's bash call); "" is `airlock exec`'s own. They are
	// taken from the unsandboxed process that starts the sandbox, never from inside it.
	Session string `json:"session,omitempty"`
	Caller  string `json:"caller,omitempty"`
}

// EgressServed is ServeEgress's answer.
type EgressServed struct {
	Serving int `json:"serving"`
}

// EgressStopped is StopEgress's answer.
type EgressStopped struct {
	Stopped int `json:"stopped"`
}

// EgressConnection is one connection a front-end made through the egress decision in
// its own process (an MCP session's web_fetch), as the proxy records it.
type EgressConnection struct {
	StartedAt time.Time `json:"started_at"`
	Protocol  string    `json:"protocol"`
	Domain    string    `json:"domain"`
	Port      int       `json:"port"`
	// IP is the address connected to (or the local one that got it refused); "" when
	// nothing was resolved.
	IP         string `json:"ip,omitempty"`
	Allowed    bool   `json:"allowed"`
	Reason     string `json:"reason"`
	Detail     string `json:"detail,omitempty"`
	BytesUp    int64  `json:"bytes_up"`
	BytesDown  int64  `json:"bytes_down"`
	DurationMS int64  `json:"duration_ms"`
}

// EgressAudit is the body of AuditEgress: connections and the context they were made in.
type EgressAudit struct {
	Context     Context            `json:"context"`
	Connections []EgressConnection `json:"connections"`
}

// EgressAudited is AuditEgress's answer.
type EgressAudited struct {
	Audited int `json:"audited"`
}

// The permission broker's routes.
var (
	// PermissionCheck evaluates a request without hooks, the reviewer or waiting.
	PermissionCheck = route[Request, Evaluation]("POST", "/v1/permission/check")
	// PermissionAwait blocks until the request is decided or the caller hangs up.
	PermissionAwait = route[Request, Decision]("POST", "/v1/permission/await")
	// PermissionAfter reports an allowed call's outcome to the after_tool_use hooks.
	PermissionAfter = route[AfterToolUse, Accepted]("POST", "/v1/permission/after")
	// ListApprovals lists the requests waiting for a person, oldest first.
	ListApprovals = route[None, []PendingRequest]("GET", "/v1/approvals")
	// ApprovalsProof says how a person at a terminal proves presence.
	ApprovalsProof = route[None, ProofSummary]("GET", "/v1/approvals/proof")
	// AnswerApproval answers a pending request ({id}).
	AnswerApproval = route[AnswerIn, Decision]("POST", "/v1/approvals/{id}/answer")
	// ListGrants lists the remembered grants.
	ListGrants = route[None, []GrantRecord]("GET", "/v1/grants")
	// RevokeGrant revokes a remembered grant ({id}).
	RevokeGrant = route[None, Revoked]("DELETE", "/v1/grants/{id}")
	// ListAudit lists the decisions taken, newest first.
	ListAudit = route[AuditFilter, []AuditRecord]("GET", "/v1/audit")
	// RegisterSandbox records the host pid of a sandbox the MCP server started, so the
	// API refuses state-changing requests from inside it.
	RegisterSandbox = route[SandboxIn, SandboxRegistered]("POST", "/v1/sandboxes")
	// ForgetSandbox drops a registration ({pid}).
	ForgetSandbox = route[None, SandboxForgotten]("DELETE", "/v1/sandboxes/{pid}")
	// ServeEgress asks the core to serve the egress proxy inside an allowlist sandbox the
	// caller started (`airlock exec`, which does not link the proxy).
	ServeEgress = route[EgressIn, EgressServed]("POST", "/v1/sandboxes/egress")
	// StopEgress ends that proxy ({pid}); it also ends when the sandbox is gone.
	StopEgress = route[None, EgressStopped]("DELETE", "/v1/sandboxes/egress/{pid}")
	// ServeAsk asks the core to serve the ask-only channel inside a sandbox the caller
	// started (`airlock exec`): the same body and answer as ServeEgress.
	ServeAsk = route[EgressIn, EgressServed]("POST", "/v1/sandboxes/ask")
	// StopAsk ends that channel ({pid}); it also ends when the sandbox is gone.
	StopAsk = route[None, EgressStopped]("DELETE", "/v1/sandboxes/ask/{pid}")
	// AuditEgress writes to the audit the connections a front-end made through the
	// egress decision itself (the MCP web_fetch), as the core does for its proxies'.
	AuditEgress = route[EgressAudit, EgressAudited]("POST", "/v1/egress/connections")
)

// Approval is a request waiting for a person as the window lists it and its popup shows
// it: a PendingRequest flattened, with the parameters redacted and indented, and what
// allowing an escalation gives in words.
type Approval struct {
	ID              string   `json:"id"`
	Tool            string   `json:"tool"`
	Summary         string   `json:"summary"`
	Tier            string   `json:"tier"` // P0 | P1 | P2
	Kind            string   `json:"kind,omitempty"`
	InteractiveOnly bool     `json:"interactive_only"`
	Reasons         []string `json:"reasons"`
	// Scopes are the scopes an allow may choose: once for P2 and interactive-only
	// requests; for P1 once, and session, task, department or always as the request's
	// context has a session, a task, a department or a place.
	Scopes []string `json:"scopes"`
	// Params are the tool's parameters as indented JSON ("" when there are none).
	Params    string     `json:"params"`
	CreatedAt time.Time  `json:"created_at"`
	Deadline  *time.Time `json:"deadline,omitempty"`
	// Where it comes from and where it would act.
	Session    string        `json:"session,omitempty"`
	Run        string        `json:"run,omitempty"`
	Task       string        `json:"task,omitempty"`
	Department string        `json:"department,omitempty"`
	Cwd        string        `json:"cwd,omitempty"`
	Mode       string        `json:"mode,omitempty"`
	Network    NetworkAccess `json:"network"`
	// Gives is what allowing an isolation escalation gives, for that one call, in words
	// ("" for other requests).
	Gives string `json:"gives,omitempty"`
}
