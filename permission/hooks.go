package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/airlock-app/airlock/api"
)

// HookInput is the JSON a hook reads on stdin.
type HookInput struct {
	Event   string          `json:"event"` // before_tool_use | after_tool_use
	Tool    string          `json:"tool"`
	Params  json.RawMessage `json:"params"`
	Tier    Tier            `json:"tier"`
	Context Context         `json:"context"`
	// After-hooks also receive the decision and the outcome.
	Decision *Decision `json:"decision,omitempty"`
	Outcome  *Outcome  `json:"outcome,omitempty"`
}

// HookOutput is the JSON a before-hook prints on stdout.
type HookOutput struct {
	Decision string          `json:"decision"` // continue | block | elevate
	Params   json.RawMessage `json:"params,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Tier     string          `json:"tier,omitempty"` // with elevate: the tier to raise to (default P2)
}

// Outcome is what happened when the tool ran, for after-hooks and the audit.
type Outcome = api.Outcome

// hookResult is what the before-hooks decided.
type hookResult struct {
	blocked bool
	reasons []string
	params  json.RawMessage // non-nil when a hook rewrote the params
	tier    Tier            // raised tier, "" when unchanged
}

// appliesTo reports whether a hook's tools filter covers a tool.
func (h Hook) appliesTo(tool string) bool {
	if len(h.Tools) == 0 {
		return true
	}
	for _, t := range h.Tools {
		if CompilePattern(t).Match(tool) {
			return true
		}
	}
	return false
}

// runBeforeHooks runs the matching before-hooks in order. A hook that fails, crashes,
// hangs past its timeout, prints nothing or prints something that is not a decision
// blocks the request.
func runBeforeHooks(ctx context.Context, hooks []Hook, req Request, tier Tier) hookResult {
	var res hookResult
	params := req.Params
	for _, h := range hooks {
		if !h.appliesTo(req.Tool) {
			continue
		}
		in, err := json.Marshal(HookInput{Event: "before_tool_use", Tool: req.Tool, Params: params, Tier: tier.Max(res.tier), Context: req.Context})
		if err != nil {
			return hookResult{blocked: true, reasons: []string{"cannot encode the hook input: " + err.Error()}}
		}
		name := strings.Join(h.Command, " ")
		out, err := runExternal(ctx, h.Command, in, h.Timeout)
		if err != nil {
			return hookResult{blocked: true, reasons: []string{"before_tool_use hook blocked the call: " + err.Error()}}
		}
		out = bytes.TrimSpace(out)
		if len(out) == 0 {
			return hookResult{blocked: true, reasons: []string{"before_tool_use hook " + name + " printed no decision, so the call is blocked"}}
		}
		var ho HookOutput
		if err := json.Unmarshal(out, &ho); err != nil {
			return hookResult{blocked: true, reasons: []string{fmt.Sprintf("before_tool_use hook %s printed invalid JSON (%v), so the call is blocked", name, err)}}
		}
		if len(ho.Params) > 0 && !bytes.Equal(ho.Params, []byte("null")) {
			var probe map[string]any
			if err := json.Unmarshal(ho.Params, &probe); err != nil {
				return hookResult{blocked: true, reasons: []string{fmt.Sprintf("before_tool_use hook %s returned params that are not a JSON object, so the call is blocked", name)}}
			}
			params = ho.Params
			res.params = ho.Params
			res.reasons = append(res.reasons, "before_tool_use hook "+name+" rewrote the parameters"+suffix(ho.Reason))
		}
		switch ho.Decision {
		case "continue":
		case "block":
			res.blocked = true
			res.reasons = append(res.reasons, "blocked by before_tool_use hook "+name+suffix(ho.Reason))
			return res
		case "elevate":
			t := P2
			if ho.Tier != "" {
				if parsed, ok := ParseTier(ho.Tier); ok {
					t = parsed
				}
			}
			res.tier = res.tier.Max(t)
			res.reasons = append(res.reasons, "before_tool_use hook "+name+" raised the tier to "+string(res.tier)+suffix(ho.Reason))
		default:
			return hookResult{blocked: true, reasons: []string{fmt.Sprintf("before_tool_use hook %s answered %q (want continue, block or elevate), so the call is blocked", name, ho.Decision)}}
		}
	}
	return res
}

func suffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// runAfterHooks gives the outcome to the matching after-hooks. Their failures are
// logged; they cannot change what already happened. The params are those that ran: the
// decision's (a before-hook may have rewritten them), else the request's (the hook
// adapter reports what the agent ran, already rewritten, with a bare decision).
func runAfterHooks(ctx context.Context, log *slog.Logger, hooks []Hook, req Request, d Decision, out Outcome) {
	ran := d.Params
	if len(ran) == 0 || bytes.Equal(ran, []byte("null")) {
		ran = req.Params
	}
	for _, h := range hooks {
		if !h.appliesTo(req.Tool) {
			continue
		}
		in, err := json.Marshal(HookInput{Event: "after_tool_use", Tool: req.Tool, Params: ran, Tier: d.Tier, Context: req.Context, Decision: &d, Outcome: &out})
		if err != nil {
			log.Warn("after_tool_use hook input", "err", err)
			return
		}
		if _, err := runExternal(ctx, h.Command, in, h.Timeout); err != nil {
			log.Warn("after_tool_use hook failed", "hook", strings.Join(h.Command, " "), "request", req.ID, "err", err)
		}
	}
}
