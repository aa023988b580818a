package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
)

// CodexEvent is a Codex hook event (stdin of a command hook, Codex 0.171): for
// apply_patch, tool_input.command is the patch text.
type CodexEvent struct {
	SessionID     string         `json:"session_id"`
	Cwd           string         `json:"cwd"`
	HookEventName string         `json:"hook_event_name"`
	ToolName      string         `json:"tool_name"`
	ToolInput     map[string]any `json:"tool_input"`
	ToolUseID     string         `json:"tool_use_id,omitempty"`
}

// CodexHook answers Codex's PreToolUse hook from the broker. Codex 0.171 lets a hook
// deny a call and nothing else (no "ask"), and it runs the call when its hook fails, times
// out or prints something it does not read: every path here ends in a printed answer, a
// deny unless each file the call writes was allowed, and the wait is bounded well inside
// Codex's timeout of the hook.
type CodexHook struct {
	Broker Broker
	// Wait bounds the whole answer (every file of a patch): past it the call is denied.
	// Keep it below the hook's timeout in Codex's configuration.
	Wait time.Duration
	// InRun says the hook reaches Airlock through a run's ask-only channel, where the
	// run shows as waiting for the person; elsewhere a question nothing in Airlock can
	// answer now is refused at once, since Codex has no prompt to hand it to.
	InRun bool
	// Department and Profile are sent with every request (optional); the profile can
	// only tighten the broker's tiers and approval policy.
	Department, Profile string
}

// codexDeny is Codex's documented PreToolUse denial.
type codexDeny struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

// Run reads one event from in and writes the answer to out: "{}" lets the call run, a
// denial says why. It returns an error only when out cannot be written.
func (h CodexHook) Run(ctx context.Context, in io.Reader, out io.Writer) (err error) {
	defer func() {
		// A panic would fail the hook, and Codex runs a call whose hook failed.
		if r := recover(); r != nil {
			err = writeCodex(out, fmt.Sprintf("Airlock's hook failed (%v), so the call is refused", r))
		}
	}()
	allowed, reason := h.decide(ctx, in)
	if allowed {
		_, err = io.WriteString(out, "{}\n")
		return err
	}
	return writeCodex(out, reason)
}

func writeCodex(out io.Writer, reason string) error {
	var d codexDeny
	d.HookSpecificOutput.HookEventName = "PreToolUse"
	d.HookSpecificOutput.PermissionDecision = "deny"
	d.HookSpecificOutput.PermissionDecisionReason = reason
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = out.Write(append(raw, '\n'))
	return err
}

// decide reads the event and asks the broker about each call it makes; it allows only
// when every one was allowed.
func (h CodexHook) decide(ctx context.Context, in io.Reader) (bool, string) {
	raw, err := io.ReadAll(io.LimitReader(in, 16<<20))
	if err != nil {
		return false, fmt.Sprintf("Airlock could not read the hook event (%v), so the call is refused", err)
	}
	var ev CodexEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return false, fmt.Sprintf("Airlock could not parse the hook event (%v), so the call is refused", err)
	}
	if ev.HookEventName != "PreToolUse" && ev.HookEventName != "" {
		return true, "" // an event that decides nothing
	}
	if ev.Cwd == "" {
		ev.Cwd, _ = os.Getwd()
	}
	wait := h.Wait
	if wait <= 0 {
		wait = 50 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	calls, err := h.mapTool(ev)
	if err != nil {
		return false, fmt.Sprintf("Airlock: %v, so it cannot say which files this patch writes and refuses it. "+
			"Write each file with a well-formed patch (*** Begin Patch, *** Add File:/*** Update File:/*** Delete File: PATH, *** End Patch), "+
			"or use mcp__airlock__write_file and mcp__airlock__edit_file", err)
	}
	var done []string
	var allowed []api.AfterToolUse
	// Files allowed but not written (the patch was refused whole) are marked so in the
	// audit, beside their decisions.
	notRun := func(why string) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		for _, a := range allowed {
			a.Outcome = api.Outcome{Ran: false, Error: why}
			_ = h.Broker.After(ctx, a)
		}
	}
	for _, call := range calls {
		req, d, err := h.await(ctx, ev, call)
		subject := subjectOf(call)
		if err != nil {
			notRun(fmt.Sprintf("not applied: the same %s also wrote %s, which was not decided", ev.ToolName, subject))
			if ctx.Err() != nil {
				return false, fmt.Sprintf("Airlock: nobody answered within %s about %s %s, so %s is refused; "+
					"do not retry it at once: go on without it, or stop and say what the person should allow", wait, call.Tool, subject, ev.ToolName)
			}
			return false, fmt.Sprintf("Airlock could not decide %s %s (%v), so %s is refused", call.Tool, subject, err, ev.ToolName)
		}
		if d.Verdict == api.Allow {
			allowed = append(allowed, api.AfterToolUse{Request: req, Decision: d})
		}
		switch {
		case d.Verdict == api.Allow && d.Grant != nil && !d.Grant.IsZero():
			// What the person allowed is an escalation of the sandbox, which Airlock
			// applies to its own tools; Codex writes this file itself, inside the run's
			// sandbox, where the path stays as the run has it.
			notRun("not applied: Codex's " + ev.ToolName + " writes inside the run's sandbox, which the answer does not widen")
			return false, fmt.Sprintf("Airlock: %s %s was allowed beyond the sandbox, but Codex's %s writes inside this run's sandbox, "+
				"which no answer widens: the write would still fail. Use mcp__airlock__%s, which writes under what the person allowed",
				call.Tool, subject, ev.ToolName, call.Tool)
		case d.Verdict == api.Allow:
			done = append(done, subject)
		case d.Verdict == api.Deny:
			notRun(fmt.Sprintf("not applied: the same %s also wrote %s, which was denied", ev.ToolName, subject))
			return false, DenialText(call.Tool, subject, d) + alsoAllowed(done)
		default:
			notRun(fmt.Sprintf("not applied: the same %s also wrote %s, which nobody answered", ev.ToolName, subject))
			return false, fmt.Sprintf("Airlock: %s %s — nobody answered (%s), so %s is refused; "+
				"do not retry it at once: go on without it, or stop and say what the person should allow",
				call.Tool, subject, strings.Join(d.Reasons, "; "), ev.ToolName)
		}
	}
	return true, ""
}

// alsoAllowed tells the model that the files allowed before a denial were not written
// either: Codex applies a patch whole or not at all.
func alsoAllowed(done []string) string {
	if len(done) == 0 {
		return ""
	}
	return "\nNothing of this patch was applied, " + strings.Join(done, ", ") + " (allowed) included: patch only the files allowed, separately."
}

// mapTool maps the event's call: an apply_patch onto one file tool call per path;
// any other tool Codex hooks keeps its name and input (the broker asks about an unknown
// tool).
func (h CodexHook) mapTool(ev CodexEvent) ([]MappedCall, error) {
	if ev.ToolName == "" {
		return nil, errors.New("the hook event names no tool")
	}
	if ev.ToolName != "apply_patch" {
		return []MappedCall{{Tool: ev.ToolName, Params: ev.ToolInput}}, nil
	}
	text, _ := ev.ToolInput["command"].(string)
	if text == "" {
		text, _ = ev.ToolInput["input"].(string)
	}
	return MapCodexPatch(text, ev.Cwd)
}

// await asks the broker about one call, within what is left of the hook's wait, and
// returns the request it sent and the decision.
func (h CodexHook) await(ctx context.Context, ev CodexEvent, call MappedCall) (api.Request, api.Decision, error) {
	params, err := json.Marshal(call.Params)
	if err != nil {
		return api.Request{}, api.Decision{}, err
	}
	req := api.Request{Tool: call.Tool, Params: params, CallID: ev.ToolUseID, Context: api.Context{
		Session: "codex:" + ev.SessionID, Department: h.Department, Workspace: ev.Cwd, Cwd: ev.Cwd,
		Caller: api.Caller{PID: os.Getpid(), Description: "hook:codex"}, Policy: api.PolicySummary{Profile: h.Profile},
	}}
	req.AnswerUnattended = !h.InRun
	if dl, ok := ctx.Deadline(); ok {
		// The broker answers at its deadline (and audits it) a little before the hook's.
		req.Timeout = max(time.Until(dl)-answerGrace, time.Second)
	}
	d, err := h.Broker.Await(ctx, req)
	return req, d, err
}
