package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/localapi"
)

func TestMapClaudeTool(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		input    string
		want     string
		params   map[string]any
		governed bool
	}{
		{"bash", "Bash", `{"command":"git status","description":"x","timeout":1000}`, api.ToolBash, map[string]any{"command": "git status"}, false},
		{"read", "Read", `{"file_path":"/w/a.go","offset":10,"limit":5}`, api.ToolReadFile, map[string]any{"path": "/w/a.go", "offset": 10.0, "limit": 5.0}, false},
		{"read without range", "Read", `{"file_path":"/w/a.go"}`, api.ToolReadFile, map[string]any{"path": "/w/a.go"}, false},
		{"write", "Write", `{"file_path":"/w/a","content":"hi"}`, api.ToolWriteFile, map[string]any{"path": "/w/a", "content": "hi"}, false},
		{"edit", "Edit", `{"file_path":"/w/a","old_string":"x","new_string":"y","replace_all":true}`, api.ToolEditFile, map[string]any{"path": "/w/a", "old_string": "x", "new_string": "y", "replace_all": true}, false},
		{"multiedit", "MultiEdit", `{"file_path":"/w/a","edits":[{"old_string":"x","new_string":"y"}]}`, api.ToolEditFile, map[string]any{"path": "/w/a", "edits": []any{map[string]any{"old_string": "x", "new_string": "y"}}}, false},
		{"notebook", "NotebookEdit", `{"notebook_path":"/w/n.ipynb","new_source":"print(1)","cell_id":"c1"}`, api.ToolEditFile, map[string]any{"path": "/w/n.ipynb", "new_string": "print(1)", "cell_id": "c1"}, false},
		{"glob", "Glob", `{"pattern":"**/*.go","path":"/w"}`, api.ToolSearchFiles, map[string]any{"path": "/w", "glob": "**/*.go"}, false},
		{"grep", "Grep", `{"pattern":"func main","path":"/w","glob":"*.go","output_mode":"content"}`, api.ToolSearchFiles, map[string]any{"path": "/w", "regex": "func main", "glob": "*.go"}, false},
		{"ls", "LS", `{"path":"/w"}`, api.ToolListDir, map[string]any{"path": "/w"}, false},
		{"webfetch", "WebFetch", `{"url":"https://example.com","prompt":"summarize"}`, api.ToolWebFetch, map[string]any{"url": "https://example.com"}, false},
		{"websearch", "WebSearch", `{"query":"go sdk"}`, api.ToolWebSearch, map[string]any{"query": "go sdk"}, false},
		{"airlock mcp tool", "mcp__airlock__write_file", `{"path":"a","content":"b"}`, "write_file", map[string]any{"path": "a", "content": "b"}, true},
		{"other mcp tool", "mcp__github__create_issue", `{"title":"t"}`, "mcp__github__create_issue", map[string]any{"title": "t"}, false},
		{"malformed mcp name", "mcp__x", `{}`, "mcp__x", map[string]any{}, false},
		{"unknown tool", "Task", `{"prompt":"p"}`, "Task", map[string]any{"prompt": "p"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in map[string]any
			if err := json.Unmarshal([]byte(tt.input), &in); err != nil {
				t.Fatal(err)
			}
			got := MapClaudeTool(tt.tool, in, "airlock")
			if got.Tool != tt.want || got.Governed != tt.governed || !reflect.DeepEqual(got.Params, tt.params) {
				t.Fatalf("MapClaudeTool(%s) = %+v, want tool %s governed %v params %v", tt.tool, got, tt.want, tt.governed, tt.params)
			}
		})
	}
}

// fakeBroker answers with a fixed decision or error, and records what it was asked.
type fakeBroker struct {
	d     api.Decision
	err   error
	block bool
	got   []api.Request
	after []api.AfterToolUse
}

func (f *fakeBroker) Await(ctx context.Context, req api.Request) (api.Decision, error) {
	f.got = append(f.got, req)
	if f.block {
		<-ctx.Done()
		return api.Decision{}, ctx.Err()
	}
	return f.d, f.err
}

func (f *fakeBroker) After(_ context.Context, a api.AfterToolUse) error {
	f.after = append(f.after, a)
	return f.err
}

func runHook(t *testing.T, b Broker, event string) (ClaudeOutput, string) {
	t.Helper()
	var out bytes.Buffer
	h := ClaudeHook{Broker: b, Wait: 200 * time.Millisecond, MCPServer: "airlock", ServerBeside: func() bool { return true },
		Headless: func() bool { return false }, Bash: testBash()}
	if err := h.Run(context.Background(), strings.NewReader(event), &out); err != nil {
		t.Fatal(err)
	}
	var o ClaudeOutput
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatalf("output is not JSON: %q", out.String())
		}
	}
	return o, out.String()
}

const bashEvent = `{"session_id":"s1","transcript_path":"/t","cwd":"/w","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf ~"},"tool_use_id":"tu1"}`

func TestClaudeHookDecisions(t *testing.T) {
	tests := []struct {
		name    string
		broker  Broker
		event   string
		verdict api.Verdict
		reason  string // a part of the reason
	}{
		{"allow", &fakeBroker{d: api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier"}}, bashEvent, api.Allow, "decided by tier"},
		{"deny says why", &fakeBroker{d: api.Decision{Verdict: api.Deny, Tier: "P2", Layer: "person", Kind: "bash_destructive", InteractiveOnly: true, Reasons: []string{"deletes your home directory"}}}, bashEvent, api.Deny, "deletes your home directory"},
		{"ask stays ask", &fakeBroker{d: api.Decision{Verdict: api.Ask, Tier: "P1", Layer: "tier"}}, bashEvent, api.Ask, "left the answer to you"},
		{"dead broker asks", FailedBroker{Err: &localapi.NotRunningError{Socket: "/x.sock", Err: errors.New("connection refused")}}, bashEvent, api.Ask, "no Airlock app or daemon is running"},
		{"API error asks", &fakeBroker{err: &api.Error{Status: 500, Code: "internal", Message: "database is locked"}}, bashEvent, api.Ask, "database is locked"},
		{"nobody answers in time asks", &fakeBroker{block: true}, bashEvent, api.Ask, "nobody answered"},
		{"missing socket asks", APIBroker{Client: localapi.NewClient("/nonexistent/airlock.sock")}, bashEvent, api.Ask, "could not decide"},
		{"garbage input asks", &fakeBroker{d: api.Decision{Verdict: api.Allow}}, `{not json`, api.Ask, "could not parse"},
		{"no tool asks", &fakeBroker{d: api.Decision{Verdict: api.Allow}}, `{"hook_event_name":"PreToolUse","tool_input":{}}`, api.Ask, "names no tool"},
		{"airlock's own MCP tools pass", &fakeBroker{err: errors.New("must not be asked")}, `{"hook_event_name":"PreToolUse","tool_name":"mcp__airlock__bash","tool_input":{"command":"ls"}}`, api.Allow, "MCP server asks Airlock itself"},
		{"rewrite Claude cannot take asks", &fakeBroker{d: api.Decision{Verdict: api.Allow, Params: json.RawMessage(`{"path":"/elsewhere"}`)}}, `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/w/a","content":"x"}}`, api.Ask, "rewrote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, raw := runHook(t, tt.broker, tt.event)
			hs := o.HookSpecificOutput
			if hs.HookEventName != "PreToolUse" || hs.PermissionDecision != tt.verdict || !strings.Contains(hs.PermissionDecisionReason, tt.reason) {
				t.Fatalf("got %s, want %s with a reason containing %q", raw, tt.verdict, tt.reason)
			}
		})
	}
}

func TestClaudeHookWireFormat(t *testing.T) {
	_, raw := runHook(t, &fakeBroker{d: api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier"}}, bashEvent)
	var m map[string]map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	hs := m["hookSpecificOutput"]
	for _, k := range []string{"hookEventName", "permissionDecision", "permissionDecisionReason"} {
		if _, ok := hs[k].(string); !ok {
			t.Fatalf("hookSpecificOutput.%s missing in %s", k, raw)
		}
	}
	// Bash always comes back rewritten (it runs in the sandbox); other tools only when a
	// hook rewrote their input.
	if _, ok := hs["updatedInput"].(map[string]any); !ok {
		t.Fatalf("Bash's updatedInput missing: %s", raw)
	}
	_, raw = runHook(t, &fakeBroker{d: api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier"}},
		`{"hook_event_name":"PreToolUse","tool_name":"Read","cwd":"/w","tool_input":{"file_path":"/w/a"}}`)
	if strings.Contains(raw, "updatedInput") {
		t.Fatalf("updatedInput present without a rewrite: %s", raw)
	}
}

func TestClaudeHookRequest(t *testing.T) {
	fb := &fakeBroker{d: api.Decision{Verdict: api.Allow}}
	runHook(t, fb, `{"session_id":"abc","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Glob","tool_input":{"pattern":"*.go"}}`)
	if len(fb.got) != 1 {
		t.Fatalf("broker asked %d times", len(fb.got))
	}
	r := fb.got[0]
	var p map[string]any
	_ = json.Unmarshal(r.Params, &p)
	if r.Tool != api.ToolSearchFiles || r.Context.Session != "claude:abc" || r.Context.Cwd != "/w" || p["path"] != "/w" || r.Context.Caller.Description != "hook:claude" {
		t.Fatalf("request = %+v params %v", r, p)
	}
}

func TestClaudeHookRewrittenBash(t *testing.T) {
	fb := &fakeBroker{d: api.Decision{Verdict: api.Allow, Tier: "P1", Layer: "hook", Params: json.RawMessage(`{"command":"git status --short"}`)}}
	o, raw := runHook(t, fb, `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/w","tool_input":{"command":"git status","description":"d"}}`)
	upd := o.HookSpecificOutput.UpdatedInput
	cmd, _ := upd["command"].(string)
	// The rewritten command, and it in the sandbox.
	if inner, ok := unwrapBash(cmd, testAirlock); o.HookSpecificOutput.PermissionDecision != api.Allow || !ok || inner != "git status --short" || upd["description"] != "d" {
		t.Fatalf("got %s", raw)
	}
}

func TestClaudeHookPostToolUse(t *testing.T) {
	for _, ev := range []string{"PostToolUse", "PostToolUseFailure"} {
		fb := &fakeBroker{err: errors.New("no route")}
		_, raw := runHook(t, fb, `{"hook_event_name":"`+ev+`","tool_name":"Bash","cwd":"/w","tool_input":{"command":"ls"},"tool_response":{"stdout":"a"},"error":"boom"}`)
		if raw != "" {
			t.Fatalf("%s printed %q; it must exit quietly", ev, raw)
		}
		if len(fb.after) != 1 || fb.after[0].Request.Tool != api.ToolBash || !fb.after[0].Outcome.Ran || len(fb.got) != 0 {
			t.Fatalf("%s: after = %+v, awaited %d", ev, fb.after, len(fb.got))
		}
	}
}

func FuzzClaudeHook(f *testing.F) {
	f.Add(bashEvent)
	f.Add(`{"hook_event_name":"PreToolUse","tool_name":"mcp__a__b","tool_input":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, event string) {
		var out bytes.Buffer
		h := ClaudeHook{Broker: FailedBroker{Err: errors.New("down")}, Wait: time.Millisecond, MCPServer: "airlock"}
		if err := h.Run(context.Background(), strings.NewReader(event), &out); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), `"permissionDecision":"allow"`) && !strings.Contains(event, "mcp__airlock__") {
			t.Fatalf("a dead broker allowed %q: %s", event, out.String())
		}
	})
}

// TestClaudeHookSearchOverHidden: Claude Code's own Grep and Glob over a tree that holds
// credentials (~) are refused without asking the broker (Claude Code cannot be made to
// skip ~/.ssh); below it, and LS of ~ (one level, names only), go to the broker as usual.
func TestClaudeHookSearchOverHidden(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, filepath.Join(proj, "up")); err != nil {
		t.Fatal(err)
	}
	// The SSH agent's socket is hidden too, but no search reads a socket: its directory stays searchable.
	sockDir := filepath.Join(home, "agent-sock")
	if err := os.MkdirAll(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(sockDir, "agent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t.Setenv("SSH_AUTH_SOCK", filepath.Join(sockDir, "agent.sock"))
	event := func(tool, cwd string, input map[string]any) string {
		raw, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": cwd, "tool_name": tool, "tool_input": input})
		return string(raw)
	}
	tests := []struct {
		name   string
		event  string
		refuse bool
	}{
		{"Grep over ~", event("Grep", proj, map[string]any{"pattern": "PRIVATE KEY", "path": home}), true},
		{"Grep over a literal ~", event("Grep", proj, map[string]any{"pattern": "PRIVATE KEY", "path": "~"}), true},
		{"Grep without a path, started in ~", event("Grep", home, map[string]any{"pattern": "PRIVATE KEY"}), true},
		{"Grep over a relative ..", event("Grep", proj, map[string]any{"pattern": "KEY", "path": ".."}), true},
		{"Grep through a link to ~", event("Grep", proj, map[string]any{"pattern": "KEY", "path": filepath.Join(proj, "up")}), true},
		{"Grep inside ~/.ssh", event("Grep", proj, map[string]any{"pattern": "KEY", "path": filepath.Join(home, ".ssh")}), true},
		{"Glob over ~", event("Glob", proj, map[string]any{"pattern": "**/*", "path": home}), true},
		{"Grep in a project", event("Grep", proj, map[string]any{"pattern": "KEY", "path": proj}), false},
		{"Glob in a project, no path", event("Glob", proj, map[string]any{"pattern": "*.go"}), false},
		{"LS of ~", event("LS", proj, map[string]any{"path": home}), false},
		{"Grep beside the SSH agent's socket", event("Grep", proj, map[string]any{"pattern": "x", "path": sockDir}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBroker{d: api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier"}}
			o, raw := runHook(t, b, tc.event)
			hs := o.HookSpecificOutput
			if !tc.refuse {
				if hs.PermissionDecision != api.Allow || len(b.got) != 1 {
					t.Fatalf("got %s (broker asked %d times), want the broker's allow", raw, len(b.got))
				}
				return
			}
			if hs.PermissionDecision != api.Deny || !strings.Contains(hs.PermissionDecisionReason, filepath.Join(home, ".ssh")) ||
				!strings.Contains(hs.PermissionDecisionReason, "mcp__airlock__search_files") {
				t.Fatalf("got %s, want a refusal naming ~/.ssh and the way out", raw)
			}
			if len(b.got) != 0 {
				t.Fatal("the broker was asked about a search the hook refuses")
			}
		})
	}
}

// A server that is only named "airlock" is not let through: without Airlock's MCP server
// beside the hook, or for a tool Airlock's server does not have, the broker is asked
// about the call under its own name.
func TestClaudeHookRecognisesAirlocksServerByMoreThanItsName(t *testing.T) {
	for _, tt := range []struct {
		name   string
		beside bool
		tool   string
	}{
		{"named airlock, not Airlock's server", false, "mcp__airlock__bash"},
		{"Airlock's server, a tool it does not have", true, "mcp__airlock__format_disk"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBroker{d: api.Decision{Verdict: api.Ask, Tier: "P1", Layer: "tier"}}
			h := ClaudeHook{Broker: b, Wait: time.Second, MCPServer: "airlock", ServerBeside: func() bool { return tt.beside }}
			var out bytes.Buffer
			ev := `{"hook_event_name":"PreToolUse","tool_name":"` + tt.tool + `","tool_input":{"command":"ls"}}`
			if err := h.Run(context.Background(), strings.NewReader(ev), &out); err != nil {
				t.Fatal(err)
			}
			if len(b.got) != 1 || b.got[0].Tool != tt.tool || !strings.Contains(out.String(), `"permissionDecision":"ask"`) {
				t.Fatalf("asked %+v, answered %s", b.got, out.String())
			}
		})
	}
}

// TestClaudeHookModes: what the hook asks the broker for and what it answers, by where
// Claude Code runs: with its own prompt, the question may be handed over (at once when
// nothing in Airlock can answer); headless (claude -p, dontAsk) or in an Airlock run,
// nothing is handed over and every unanswered question is a deny the model reads.
func TestClaudeHookModes(t *testing.T) {
	handedOver := api.Decision{Verdict: api.Ask, Tier: "P1", Layer: "policy", AnsweredBy: api.AnsweredHandedOver,
		Reasons: []string{"nothing can answer in Airlock now; handed over to the caller's own prompt"}}
	unattended := api.Decision{Verdict: api.Deny, Tier: "P1", Layer: "policy", AnsweredBy: api.AnsweredUnattended,
		Reasons: []string{"nothing can answer in Airlock now"}}
	expired := api.Decision{Verdict: api.Deny, Tier: "P1", Layer: "policy", AnsweredBy: api.AnsweredExpired,
		Reasons: []string{"expired: nobody answered in Airlock within 24h0m0s"}}
	dontAsk := strings.Replace(bashEvent, `"permission_mode":"default"`, `"permission_mode":"dontAsk"`, 1)
	tests := []struct {
		name                 string
		hook                 ClaudeHook
		event                string
		d                    api.Decision
		err                  error
		handOver, unattended bool
		timeout              time.Duration
		verdict              api.Verdict
		reason, notReason    string
	}{
		{"prompt: handed over", ClaudeHook{Wait: time.Minute}, bashEvent, handedOver, nil, true, true, time.Minute, api.Ask, "Claude Code asks you instead", ""},
		{"prompt, --wait-unattended", ClaudeHook{Wait: time.Minute, WaitUnattended: true}, bashEvent, handedOver, nil, true, false, time.Minute, api.Ask, "handed over", ""},
		{"headless: denied at once", ClaudeHook{Wait: time.Minute, Headless: func() bool { return true }}, bashEvent, unattended, nil, false, true, time.Minute, api.Deny, "nobody can answer now", "Claude Code asks you"},
		{"dontAsk is headless", ClaudeHook{Wait: time.Minute}, dontAsk, unattended, nil, false, true, time.Minute, api.Deny, "nobody can answer now", "Claude Code asks you"},
		{"headless: an error denies", ClaudeHook{Wait: time.Minute, Headless: func() bool { return true }}, bashEvent, api.Decision{}, errors.New("database is locked"), false, true, time.Minute, api.Deny, "Nobody can answer now", "Claude Code asks you"},
		{"in a run: until the hold deadline, expired", ClaudeHook{InRun: true}, bashEvent, expired, nil, false, false, 0, api.Deny, "expired unanswered", "Claude Code asks you"},
		{"in a run with --wait", ClaudeHook{InRun: true, Wait: time.Hour}, bashEvent, expired, nil, false, false, time.Hour, api.Deny, "expired unanswered", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBroker{d: tt.d, err: tt.err}
			h := tt.hook
			h.Broker, h.MCPServer, h.Bash = b, "airlock", testBash()
			if h.Headless == nil {
				h.Headless = func() bool { return false }
			}
			var out bytes.Buffer
			if err := h.Run(context.Background(), strings.NewReader(tt.event), &out); err != nil {
				t.Fatal(err)
			}
			if len(b.got) != 1 {
				t.Fatalf("asked %d times", len(b.got))
			}
			if r := b.got[0]; r.HandOver != tt.handOver || r.AnswerUnattended != tt.unattended || r.Timeout != tt.timeout || r.CallID != "tu1" {
				t.Errorf("asked %+v, want hand over %v, answer unattended %v, timeout %s, call tu1", r, tt.handOver, tt.unattended, tt.timeout)
			}
			var o ClaudeOutput
			if err := json.Unmarshal(out.Bytes(), &o); err != nil {
				t.Fatalf("output %q: %v", out.String(), err)
			}
			hs := o.HookSpecificOutput
			if hs.PermissionDecision != tt.verdict || !strings.Contains(hs.PermissionDecisionReason, tt.reason) ||
				(tt.notReason != "" && strings.Contains(hs.PermissionDecisionReason, tt.notReason)) {
				t.Errorf("answered %s, want %s with %q and without %q", out.String(), tt.verdict, tt.reason, tt.notReason)
			}
		})
	}
}

// TestClaudeHookReportsWhatRan: PostToolUse and PostToolUseFailure report the outcome
// with the call's id, so the audit row of its decision can say it ran or failed.
func TestClaudeHookReportsWhatRan(t *testing.T) {
	for _, tt := range []struct{ event, failure string }{
		{"PostToolUse", ""},
		{"PostToolUseFailure", "exit status 2"},
	} {
		b := &fakeBroker{}
		ev := strings.Replace(bashEvent, `"PreToolUse"`, `"`+tt.event+`"`, 1)
		if tt.failure != "" {
			ev = strings.Replace(ev, `"tool_use_id"`, `"error":"`+tt.failure+`","tool_use_id"`, 1)
		}
		if o, raw := runHook(t, b, ev); raw != "" || o.HookSpecificOutput.PermissionDecision != "" {
			t.Errorf("%s printed %q", tt.event, raw)
		}
		if len(b.after) != 1 || b.after[0].Request.CallID != "tu1" || !b.after[0].Outcome.Ran || b.after[0].Outcome.Error != tt.failure {
			t.Errorf("%s reported %+v", tt.event, b.after)
		}
	}
}

// TestDenialTextWhenNobodyAnswered: what an agent (the hook's model, an MCP tool's
// caller) reads when nobody answered: that it expired unanswered, or that nobody could
// answer, and what to do instead of retrying; not the approval_policy remedy of the
// policy layer that denied it.
func TestDenialTextWhenNobodyAnswered(t *testing.T) {
	for _, tt := range []struct {
		by, want string
	}{
		{api.AnsweredExpired, "it expired unanswered"},
		{api.AnsweredUnattended, "nobody can answer now"},
	} {
		got := DenialText("bash", "make deploy", api.Decision{Verdict: api.Deny, Tier: "P1", Layer: "policy", AnsweredBy: tt.by})
		if !strings.Contains(got, tt.want) || !strings.Contains(got, "Do not retry it at once") || strings.Contains(got, "approval_policy") {
			t.Errorf("%s: %q", tt.by, got)
		}
	}
}
