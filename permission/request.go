package permission

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

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

// Tiers, ordered P0 < P1 < P2.
const (
	P0 Tier = "P0"
	P1 Tier = "P1"
	P2 Tier = "P2"
)

// rank orders tiers; an unknown tier ranks as P2 (fail closed).
func (t Tier) rank() int {
	switch t {
	case P0:
		return 0
	case P1:
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
	if t == "" || o.rank() > t.rank() {
		return o
	}
	return t
}

// ParseTier parses "P0", "P1" or "P2" (case-insensitive).
func ParseTier(s string) (Tier, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "P0":
		return P0, true
	case "P1":
		return P1, true
	case "P2":
		return P2, true
	}
	return "", false
}

// Layer names the pipeline step that produced a decision.
type Layer string

// Layers, in pipeline order (person and task are where an answer or a task grant came from).
const (
	LayerIsolation Layer = "isolation"
	LayerHook      Layer = "hook"
	LayerPreflight Layer = "preflight"
	LayerRule      Layer = "rule"
	LayerGrant     Layer = "grant"
	LayerTask      Layer = "task"
	LayerTier      Layer = "tier"
	LayerPolicy    Layer = "policy"
	LayerReviewer  Layer = "reviewer"
	LayerPerson    Layer = "person"
)

// Kind marks requests that need a person, whatever the rules, grants or policy say.
type Kind string

// Interactive-only kinds.
const (
	KindBashDestructive        Kind = "bash_destructive"
	KindIsolationEscalation    Kind = "isolation_escalation"
	KindOpsApprove             Kind = api.ToolOpsApprove
	KindDirectoryAuthorization Kind = "directory_authorization"
	KindSelfApproval           Kind = "self_approval"
)

// Well-known tool names.
const (
	ToolBash               = api.ToolBash
	ToolExec               = api.ToolExec // a run's own command, params {"argv": [...]}
	ToolReadFile           = api.ToolReadFile
	ToolWriteFile          = api.ToolWriteFile
	ToolEditFile           = api.ToolEditFile
	ToolListDir            = api.ToolListDir
	ToolSearchFiles        = api.ToolSearchFiles
	ToolWebFetch           = api.ToolWebFetch
	ToolOpsApprove         = api.ToolOpsApprove
	ToolOpsApply           = api.ToolOpsApply
	ToolAuthorizeDirectory = api.ToolAuthorizeDirectory
)

// ApprovalPolicy says when the person is asked (the permission pipeline, step 6).
type ApprovalPolicy string

// Approval policies.
const (
	PolicyUntrusted ApprovalPolicy = "untrusted"
	PolicyOnRequest ApprovalPolicy = "on-request"
	PolicyOnFailure ApprovalPolicy = "on-failure"
	PolicyNever     ApprovalPolicy = "never"
)

// ReviewerMode says who answers requests that ask: the person, or an auto reviewer first.
type ReviewerMode string

// Reviewer modes.
const (
	ReviewerUser ReviewerMode = "user"
	ReviewerAuto ReviewerMode = "auto_review"
)

// PolicySummary is the effective sandbox and approval policy of the caller, as recorded
// when its run or session started.
type PolicySummary struct {
	Mode           string         `json:"mode,omitempty"` // read-only | workspace-write | full-access
	Network        bool           `json:"network"`
	ApprovalPolicy ApprovalPolicy `json:"approvalPolicy,omitempty"` // empty: the broker's effective setting
	Reviewer       ReviewerMode   `json:"reviewer,omitempty"`       // empty: the broker's effective setting
	Posture        string         `json:"posture,omitempty"`        // "" or "cloudops"
	// WritableRoots are the session's writable roots when its caller set them (an MCP
	// session started with --writable-root); empty: the configuration's.
	WritableRoots []string `json:"writableRoots,omitempty"`
	// ExecutionMode says where this request's command runs: "sandbox" when it runs in the
	// throwaway micro-VM (execution_mode sandbox, or auto routed to the VM); "" or
	// anything else: on the host. Only a bash/exec request is judged by the VM's
	// guarantees (see SandboxIsolation); file and web tools run on the host regardless.
	ExecutionMode string `json:"executionMode,omitempty"`
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
	TaskArgv []string `json:"taskArgv,omitempty"`
}

// Escalation asks for more access than the sandbox gave, typically after a command failed
// on a sandbox denial under on-failure. It is always interactive-only.
type Escalation struct {
	Reason string `json:"reason"`
	Denial string `json:"denial,omitempty"` // the sandbox's denial message
	// Grant is the exact extra access asked for; an allow carries it in Decision.Grant.
	Grant *sandbox.Grant `json:"grant,omitempty"`
}

// Request is one tool call to decide.
type Request struct {
	ID         string          `json:"id,omitempty"` // set by the broker when empty; a caller may reuse it to re-attach
	Tool       string          `json:"tool"`
	Params     json.RawMessage `json:"params,omitempty"`
	Context    Context         `json:"context"`
	Escalation *Escalation     `json:"escalation,omitempty"`
	// Timeout bounds the wait for the person (0: the configured request_timeout, which
	// defaults to waiting until the caller gives up).
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Decision is the answer for one request.
type Decision struct {
	RequestID       string   `json:"requestId,omitempty"`
	Verdict         Verdict  `json:"verdict"`
	Tier            Tier     `json:"tier"`
	Layer           Layer    `json:"layer"`
	Reasons         []string `json:"reasons,omitempty"`
	InteractiveOnly bool     `json:"interactiveOnly"`
	Kind            Kind     `json:"kind,omitempty"`
	// Rule is the pattern of the rule that matched, if one did.
	Rule string `json:"rule,omitempty"`
	// Params are the parameters to run with (a before-hook may have rewritten them).
	Params json.RawMessage `json:"params,omitempty"`
	// AnsweredBy says who answered an ask: window, tray, cli-tty, api, reviewer, policy.
	AnsweredBy string        `json:"answeredBy,omitempty"`
	Waited     time.Duration `json:"waited,omitempty"`
	// Scope is the grant scope the person chose when they allowed (once, session, always).
	Scope Scope `json:"scope,omitempty"`
	// Grant is the extra sandbox access of an isolation escalation: set on the request
	// while it asks (what allowing it gives) and on the allow, for that one call only.
	Grant *sandbox.Grant `json:"grant,omitempty"`
}

// Scope is how long a person's allow is remembered.
type Scope string

// Scopes.
const (
	ScopeOnce    Scope = "once"
	ScopeSession Scope = "session"
	ScopeAlways  Scope = "always"
)

// Answer is a person's (or a surface's) answer to a pending request.
type Answer struct {
	Allow   bool   `json:"allow"`
	Scope   Scope  `json:"scope,omitempty"`   // default: session when the request offers it (P1 with a session), else once
	Pattern string `json:"pattern,omitempty"` // for session/always grants; default: the exact subject
	Reason  string `json:"reason,omitempty"`
	// By is the surface the answer arrived through, set by the core, never taken from a
	// caller: window | tray | notification | cli-os-proof | cli-tty | api.
	By string `json:"by"`
	// Interactive is true when the answer came from a person: a click in the window or a
	// terminal where the person proved presence. Interactive-only requests refuse answers without it.
	Interactive bool `json:"interactive"`
}

// Answer sources.
const (
	ByWindow       = "window"
	ByTray         = "tray"
	ByNotification = "notification"
	ByCLITTY       = "cli-tty"
	ByAPI          = "api"
	// ByCLIOSProof is an answer at a terminal whose person proved presence to the
	// operating system (their login password, checked by PAM in the core).
	ByCLIOSProof = "cli-os-proof"
)

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
