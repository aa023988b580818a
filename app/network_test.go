package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/cli/agentcmd"
	"github.com/airlock-app/airlock/app/gateway"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/permission"
)

// TestAllowlistThroughTheRealSurfaces: with network_access = "allowlist" in config.toml,
// a real scheduled run's direct connection (bypassing its proxy) to a domain the list
// allows gets nothing.
func TestAllowlistThroughTheRealSurfaces(t *testing.T) {
	base := allowlistBase(t, "allowed_domains = [\"127.0.0.1\"]\nallow_local = true\n")
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
	if !strings.Contains(string(log), "network allowlist (only the allowed domains, through Airlock's egress proxy)") || !strings.Contains(string(log), "unreachable:") {
		t.Errorf("the run's log:\n%s", log)
	}

	select {
	case <-accepted:
		t.Fatal("ESCAPE: something reached the host's loopback under an allowlist, bypassing the proxy")
	case <-time.After(100 * time.Millisecond):
	}
}

// TestAllowlistMCPWebFetchThroughTheEgressRules: an MCP session's web_fetch under an
// allowlist, with the real core's broker over the local API, reaches an allowed test
// server (on this machine's loopback, so the test sets allow_local), and an unknown
// domain raises a P1 network_domain request and is refused after Deny without a
// connection; the result lists each connection, and the audit has a row for each.
func TestAllowlistMCPWebFetchThroughTheEgressRules(t *testing.T) {
	base := allowlistBase(t, "allowed_domains = [\"127.0.0.1\"]\nallow_local = true\n")
	port, hits := reachedServer(t)
	c, _ := runCoreAt(t, base)
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(repo, 0o755)
	cs := mcpSession(t, c, repo)
	asked := make(chan permission.PendingRequest, 8)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			for _, p := range c.Broker.Pending() {
				allow := p.Request.Tool != permission.ToolNetworkDomain
				if _, err := c.Broker.Answer(context.Background(), p.ID, permission.Answer{Allow: allow, By: permission.ByWindow, Interactive: true}); err == nil {
					asked <- p
				}
			}
		}
	}()
	if isErr, text := toolText(t, cs, api.ToolWebFetch, map[string]any{"url": fmt.Sprintf("http://127.0.0.1:%d/allowed", port)}); isErr ||
		!strings.Contains(text, "reached /allowed") || !strings.Contains(text, fmt.Sprintf("network: 127.0.0.1:%d allow (allowed by allowed_domains)", port)) {
		t.Errorf("web_fetch of an allowed domain: %v %q", isErr, text)
	}
	if isErr, text := toolText(t, cs, api.ToolWebFetch, map[string]any{"url": fmt.Sprintf("http://localhost:%d/unknown", port)}); !isErr ||
		!strings.Contains(text, fmt.Sprintf("Airlock refused the connection to localhost:%d: denied by the person", port)) {
		t.Errorf("web_fetch of an unknown domain, denied: %v %q", isErr, text)
	}
	if hits.Load() != 1 {
		t.Errorf("ESCAPE: the server saw %d requests, want 1 (the allowed one)", hits.Load())
	}
	sawDomain := false
	for len(asked) > 0 {
		if p := <-asked; p.Request.Tool == permission.ToolNetworkDomain && strings.Contains(string(p.Request.Params), `"localhost"`) {
			sawDomain = p.Tier == permission.P1
		}
	}
	if !sawDomain {
		t.Error("no P1 network_domain request for localhost")
	}
	// Each connection is a row of the audit, as a proxy connection is.
	var rows []permission.AuditRecord
	waitFor(t, func() bool {
		c.DB.Where("tool = ? AND asked_by = ?", permission.ToolNetworkDomain, "egress proxy").Find(&rows)
		return len(rows) >= 2
	})
	if len(rows) != 2 || rows[0].Session == "" || rows[0].Subject != fmt.Sprintf("127.0.0.1:%d", port) || rows[0].Verdict != permission.Allow ||
		rows[1].Subject != fmt.Sprintf("localhost:%d", port) || rows[1].Verdict != permission.Deny {
		t.Errorf("audit rows for web_fetch's connections: %+v", rows)
	}
}

// TestAllowlistScheduledRunThroughTheProxy: a real scheduled run under network_access =
// "allowlist" is connected to the core's egress proxy. curl inside the real sandbox,
// taking the proxy from the environment, reaches a test server the list allows (it is
// on this machine's loopback, so the test sets allow_local: the core's proxy resolves
// and dials for real, nothing can point a name elsewhere), a denied domain is refused
// without a question, an unknown one raises a P1 network_domain request in the broker
// and is refused after Deny, and a direct connection that bypasses the proxy gets
// nothing. Every connection is a line of the run's log and a row of the audit.
func TestAllowlistScheduledRunThroughTheProxy(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	base := allowlistBase(t, "allowed_domains = [\"127.0.0.1\"]\ndenied_domains = [\"denied.test\"]\nallow_local = true\n")
	port, hits := reachedServer(t)

	c, _ := runCoreAt(t, base)
	ctx := context.Background()
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(repo, 0o755)
	script := fmt.Sprintf(`echo "== allowed"; curl -sS --max-time 20 http://127.0.0.1:%[1]d/allowed
echo "== denied"; curl -sS --max-time 20 http://denied.test/
echo "== unknown"; curl -sS --max-time 60 http://unknown.test/
echo "== direct"; curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:%[1]d/direct; echo "rc=$?"
echo "== end"`, port)
	tk, err := c.Dispatch.CreateTask(ctx, dispatch.TaskSpec{Name: "proxy", Cwd: repo, Argv: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatal(err)
	}
	asked := answerNext(t, c, false)
	r, err := c.Dispatch.RunNow(ctx, tk.Name)
	if err != nil {
		t.Fatal(err)
	}
	var got dispatch.Run
	waitFor(t, func() bool {
		got, _ = c.Dispatch.Run(ctx, r.ID)
		return dispatch.Finished(got.Status)
	})
	b, _ := os.ReadFile(got.LogPath)
	log := string(b)
	t.Logf("run log:\n%s", log)
	if got.Status != dispatch.StatusSucceeded {
		t.Fatalf("run: %s (%s)", got.Status, got.Reason)
	}
	p, ok := <-asked
	if !ok || p.Request.Tool != permission.ToolNetworkDomain || !strings.Contains(string(p.Request.Params), `"unknown.test"`) || p.Tier != permission.P1 {
		t.Errorf("the unknown domain was not asked as a P1 network_domain request: %+v", p)
	}
	for _, want := range []string{
		"reached /allowed",
		fmt.Sprintf("airlock: network: 127.0.0.1:%d allow (allowed by allowed_domains)", port),
		"airlock: network: denied.test:80 deny (denied by denied_domains)",
		"airlock: network: unknown.test:80 deny (denied by the person)",
		"Airlock refused the connection to unknown.test:80",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the run's log lacks %q", want)
		}
	}
	if strings.Contains(log, "reached /direct") || strings.Contains(log, "rc=0\n== end") || hits.Load() != 1 {
		t.Errorf("ESCAPE: a direct connection bypassed the proxy (%d hits)", hits.Load())
	}
	var rows []permission.AuditRecord
	c.DB.Where("tool = ? AND asked_by = ?", permission.ToolNetworkDomain, "egress proxy").Find(&rows)
	if len(rows) != 3 {
		t.Errorf("audit rows for the connections: %d, want 3: %+v", len(rows), rows)
	}
}

// TestAllowlistDomainAllowedAlwaysIsRemembered: a person's "always" answer to a scheduled
// run's network_domain request lets that run through and is remembered: the next run
// reaches the same domain without a question.
func TestAllowlistDomainAllowedAlwaysIsRemembered(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	// localhost is in neither list; allow_local lets the test's own server be its destination.
	base := allowlistBase(t, "allow_local = true\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "reached %s\n", r.URL.Path) }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	c, _ := runCoreAt(t, base)
	ctx := context.Background()
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(repo, 0o755)
	tk, err := c.Dispatch.CreateTask(ctx, dispatch.TaskSpec{Name: "ask", Cwd: repo,
		Argv: []string{"curl", "-sS", "--max-time", "60", fmt.Sprintf("http://localhost:%d/asked", port)}})
	if err != nil {
		t.Fatal(err)
	}
	run := func() string {
		t.Helper()
		r, err := c.Dispatch.RunNow(ctx, tk.Name)
		if err != nil {
			t.Fatal(err)
		}
		var got dispatch.Run
		waitFor(t, func() bool {
			got, _ = c.Dispatch.Run(ctx, r.ID)
			return dispatch.Finished(got.Status)
		})
		b, _ := os.ReadFile(got.LogPath)
		if got.Status != dispatch.StatusSucceeded {
			t.Fatalf("run: %s (%s)\n%s", got.Status, got.Reason, b)
		}
		return string(b)
	}
	answered := make(chan permission.PendingRequest, 1)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if p := c.Broker.Pending(); len(p) > 0 {
				if _, err := c.Broker.Answer(ctx, p[0].ID, permission.Answer{Allow: true, Scope: permission.ScopeAlways, By: permission.ByWindow, Interactive: true}); err != nil {
					t.Errorf("answer: %v", err)
				}
				answered <- p[0]
				return
			}
		}
		close(answered)
	}()
	if log := run(); !strings.Contains(log, "reached /asked") || !strings.Contains(log, "allow (allowed by the person)") {
		t.Errorf("first run, allowed always:\n%s", log)
	}
	if p, ok := <-answered; !ok || p.Request.Tool != permission.ToolNetworkDomain {
		t.Fatalf("no network_domain request was asked: %+v", p)
	}
	if log := run(); !strings.Contains(log, "reached /asked") {
		t.Errorf("second run, remembered:\n%s", log)
	}
	if p := c.Broker.Pending(); len(p) > 0 {
		t.Errorf("asked again after an always answer: %+v", p)
	}
}

// TestAllowlistMCPBashThroughTheProxy: an MCP session's bash (the gateway as
// airlock-agent runs it, with its SessionEgress) under an allowlist reaches an allowed
// test server through the proxy with curl, an unknown domain raises a network_domain
// request in the real broker (over the local API) and is refused after Deny, and a
// direct connection gets nothing; the call's result lists every connection.
func TestAllowlistMCPBashThroughTheProxy(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	base := allowlistBase(t, "allowed_domains = [\"127.0.0.1\"]\nallow_local = true\n")
	port, hits := reachedServer(t)
	c, _ := runCoreAt(t, base)
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(repo, 0o755)
	r, err := policy.Resolve(c.policyInputs(repo, policy.Flags{}, false))
	if err != nil {
		t.Fatal(err)
	}
	client := localapi.NewClient(c.Paths.Socket)
	gw := gateway.NewServer(gateway.Options{Policy: r.Sandbox, Broker: gateway.APIBroker{Client: client}, Client: client,
		Egress: agentcmd.SessionEgress(r.Sandbox)})
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = gw.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	// The bash call itself is asked first (P1); then the unknown domain.
	asked := make(chan permission.PendingRequest, 4)
	go func() {
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, p := range c.Broker.Pending() {
				allow := p.Request.Tool != permission.ToolNetworkDomain
				if _, err := c.Broker.Answer(context.Background(), p.ID, permission.Answer{Allow: allow, By: permission.ByWindow, Interactive: true}); err == nil {
					asked <- p
					if !allow {
						return
					}
				}
			}
		}
	}()
	_, text := toolText(t, cs, api.ToolBash, map[string]any{"command": fmt.Sprintf(`curl -sS --max-time 20 http://127.0.0.1:%[1]d/allowed
curl -sS --max-time 60 http://unknown.test/
curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:%[1]d/direct; echo "direct rc=$?"`, port)})
	t.Logf("bash result:\n%s", text)
	for _, want := range []string{"reached /allowed", "Airlock refused the connection to unknown.test:80", "--- network (through Airlock's egress proxy) ---",
		fmt.Sprintf("network: 127.0.0.1:%d allow (allowed by allowed_domains)", port), "network: unknown.test:80 deny (denied by the person)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the result lacks %q", want)
		}
	}
	if strings.Contains(text, "reached /direct") || strings.Contains(text, "direct rc=0") || hits.Load() != 1 {
		t.Errorf("ESCAPE: a direct connection bypassed the proxy (%d hits)", hits.Load())
	}
	sawDomain := false
	for len(asked) > 0 {
		if p := <-asked; p.Request.Tool == permission.ToolNetworkDomain && strings.Contains(string(p.Request.Params), "unknown.test") {
			sawDomain = p.Tier == permission.P1
		}
	}
	if !sawDomain {
		t.Error("no P1 network_domain request for unknown.test")
	}
}

// allowlistBase (bubblewrap needed, else the test skips) is a /var/tmp directory (the sandbox gets a /tmp of its own) holding an
// Airlock home whose config.toml sets network_access = "allowlist" with network, the
// body of its [network] table.
func allowlistBase(t *testing.T, network string) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	base := varTmpBase(t, "airlock-allowlist-")
	cfg := filepath.Join(base, "airlock", "config", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	doc := "[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n[network]\n" + network
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return base
}

// reachedServer is a test HTTP server on loopback that answers "reached PATH" and counts
// its requests.
func reachedServer(t *testing.T) (port int, hits *atomic.Int32) {
	t.Helper()
	hits = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "reached %s\n", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port, hits
}

// TestAllowlistOpsApplyThroughTheProxy: the core's ops runner connects an apply that needs
// the network, under network_access = "allowlist", to the same egress proxy a scheduled
// run gets: curl in the real sandbox reaches the allowed API host (the test's server on
// loopback, so allow_local), a denied host is refused, and both connections are lines
// of the apply's output and rows of the audit.
func TestAllowlistOpsApplyThroughTheProxy(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	base := allowlistBase(t, "allowed_domains = [\"127.0.0.1\"]\ndenied_domains = [\"denied.test\"]\nallow_local = true\n")
	port, hits := reachedServer(t)
	c, _ := runCoreAt(t, base)
	work := filepath.Join(c.getenv("HOME"), "Airlock", "infra")
	os.MkdirAll(work, 0o755)
	res, err := c.opsRunner().Run(context.Background(), ops.RunSpec{Dir: work, Network: true, Purpose: "apply", PlanID: "op-net", Timeout: time.Minute,
		Command: ops.Command{Shell: fmt.Sprintf("curl -sS --max-time 20 http://127.0.0.1:%d/apply; curl -sS --max-time 20 http://denied.test/apply", port)}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout) + string(res.Stderr)
	for _, want := range []string{"reached /apply", fmt.Sprintf("airlock: network: 127.0.0.1:%d allow (allowed by allowed_domains)", port),
		"Airlock refused the connection to denied.test:80: denied by denied_domains", "airlock: network: denied.test:80 deny (denied by denied_domains)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the apply's output lacks %q:\n%s", want, out)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("the API server saw %d requests, want 1", hits.Load())
	}
	var rows []permission.AuditRecord
	waitFor(t, func() bool { // a connection's row is written when it closes
		c.DB.Where("tool = ? AND asked_by = ?", permission.ToolNetworkDomain, "egress proxy").Find(&rows)
		return len(rows) >= 2
	})
	if len(rows) != 2 {
		t.Errorf("audit rows for the apply's connections: %d, want 2: %+v", len(rows), rows)
	}
}
