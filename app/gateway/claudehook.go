package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// ClaudeEvent is a Claude Code hook event as documented for PreToolUse and PostToolUse
// (stdin of a command hook).
type ClaudeEvent struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path,omitempty"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode,omitempty"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      map[string]any  `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	Error          string          `json:"error,omitempty"` // PostToolUseFailure
}

// ClaudeOutput is the documented PreToolUse answer.
type ClaudeOutput struct {
	HookSpecificOutput ClaudeDecision `json:"hookSpecificOutput"`
}

// ClaudeDecision is hookSpecificOutput of a PreToolUse answer.
type ClaudeDecision struct {
	HookEventName            string         `json:"hookEventName"`
	PermissionDecision       api.Verdict    `json:"permissionDecision"` // allow | deny | ask: Claude's words are Airlock's verdicts
	PermissionDecisionReason string         `json:"permissionDecisionReason"`
	UpdatedInput             map[string]any `json:"updatedInput,omitempty"`
}

// ClaudeHook answers Claude Code's hooks from the broker.
type ClaudeHook struct {
	Broker Broker
	// Wait bounds the wait for a person; past it the hook answers "ask", so Claude
	// Code asks in its own terminal (keep it below the hook's timeout in settings.json).
	// Inside an Airlock run 0 means until the run's hold deadline.
	Wait time.Duration
	// InRun says the hook reaches Airlock through a run's ask-only channel: nobody is at
	// Claude Code's prompt there, so it waits for the person in Airlock (the run shows
	// as waiting) until Wait or the run's hold deadline, and an unanswered question is
	// denied, never handed over.
	InRun bool
	// WaitUnattended waits the whole Wait even when nothing in Airlock can answer now;
	// by default the hook then answers at once.
	WaitUnattended bool
	// Headless reports whether Claude Code runs without a prompt of its own (claude -p)
	// (nil: ClaudeHeadless, from /proc). There an unanswered question is denied with a
	// reason the model reads, since "ask" would only be refused.
	Headless func() bool
	// MCPServer is the name Airlock's MCP server has in Claude Code ("airlock"): its
	// tools ask the broker themselves.
	MCPServer string
	// ServerBeside reports whether Airlock's own MCP server runs beside this hook (nil:
	// AirlockMCPBeside, from /proc). A server that is only named like Airlock's is not
	// let through: its tools are asked about like any other server's.
	ServerBeside func() bool
	// Department is sent with every request (optional).
	Department string
	// Profile is the permission profile the hook's caller chose (--profile,
	// AIRLOCK_PROFILE), sent with every request: the broker lets it only tighten its
	// tiers and approval policy, since any caller may name one.
	Profile string
	// Bash is how Claude Code's own Bash commands run: through `airlock exec` in
	// Airlock's sandbox unless the explicit setting leaves them unconfined.
	Bash BashSandbox
	// Hidden are the paths Claude Code's own Grep and Glob may not search through (nil:
	// the credential paths under $HOME and the environment's default hidden paths).
	Hidden []string
}

// Run reads one event from in and writes the answer to out. It returns an error only
// when out cannot be written; every other failure becomes an "ask" answer.
func (h ClaudeHook) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	raw, err := io.ReadAll(io.LimitReader(in, 16<<20))
	if err != nil {
		return writeClaude(out, h.unanswered(ClaudeEvent{}, fmt.Sprintf("Airlock could not read the hook event (%v)", err)))
	}
	var ev ClaudeEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return writeClaude(out, h.unanswered(ClaudeEvent{}, fmt.Sprintf("Airlock could not parse the hook event (%v)", err)))
	}
	switch ev.HookEventName {
	case "PostToolUse", "PostToolUseFailure":
		h.after(ctx, ev)
		return nil // nothing to say: exit 0 quietly
	case "PreToolUse", "":
		return writeClaude(out, h.decide(ctx, ev))
	}
	return nil // an event Airlock does not answer
}

// decide turns one PreToolUse event into the answer. Any failure is "ask" (a deny where
// Claude Code has no prompt), never "allow".
func (h ClaudeHook) decide(ctx context.Context, ev ClaudeEvent) ClaudeOutput {
	if ev.ToolName == "" {
		return h.unanswered(ev, "the hook event names no tool (tool_name is empty)")
	}
	call := h.mapTool(ev)
	if call.Governed {
		return answer(api.Allow, "Airlock's MCP server asks Airlock itself before "+call.Tool+" runs", nil)
	}
	if ev.ToolName == "Grep" || ev.ToolName == "Glob" {
		if out, refused := h.searchesHidden(ev, call); refused {
			return out
		}
	}
	req := h.request(ev, call)
	if ev.ToolName != "Bash" {
		out, _ := h.await(ctx, ev, call, req)
		return out
	}
	plan, confined, err := h.bashPlan(req.Context.Cwd)
	if err != nil {
		// The broker still decides (its rule and its audit); only its deny stands as it is.
		if out, _ := h.await(ctx, ev, call, req); out.HookSpecificOutput.PermissionDecision == api.Deny {
			return out
		}
		return answer(api.Deny, fmt.Sprintf("Airlock cannot run this command in its sandbox (%v), and it does not run it on your machine "+
			"instead: install airlock beside airlock-agent (`make build`), fix config.toml (`airlock config show` checks it), or use "+
			"mcp__%s__bash; only %s in config.toml lets Claude Code's Bash run unconfined", err, h.mcpName(), UnconfinedSetting), nil)
	}
	if confined {
		// The broker judges the command by the policy exec will enforce.
		req.Context.Policy.Mode, req.Context.Policy.Network = string(plan.policy.Mode), plan.policy.Network.Norm()
		req.Context.Policy.EgressConnected = plan.policy.Network == sandbox.NetworkAllowlist
	}
	out, d := h.await(ctx, ev, call, req)
	o := &out.HookSpecificOutput
	if o.PermissionDecision == api.Deny {
		return out
	}
	var grant *api.Grant
	if d.Grant != nil && !d.Grant.IsZero() {
		grant = d.Grant
	}
	if !confined {
		o.PermissionDecisionReason = unconfinedReason(o.PermissionDecisionReason, grant) + "; " + h.bashNote(plan, false, grant)
		return out
	}
	input := o.UpdatedInput
	if input == nil {
		input = make(map[string]any, len(ev.ToolInput))
		for k, v := range ev.ToolInput {
			input[k] = v
		}
	}
	command, _ := input["command"].(string)
	input["command"] = h.wrap(plan, req.Context.Cwd, command, grant)
	o.UpdatedInput = input
	o.PermissionDecisionReason += "; " + h.bashNote(plan, true, grant)
	return out
}

// await asks the broker about req and turns its decision into the answer (and the
// decision, zero when there is none).
func (h ClaudeHook) await(ctx context.Context, ev ClaudeEvent, call MappedCall, req api.Request) (ClaudeOutput, api.Decision) {
	wait := h.Wait
	if wait <= 0 && !h.InRun {
		wait = 50 * time.Second
	}
	if !h.InRun {
		// The broker answers at the deadline, and at once when nothing in Airlock can
		// answer: handed over to Claude Code's prompt, or denied where it has none.
		req.HandOver = !h.headless(ev)
		req.AnswerUnattended = !h.WaitUnattended
	}
	req.Timeout = wait // 0 in a run: its hold deadline, which the core sets
	if wait > 0 {
		// A little past the broker's deadline, so its answer (and its audit) comes first;
		// an older core that does not answer at the deadline is still cut off.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait+answerGrace)
		defer cancel()
	}
	d, err := h.Broker.Await(ctx, req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return h.unanswered(ev, fmt.Sprintf("nobody answered in Airlock within %s (%s %s)", wait, call.Tool, subjectOf(call))), api.Decision{}
		}
		return h.unanswered(ev, fmt.Sprintf("Airlock could not decide (%v)", err)), api.Decision{}
	}
	reason := fmt.Sprintf("Airlock: %s %s — %s, decided by %s", call.Tool, subjectOf(call), d.Tier, d.Layer)
	switch d.Verdict {
	case api.Allow:
		if len(d.Params) > 0 && !sameJSON(d.Params, req.Params) {
			upd, ok := updatedClaudeInput(ev.ToolName, ev.ToolInput, d.Params)
			if !ok {
				return h.unanswered(ev, fmt.Sprintf("an Airlock hook rewrote the parameters of %s in a way Claude Code cannot take", call.Tool)), d
			}
			return answer(api.Allow, reason+" (parameters rewritten by an Airlock hook)", upd), d
		}
		return answer(api.Allow, reason, nil), d
	case api.Deny:
		return answer(api.Deny, DenialText(call.Tool, subjectOf(call), d), nil), d
	}
	if d.AnsweredBy == api.AnsweredHandedOver {
		return h.unanswered(ev, fmt.Sprintf("Airlock: %s %s — %s", call.Tool, subjectOf(call), strings.Join(d.Reasons, "; "))), d
	}
	return h.unanswered(ev, reason+"; Airlock left the answer to you"), d
}

// answerGrace is how much longer than the broker's deadline the hook waits for it.
const answerGrace = 2 * time.Second

// headless reports whether Claude Code has no prompt to hand a question to: it runs
// with -p (Headless), inside an Airlock run, or in the dontAsk permission mode, where
// what is not allowed is refused.
func (h ClaudeHook) headless(ev ClaudeEvent) bool {
	if h.InRun || ev.PermissionMode == "dontAsk" {
		return true
	}
	if h.Headless != nil {
		return h.Headless()
	}
	return ClaudeHeadless(os.Getpid())
}

// unanswered is the answer when Airlock did not decide (why): "ask", so Claude Code
// asks in its own prompt; where it has none (headless), "deny" with what the model
// should do, since an "ask" would only be refused with nothing to go on.
func (h ClaudeHook) unanswered(ev ClaudeEvent, why string) ClaudeOutput {
	if !h.headless(ev) {
		return ask("%s; Claude Code asks you instead", why)
	}
	return answer(api.Deny, why+". Nobody can answer now: Claude Code runs without a prompt here, so this needs a person in "+
		"Airlock (the window, the tray, or `airlock approvals watch` at a terminal). Do not retry it at once: go on without it, "+
		"or stop and say what it needs the person to allow.", nil)
}

// after reports a PostToolUse event as after_tool_use. Failures are ignored: the tool
// already ran, and the hook must not disturb the agent.
func (h ClaudeHook) after(ctx context.Context, ev ClaudeEvent) {
	call := h.mapTool(ev)
	if call.Governed || ev.ToolName == "" {
		return
	}
	if c, ok := call.Params["command"].(string); ok && ev.ToolName == "Bash" {
		if orig, wrapped := unwrapBash(c, h.Bash.Airlock); wrapped {
			call.Params["command"] = orig // Claude Code reports the input the hook rewrote
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	// PostToolUse: it ran; PostToolUseFailure: it ran and failed (its error).
	out := api.Outcome{Ran: true, Error: ev.Error}
	if ev.HookEventName == "PostToolUseFailure" && out.Error == "" {
		out.Error = "the tool failed"
	}
	_ = h.Broker.After(ctx, api.AfterToolUse{Request: h.request(ev, call), Decision: api.Decision{Verdict: api.Allow}, Outcome: out})
}

// mapTool maps the event's tool; a call to a server named like Airlock's that is not
// Airlock's own MCP server, running beside this hook, is not governed.
func (h ClaudeHook) mapTool(ev ClaudeEvent) MappedCall {
	call := MapClaudeTool(ev.ToolName, ev.ToolInput, h.MCPServer)
	if call.Governed {
		beside := h.ServerBeside
		if beside == nil {
			beside = func() bool { return AirlockMCPBeside(os.Getpid()) }
		}
		if !beside() {
			return MappedCall{Tool: ev.ToolName, Params: ev.ToolInput}
		}
	}
	return call
}

func (h ClaudeHook) request(ev ClaudeEvent, call MappedCall) api.Request {
	cwd := ev.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if p, ok := call.Params["path"]; ok && p == "" && (call.Tool == api.ToolSearchFiles || call.Tool == api.ToolListDir) {
		call.Params["path"] = cwd
	}
	params, _ := json.Marshal(call.Params)
	workspace := os.Getenv("CLAUDE_PROJECT_DIR")
	if workspace == "" {
		workspace = cwd
	}
	return api.Request{Tool: call.Tool, Params: params, CallID: ev.ToolUseID, Context: api.Context{
		Session: "claude:" + ev.SessionID, Department: h.Department, Workspace: workspace, Cwd: cwd,
		Caller: api.Caller{PID: os.Getpid(), Description: "hook:claude"}, Policy: api.PolicySummary{Profile: h.Profile},
	}}
}

// subjectOf is the short text naming what a call touches.
func subjectOf(c MappedCall) string {
	for _, k := range []string{"command", "path", "url", "query"} {
		if s, ok := c.Params[k].(string); ok && s != "" {
			if len(s) > 200 {
				s = s[:200] + "…"
			}
			return s
		}
	}
	return ""
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	ra, _ := json.Marshal(x)
	rb, _ := json.Marshal(y)
	return bytes.Equal(ra, rb)
}

func answer(verdict api.Verdict, reason string, upd map[string]any) ClaudeOutput {
	return ClaudeOutput{HookSpecificOutput: ClaudeDecision{HookEventName: "PreToolUse",
		PermissionDecision: verdict, PermissionDecisionReason: reason, UpdatedInput: upd}}
}

func ask(format string, args ...any) ClaudeOutput {
	return answer(api.Ask, fmt.Sprintf(format, args...), nil)
}

func writeClaude(w io.Writer, o ClaudeOutput) error {
	raw, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = w.Write(append(raw, '\n'))
	return err
}

// searchesHidden refuses a Grep or Glob whose tree holds a hidden path that exists
// (searching ~ goes through ~/.ssh). Claude Code runs these tools in its own process,
// where Airlock cannot skip entries the way its search_files does, and reading
// credentials through a file tool is never silent: the search is refused
// with the way out, instead of being allowed as the P0 read it looks like.
func (h ClaudeHook) searchesHidden(ev ClaudeEvent, call MappedCall) (ClaudeOutput, bool) {
	cwd := ev.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	dir, _ := call.Params["path"].(string)
	home, _ := os.UserHomeDir()
	switch {
	case dir == "":
		dir = cwd
	case dir == "~" || strings.HasPrefix(dir, "~/"):
		dir = filepath.Join(home, dir[1:])
	case !filepath.IsAbs(dir):
		dir = filepath.Join(cwd, dir)
	}
	dir = filepath.Clean(dir)
	real := dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		real = r
	}
	hidden := h.Hidden
	if hidden == nil {
		hidden = append(sandbox.CredentialPaths(home), sandbox.DefaultHiddenPaths(os.Getenv)...)
	}
	inside := func(p, root string) bool { return p == root || root == "/" || strings.HasPrefix(p, root+"/") }
	for _, hp := range hidden {
		if fi, err := os.Stat(hp); err != nil || fi.Mode()&(fs.ModeSocket|fs.ModeNamedPipe|fs.ModeDevice) != 0 {
			continue // nothing there that a search reads (the SSH agent's socket in /tmp, say)
		}
		hr := hp
		if r, err := filepath.EvalSymlinks(hp); err == nil {
			hr = r
		}
		if inside(hp, dir) || inside(hr, real) || inside(real, hr) || inside(dir, hp) {
			return answer(api.Deny, fmt.Sprintf("Airlock: %s over %s would read %s, which holds credentials or Airlock's own state "+
				"and is hidden from agents; Claude Code runs %s itself, so Airlock cannot leave that part out. "+
				"Search a directory that does not contain it (a project folder), or use mcp__%s__search_files, "+
				"which skips hidden entries", ev.ToolName, dir, hp, ev.ToolName, h.mcpName()), nil), true
		}
	}
	return ClaudeOutput{}, false
}

func (h ClaudeHook) mcpName() string {
	if h.MCPServer != "" {
		return h.MCPServer
	}
	return "airlock"
}
