package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/dispatch"
)

// TestAllowlistThroughTheRealSurfaces: with network_access = "allowlist" in config.toml
// and the egress proxy not yet connected, a real scheduled run and a real MCP session get
// no network — not even to a domain the list allows — and each says so.
func TestAllowlistThroughTheRealSurfaces(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	base, err := os.MkdirTemp("/var/tmp", "airlock-allowlist-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	cfg := filepath.Join(base, "airlock", "config", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte("[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n[network]\nallowed_domains = [\"127.0.0.1\"]\nallow_local = true\n"), 0o600)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port

	c, _ := runCoreAt(t, base)
	ctx := context.Background()
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(repo, 0o755)

	// A scheduled run.
	probe := fmt.Sprintf("import socket\ntry:\n    socket.create_connection(('127.0.0.1', %d), timeout=2); print('connected')\nexcept Exception as e:\n    print('unreachable:', e)\n", port)
	tk, err := c.Dispatch.CreateTask(ctx, dispatch.TaskSpec{Name: "probe", Cwd: repo, Argv: []string{"python3", "-c", probe}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Dispatch.RunNow(ctx, tk.Name)
	if err != nil {
		t.Fatal(err)
	}
	var got dispatch.Run
	waitFor(t, func() bool {
		got, _ = c.Dispatch.Run(ctx, r.ID)
		return dispatch.Finished(got.Status)
	})
	log, _ := os.ReadFile(got.LogPath)
	if got.Policy.Network != api.NetworkAllowlist || got.Status != dispatch.StatusSucceeded {
		t.Fatalf("run: %s (%s), policy %+v\n%s", got.Status, got.Reason, got.Policy, log)
	}
	if !strings.Contains(string(log), "network allowlist (proxy not yet connected: no network)") || !strings.Contains(string(log), "unreachable:") {
		t.Errorf("the run's log:\n%s", log)
	}

	// An MCP session: web_fetch and bash are refused before anything connects.
	cs := mcpSession(t, c, repo)
	asked := answerNext(t, c, false) // an escalation, if the tool offers one, is denied
	if isErr, text := toolText(t, cs, api.ToolWebFetch, map[string]any{"url": fmt.Sprintf("http://127.0.0.1:%d/", port)}); !isErr || !strings.Contains(text, "proxy not yet connected") {
		t.Errorf("web_fetch under an allowlist: %v %q", isErr, text)
	}
	<-asked
	select {
	case <-accepted:
		t.Fatal("ESCAPE: something reached the host's loopback under an allowlist without its proxy")
	case <-time.After(100 * time.Millisecond):
	}
}
