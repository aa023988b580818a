package gateway

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// Over streamable HTTP every client session is a broker session of its own, kept for all
// of that client's calls, and the tools are the stdio server's.
func TestHTTPHandlerSessionPerClient(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := &recordingBroker{decide: func(api.Request) api.Decision { return api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier"} }}
	opts := Options{Policy: testPolicy(t, ws), Broker: b}
	srv := httptest.NewServer(HTTPHandler(opts, 0))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	open := func(name string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, c := open("a"), open("c")

	stdio, err := connect(t, opts).ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	overHTTP, err := a.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(overHTTP.Tools) != len(stdio.Tools) {
		t.Fatalf("%d tools over HTTP, %d over stdio", len(overHTTP.Tools), len(stdio.Tools))
	}
	for _, cs := range []*mcp.ClientSession{a, c, a} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: api.ToolReadFile, Arguments: map[string]any{"path": "a.txt"}})
		if err != nil || res.IsError {
			t.Fatalf("read_file: %v %+v", err, res)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.asked) != 3 {
		t.Fatalf("%d broker requests, want 3", len(b.asked))
	}
	first, other, again := b.asked[0].Context, b.asked[1].Context, b.asked[2].Context
	if first.Session == "" || first.Session == other.Session || again.Session != first.Session {
		t.Fatalf("sessions %q, %q, %q: want one per client, the same for all of a client's calls", first.Session, other.Session, again.Session)
	}
	if first.Caller.Description != "mcp:a" || other.Caller.Description != "mcp:c" || first.Workspace != ws {
		t.Fatalf("contexts %+v / %+v", first, other)
	}
}

// Over streamable HTTP each client session's bash runs in its own micro-VM (by its broker
// session), so one client's VM, its leftovers outside the workspace and its ask-only
// channel are never another's.
func TestHTTPHandlerMicroVMPerSession(t *testing.T) {
	ws := t.TempDir()
	b := &recordingBroker{decide: func(api.Request) api.Decision { return api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier"} }}
	pol := testPolicy(t, ws)
	pol.ExecutionMode = sandbox.ExecSandbox
	var mu sync.Mutex
	var vms []string
	opts := Options{Policy: pol, Broker: b, MicroVM: func(session string) sandbox.MicroVM {
		mu.Lock()
		vms = append(vms, session)
		mu.Unlock()
		return func(_ context.Context, req sandbox.ExecRequest) (sandbox.Result, error) {
			fmt.Fprintf(req.Stdout, "in the VM of %s\n", session)
			return sandbox.Result{Backend: sandbox.BackendNameMicroVM}, nil
		}
	}}
	srv := httptest.NewServer(HTTPHandler(opts, 0))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	var outs []string
	for _, name := range []string{"a", "c"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		_, text := callText(t, cs, api.ToolBash, map[string]any{"command": "true"})
		outs = append(outs, text)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if len(vms) != 2 || vms[0] == vms[1] || vms[0] != b.asked[0].Context.Session || vms[1] != b.asked[1].Context.Session {
		t.Fatalf("micro-VMs asked for sessions %q; the broker saw %q and %q: want one VM per client session", vms, b.asked[0].Context.Session, b.asked[1].Context.Session)
	}
	for i, out := range outs {
		if !strings.Contains(out, "in the VM of "+vms[i]) {
			t.Errorf("client %d ran in another session's VM: %q", i, out)
		}
	}
}
