// Package gateway is how agents meet Airlock: the MCP server (`airlock mcp`, over stdio,
// or streamable HTTP with `--http`: HTTPHandler) with governed tools, and the coding-agent hook adapter (`airlock hook claude`). Every tool
// call becomes a broker request over the local API; only an allow runs it.
//
// The package lives in the `airlock` CLI binary, so it never imports the core (package
// app), gorm or the permission root package: the broker's wire types are package api's.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/localapi"
)

// Broker asks the running core's permission broker.
type Broker interface {
	// Await blocks until the request is decided (a person may be asked).
	Await(ctx context.Context, req api.Request) (api.Decision, error)
	// After reports the outcome of an allowed call to the after-tool hooks.
	After(ctx context.Context, a api.AfterToolUse) error
}

// APIBroker is the Broker of the local API.
type APIBroker struct{ Client *localapi.Client }

// Await implements Broker.
func (b APIBroker) Await(ctx context.Context, req api.Request) (api.Decision, error) {
	d, err := localapi.Call(ctx, b.Client, api.PermissionAwait, req)
	if err != nil {
		return api.Decision{}, fmt.Errorf("ask Airlock about %s: %w", req.Tool, err)
	}
	if d.Verdict != api.Allow && d.Verdict != api.Deny && d.Verdict != api.Ask {
		return api.Decision{}, fmt.Errorf("ask Airlock about %s: the broker answered an unknown verdict %q", req.Tool, d.Verdict)
	}
	return d, nil
}

// After implements Broker. A core without the route is not an error.
func (b APIBroker) After(ctx context.Context, a api.AfterToolUse) error {
	_, err := localapi.Call(ctx, b.Client, api.PermissionAfter, a)
	var ae *api.Error
	if errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusMethodNotAllowed) {
		return nil
	}
	return err
}

// DenialText is what an agent reads when a call was refused: what was blocked, why, and
// what the person can change.
func DenialText(tool string, subject string, d api.Decision) string {
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

func orUnknown[S ~string](s S) string {
	if s == "" {
		return "unknown"
	}
	return string(s)
}

// remedy says what the person (not the agent) can change, by the layer that decided.
func remedy(d api.Decision) string {
	switch {
	case d.AnsweredBy == api.AnsweredExpired:
		return "it expired unanswered: nobody answered in Airlock before its deadline. Do not retry it at once: go on without it, " +
			"or finish and say what it needs the person to allow (asked again, it waits for them anew)."
	case d.AnsweredBy == api.AnsweredUnattended:
		return "nobody can answer now: nothing in Airlock follows its approvals (no window, tray, notification or " +
			"`airlock approvals watch` at a terminal), and this call needs a person. Do not retry it at once: go on without it, " +
			"or stop and say what it needs the person to allow."
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
func (b FailedBroker) Await(context.Context, api.Request) (api.Decision, error) {
	return api.Decision{}, b.Err
}

// After implements Broker.
func (b FailedBroker) After(context.Context, api.AfterToolUse) error { return b.Err }
