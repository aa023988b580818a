package permission

import (
	"strings"

	"github.com/airlock-app/airlock/api"
)

// Verdict is the outcome of the pipeline for one request.
type Verdict = api.Verdict

// Verdicts.
const (
	Allow = api.Allow
	Ask   = api.Ask
	Deny  = api.Deny
)

// Tier is how much confirmation a tool needs: P0 runs silently, P1 asks the first time
// and may be remembered, P2 asks every time.
type Tier = api.Tier

// Tiers, ordered P0 < P1 < P2.
const (
	P0 Tier = "P0"
	P1 Tier = "P1"
	P2 Tier = "P2"
)

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
type Layer = api.Layer

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
type Kind = api.Kind

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
	ToolNetworkDomain      = api.ToolNetworkDomain
)

// ApprovalPolicy says when the person is asked (the permission pipeline, step 6).
type ApprovalPolicy = api.ApprovalPolicy

// Approval policies.
const (
	PolicyUntrusted ApprovalPolicy = "untrusted"
	PolicyOnRequest ApprovalPolicy = "on-request"
	PolicyOnFailure ApprovalPolicy = "on-failure"
	PolicyNever     ApprovalPolicy = "never"
)

// ReviewerMode says who answers requests that ask: the person, or an auto reviewer first.
type ReviewerMode = api.ReviewerMode

// Reviewer modes.
const (
	ReviewerUser ReviewerMode = "user"
	ReviewerAuto ReviewerMode = "auto_review"
)

// PolicySummary is the effective sandbox and approval policy of the caller, as recorded
// when its run or session started.
type PolicySummary = api.PolicySummary

// Caller identifies the process waiting on a request, so a restarted broker can tell
// whether it is still there.
type Caller = api.Caller

// Context says who asks and under which policy.
type Context = api.Context

// Escalation asks for more access than the sandbox gave, typically after a command failed
// on a sandbox denial under on-failure. It is always interactive-only.
type Escalation = api.Escalation

// Request is one tool call to decide.
type Request = api.Request

// Decision is the answer for one request.
type Decision = api.Decision

// Scope is how long a person's allow is remembered.
type Scope = api.Scope

// Scopes (api's).
const (
	ScopeOnce       = api.ScopeOnce
	ScopeSession    = api.ScopeSession
	ScopeTask       = api.ScopeTask
	ScopeDepartment = api.ScopeDepartment
	ScopeAlways     = api.ScopeAlways
)

// Answer is a person's (or a surface's) answer to a pending request, inside the core
// (the wire's body is api.AnswerIn, which has no say in By or Interactive).
type Answer struct {
	Allow   bool
	Scope   Scope  // default: session when the request offers it (P1 with a session), else once
	Pattern string // for remembered grants; default: the exact subject
	Reason  string
	// By is the surface the answer arrived through, set by the core, never taken from a
	// caller: window | tray | notification | cli-os-proof | cli-tty | api.
	By string
	// Interactive is true when the answer came from a person: a click in the window or a
	// terminal where the person proved presence. Interactive-only requests refuse answers without it.
	Interactive bool
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
