// Package gateway is how agents meet Airlock: the stdio MCP server (`airlock mcp`) with
// governed tools, and the coding-agent hook adapter (`airlock hook claude`). Every tool
// call becomes a broker request over the local API; only an allow runs it.
//
// The package lives in the `airlock` CLI binary, so it never imports the core (package
// app), gorm or the permission root package: the few wire types it needs are defined here.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/sandbox"
)

// Request is the broker's permission.Request on the wire.
type Request struct {
	ID      string          `json:"id,omitempty"`
	Tool    string          `json:"tool"`
	Params  json.RawMessage `json:"params,omitempty"`
	Context Context         `json:"context"`
}

// Context is permission.Context on the wire: who asks and under which policy.
type Context struct {
	Session    string        `json:"session,omitempty"`
	Run        string        `json:"run,omitempty"`
	Department string        `json:"department,omitempty"`
	Workspace  string        `json:"workspace,omitempty"`
	Cwd        string        `json:"cwd,omitempty"`
	Policy     PolicySummary `json:"policy"`
	Caller     Caller        `json:"caller"`
}

// PolicySummary is permission.PolicySummary on the wire.
type PolicySummary struct {
	Mode    string `json:"mode,omitempty"`
	Network bool   `json:"network"`
	Posture string `json:"posture,omitempty"`
	// WritableRoots are the session's writable roots (`airlock mcp --writable-root`), so
	// the core's isolation check knows them.
	WritableRoots []string `json:"writableRoots,omitempty"`
	// ExecutionMode is "sandbox" when this bash command will run in the micro-VM (the
	// core then judges it by the VM's guarantees); empty when it runs on the host.
	ExecutionMode string `json:"executionMode,omitempty"`
}

// Caller is permission.Caller on the wire.
type Caller struct {
	PID         int    `json:"pid,omitempty"`
	Description string `json:"description,omitempty"`
}

// Decision is permission.Decision on the wire.
type Decision struct {
	RequestID       string          `json:"requestId,omitempty"`
	Verdict         string          `json:"verdict"` // allow | deny | ask
	Tier            string          `json:"tier"`
	Layer           string          `json:"layer"`
	Reasons         []string        `json:"reasons,omitempty"`
	InteractiveOnly bool            `json:"interactiveOnly"`
	Kind            string          `json:"kind,omitempty"`
	Rule            string          `json:"rule,omitempty"`
	Params          json.RawMessage `json:"params,omitempty"`
	AnsweredBy      string          `json:"answeredBy,omitempty"`
	// Grant is the extra access of an allowed isolation escalation, for this call.
	Grant *sandbox.Grant `json:"grant,omitempty"`
}

// Outcome is permission.Outcome on the wire: what happened when an allowed call ran.
type Outcome struct {
	Ran           bool   `json:"ran"`
	ExitCode      *int   `json:"exitCode,omitempty"`
	Error         string `json:"error,omitempty"`
	SandboxDenied bool   `json:"sandboxDenied,omitempty"`
}

// AfterToolUse is the body of POST /v1/permission/after.
type AfterToolUse struct {
	Request  Request  `json:"request"`
	Decision Decision `json:"decision"`
	Outcome  Outcome  `json:"outcome"`
}

// Verdicts.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
)

// Broker asks the running core's permission broker.
type Broker interface {
	// Await blocks until the request is decided (a person may be asked).
	Await(ctx context.Context, req Request) (Decision, error)
	// After reports the outcome of an allowed call to the after-tool hooks.
	After(ctx context.Context, a AfterToolUse) error
}

// APIBroker is the Broker of the local API.
type APIBroker struct{ Client *localapi.Client }

// Await implements Broker.
func (b APIBroker) Await(ctx context.Context, req Request) (Decision, error) {
	var d Decision
	if err := b.Client.Do(ctx, http.MethodPost, "/v1/permission/await", req, &d); err != nil {
		return Decision{}, fmt.Errorf("ask Airlock about %s: %w", req.Tool, err)
	}
	if d.Verdict != Allow && d.Verdict != Deny && d.Verdict != Ask {
		return Decision{}, fmt.Errorf("ask Airlock about %s: the broker answered an unknown verdict %q", req.Tool, d.Verdict)
	}
	return d, nil
}

// After implements Broker. A core without the route is not an error.
func (b APIBroker) After(ctx context.Context, a AfterToolUse) error {
	err := b.Client.Do(ctx, http.MethodPost, "/v1/permission/after", a, nil)
	var ae *api.Error
	if errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusMethodNotAllowed) {
		return nil
	}
	return err
}

// DenialText is what an agent reads when a call was refused: what was blocked, why, and
// what the person can change.
func DenialText(tool string, subject string, d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Airlock blocked %s", tool)
	if subject != "" {
		fmt.Fprintf(&b, " (%s)", subject)
	}
	fmt.Fprintf(&b, ": tier %s, decided by %s", orUnknown(d.Tier), orUnknown(d.Layer))
	if d.AnsweredBy != "" {
		fmt.Fprintf(&b, " (answered by %s)", d.AnsweredBy)
	}
	b.WriteString(".")
	if len(d.Reasons) > 0 {
		b.WriteString("\nWhy: " + strings.Join(d.Reasons, "; "))
	}
	b.WriteString("\nWhat can change it: " + remedy(d))
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// remedy says what the person (not the agent) can change, by the layer that decided.
func remedy(d Decision) string {
	switch {
	case d.Layer == "person":
		return "the person refused this call; do not retry it unchanged — explain what you need and ask them, or take another approach."
	case d.InteractiveOnly:
		return "this kind of call (" + orUnknown(d.Kind) + ") needs a person at the Airlock window or a terminal; it cannot be approved by a rule, a grant or the agent."
	case d.Layer == "rule":
		return "a [[permission.rules]] entry in Airlock's config.toml denies it; the person can edit that rule."
	case d.Layer == "hook":
		return "a before_tool_use hook in Airlock's config.toml blocked it; the person can change the hook."
	case d.Layer == "isolation":
		return "the sandbox policy forbids it; the person can widen it (sandbox_mode, [sandbox_workspace_write] writable_roots or network_access in config.toml, or the flags of `airlock mcp`)."
	case d.Layer == "policy":
		return "approval_policy in config.toml refuses calls that would need a person; the person can change approval_policy."
	case d.Layer == "reviewer":
		return "the configured auto reviewer refused it; the person can answer instead (approvals_reviewer = \"user\")."
	}
	return "ask the person to review Airlock's settings (`airlock config show`)."
}

// FailedBroker is the Broker when Airlock cannot be reached at all: every request fails
// with Err (so a hook answers "ask").
type FailedBroker struct{ Err error }

// Await implements Broker.
func (b FailedBroker) Await(context.Context, Request) (Decision, error) { return Decision{}, b.Err }

// After implements Broker.
func (b FailedBroker) After(context.Context, AfterToolUse) error { return b.Err }
