package gateway

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/internal/mcptest"
	"github.com/airlock-app/airlock/sandbox"
)

// recordingBroker answers with decide and records every request and outcome.
type recordingBroker struct {
	mu     sync.Mutex
	decide func(api.Request) api.Decision
	asked  []api.Request
	after  []api.AfterToolUse
}

func (b *recordingBroker) Await(_ context.Context, r api.Request) (api.Decision, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, r)
	return b.decide(r), nil
}

func (b *recordingBroker) After(_ context.Context, a api.AfterToolUse) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.after = append(b.after, a)
	return nil
}

func testPolicy(t testing.TB, dir string) sandbox.Policy {
	t.Helper()
	pol, err := sandbox.Resolve(sandbox.Inputs{Cwd: dir, Env: func(string) string { return "" }, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// idleVM is a micro-VM that runs nothing and succeeds.
var idleVM = sandbox.MicroVM(func(context.Context, sandbox.ExecRequest) (sandbox.Result, error) { return sandbox.Result{}, nil })

// pipInstallRisk names a pip install as a risk (what sends a command to the VM under
// execution_mode auto) and nothing else.
func pipInstallRisk(c string) string {
	if strings.Contains(c, "pip install") {
		return "package install `" + c + "`"
	}
	return ""
}

// everySession is an Options.MicroVM that gives every session m (nil: none installed).
func everySession(m sandbox.MicroVM) func(string) sandbox.MicroVM {
	if m == nil {
		return nil
	}
	return func(string) sandbox.MicroVM { return m }
}

func connect(t testing.TB, opts Options) *mcp.ClientSession {
	t.Helper()
	return mcptest.Connect(t, NewServer(opts))
}

// callText calls a tool and returns its result and text.
var callText = mcptest.CallText

func TestServerGovernsCalls(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	b := &recordingBroker{decide: func(r api.Request) api.Decision {
		switch r.Tool {
		case api.ToolWriteFile:
			var p map[string]any
			_ = json.Unmarshal(r.Params, &p)
			if strings.HasSuffix(p["path"].(string), "denied.txt") {
				return api.Decision{Verdict: api.Deny, Tier: "P1", Layer: "person", AnsweredBy: "window", Reasons: []string{"the person said no"}}
			}
			if strings.HasSuffix(p["path"].(string), "rewrite-out.txt") {
				return api.Decision{Verdict: api.Allow, Tier: "P1", Layer: "hook", Params: json.RawMessage(`{"path":"` + filepath.Join(outside, "x") + `","content":"x"}`)}
			}
			if strings.HasSuffix(p["path"].(string), "rewrite.txt") {
				return api.Decision{Verdict: api.Allow, Tier: "P1", Layer: "hook", Params: json.RawMessage(`{"path":"rewritten.txt","content":"by hook"}`)}
			}
		}
		return api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier", Params: r.Params}
	}}
	cs := connect(t, Options{Policy: testPolicy(t, ws), Broker: b, Department: "eng"})

	t.Run("denied: a tool error saying what, why and what can change", func(t *testing.T) {
		res, text := callText(t, cs, api.ToolWriteFile, map[string]any{"path": "denied.txt", "content": "x"})
		if !res.IsError || !strings.Contains(text, "Airlock blocked write_file ("+filepath.Join(ws, "denied.txt")+")") ||
			!strings.Contains(text, "the person said no") || !strings.Contains(text, "What can change it") {
			t.Fatalf("got %v %q", res.IsError, text)
		}
		if _, err := os.Stat(filepath.Join(ws, "denied.txt")); err == nil {
			t.Fatal("a denied write ran")
		}
	})
	t.Run("the request carries the session, workspace and policy, with absolute paths", func(t *testing.T) {
		callText(t, cs, api.ToolReadFile, map[string]any{"path": "nothing.txt"})
		r := b.asked[len(b.asked)-1]
		var p map[string]any
		_ = json.Unmarshal(r.Params, &p)
		if !strings.HasPrefix(r.Context.Session, "mcp-") || r.Context.Cwd != ws || r.Context.Workspace != ws ||
			r.Context.Department != "eng" || r.Context.Policy.Mode != "workspace-write" || p["path"] != filepath.Join(ws, "nothing.txt") ||
			r.Context.Caller.Description != "mcp:test" {
			t.Fatalf("request = %+v params %v", r, p)
		}
	})
	t.Run("isolation errors no escalation can lift do not reach the broker", func(t *testing.T) {
		n := len(b.asked)
		res, text := callText(t, cs, api.ToolWriteFile, map[string]any{"path": ".git/config", "content": "x"})
		if !res.IsError || !strings.Contains(text, "isolation error") || !strings.Contains(text, "protected path") {
			t.Fatalf(".git/config: got %v %q", res.IsError, text)
		}
		if len(b.asked) != n {
			t.Fatalf("the broker was asked about a call no escalation can allow")
		}
	})
	t.Run("an allow without the escalation's grant runs nothing outside the policy", func(t *testing.T) {
		// The broker is asked (a person could allow exactly that access), but this broker
		// allows without a grant: the tools still refuse.
		n := len(b.asked)
		for _, p := range []string{filepath.Join(outside, "x"), "../" + filepath.Base(outside) + "/x"} {
			res, text := callText(t, cs, api.ToolWriteFile, map[string]any{"path": p, "content": "x"})
			if !res.IsError || !strings.Contains(text, "isolation error") {
				t.Fatalf("%s: got %v %q", p, res.IsError, text)
			}
		}
		res, text := callText(t, cs, api.ToolWebFetch, map[string]any{"url": "https://example.com"})
		if !res.IsError || !strings.Contains(text, "network access is off") {
			t.Fatalf("web_fetch: %q", text)
		}
		if len(b.asked) != n+3 {
			t.Fatalf("the broker was asked %d times, want 3", len(b.asked)-n)
		}
		if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
			t.Fatal("a write escaped the workspace")
		}
	})
	t.Run("the decision's params run, and are checked again", func(t *testing.T) {
		res, text := callText(t, cs, api.ToolWriteFile, map[string]any{"path": "rewrite.txt", "content": "x"})
		got, _ := os.ReadFile(filepath.Join(ws, "rewritten.txt"))
		if res.IsError || string(got) != "by hook" {
			t.Fatalf("got %q, file %q", text, got)
		}
		res, text = callText(t, cs, api.ToolWriteFile, map[string]any{"path": "rewrite-out.txt", "content": "x"})
		if !res.IsError || !strings.Contains(text, "isolation error") {
			t.Fatalf("a rewrite out of the workspace ran: %q", text)
		}
	})
	t.Run("the outcome is reported", func(t *testing.T) {
		callText(t, cs, api.ToolWriteFile, map[string]any{"path": "ok.txt", "content": "x"})
		var a api.AfterToolUse
		// Reported in the background, so in any order: the earlier calls' reports may
		// come after this one's.
		found := false
		for deadline := time.Now().Add(30 * time.Second); !found && time.Now().Before(deadline); {
			b.mu.Lock()
			for _, got := range b.after {
				if strings.Contains(string(got.Request.Params), "ok.txt") {
					a, found = got, true
				}
			}
			b.mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
		if a.Request.Tool != api.ToolWriteFile || !a.Outcome.Ran || a.Outcome.Error != "" || a.Decision.Verdict != api.Allow {
			t.Fatalf("after = %+v", a)
		}
	})
}

// allowServer is a stand-in core on a unix socket that allows everything, so the
// benchmark measures the gateway, the SDK and the API round trip.
func allowServer(tb testing.TB) *localapi.Client {
	tb.Helper()
	sock := filepath.Join(tb.TempDir(), "a.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req api.Request
		_ = json.NewDecoder(r.Body).Decode(&req)
		localapi.WriteJSON(w, http.StatusOK, api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier", Params: req.Params})
	})}
	go func() { _ = srv.Serve(l) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return localapi.NewClient(sock)
}

func BenchmarkReadFileRoundTrip(b *testing.B) {
	ws := b.TempDir()
	_ = os.WriteFile(filepath.Join(ws, "f.txt"), []byte(strings.Repeat("a line of text\n", 100)), 0o644)
	client := allowServer(b)
	cs := connect(b, Options{Policy: testPolicy(b, ws), Broker: APIBroker{Client: client}, Client: client})
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: api.ToolReadFile, Arguments: map[string]any{"path": "f.txt"}})
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

func BenchmarkClaudeHookDecision(b *testing.B) {
	client := allowServer(b)
	h := ClaudeHook{Broker: APIBroker{Client: client}, MCPServer: "airlock"}
	ev := `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/w/a.go"}}`
	ctx := context.Background()
	var out strings.Builder
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out.Reset()
		if err := h.Run(ctx, strings.NewReader(ev), &out); err != nil {
			b.Fatal(err)
		}
	}
}

func TestWebFetchWithNetworkOn(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("0123456789", 10)))
	}))
	defer web.Close()
	ws := t.TempDir()
	on := sandbox.NetworkOn
	// The test's server is on this machine's loopback, which only allow_local reaches.
	pol, err := sandbox.Resolve(sandbox.Inputs{Cwd: ws, Env: func(string) string { return "" }, Home: t.TempDir(), Flags: sandbox.Layer{Network: &on},
		File: sandbox.Layer{NetworkTable: sandbox.NetworkTable{AllowLocal: new(true)}}})
	if err != nil {
		t.Fatal(err)
	}
	b := &recordingBroker{decide: func(r api.Request) api.Decision { return api.Decision{Verdict: api.Allow, Tier: "P1", Layer: "grant"} }}
	cs := connect(t, Options{Policy: pol, Broker: b, FetchCap: 25})
	res, text := callText(t, cs, api.ToolWebFetch, map[string]any{"url": web.URL + "/x"})
	if res.IsError || !strings.Contains(text, "HTTP 200 OK") || !strings.Contains(text, "\n\n0123456789012345678901234\n[body cut at 25 bytes]") {
		t.Fatalf("got %q", text)
	}
	if len(b.asked) != 1 || b.asked[0].Tool != api.ToolWebFetch || b.asked[0].Context.Policy.Network != api.NetworkOn {
		t.Fatalf("asked = %+v", b.asked)
	}
	res, text = callText(t, cs, api.ToolWebFetch, map[string]any{"url": "file:///etc/passwd"})
	if !res.IsError || !strings.Contains(text, "not an http(s) URL") {
		t.Fatalf("file URL: %q", text)
	}
}
