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
	"slices"
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
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/vartmp"
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
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(repo, 0o755)

	// A scheduled run.
	probe := fmt.Sprintf("import socket\ntry:\n    socket.create_connection(('127.0.0.1', %d), timeout=2); print('connected')\nexcept Exception as e:\n    print('unreachable:', e)\n", port)
	tk := createTask(t, c, dispatch.TaskSpec{Name: "probe", Cwd: repo, Argv: []string{"python3", "-c", probe}})
	got, log := runTask(t, c, tk.Name)
	if got.Policy.Network != api.NetworkAllowlist || got.Status != dispatch.StatusSucceeded {
		t.Fatalf("run: %s (%s), policy %+v\n%s", got.Status, got.Reason, got.Policy, log)
	}
	if !strings.Contains(log, "network allowlist (only the allowed domains, through Airlock's egress proxy)") || !strings.Contains(log, "unreachable:") {
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
	c, repo, port, hits := allowlistCore(t, "allowed_domains = [\"127.0.0.1\"]\nallow_local = true\n")
	cs := mcpSession(t, c, repo)
	asked := make(chan permission.PendingRequest, 8)
	done := make(chan struct{})
	defer close(done)
	go func() {
		seen := map[string]bool{}
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			for _, p := range c.Broker.Pending() {
				if seen[p.ID] {
					continue
				}
				seen[p.ID] = true
				allow := p.Request.Tool != permission.ToolNetworkDomain
				// Recorded before the answer: the answer releases the tool call, and the
				// test reads what was asked as soon as the call returns.
				asked <- p
				_, _ = c.Broker.Answer(context.Background(), p.ID, permission.Answer{Allow: allow, By: permission.ByWindow, Interactive: true})
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
	c, repo, port, hits := allowlistCore(t, "allowed_domains = [\"127.0.0.1\"]\ndenied_domains = [\"denied.test\"]\nallow_local = true\n")
	script := fmt.Sprintf(`echo "== allowed"; curl -sS --max-time 20 http://127.0.0.1:%[1]d/allowed
echo "== denied"; curl -sS --max-time 20 http://denied.test/
echo "== unknown"; curl -sS --max-time 60 http://unknown.test/
echo "== direct"; curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:%[1]d/direct; echo "rc=$?"
echo "== end"`, port)
	tk := createTask(t, c, dispatch.TaskSpec{Name: "proxy", Cwd: repo, Argv: []string{"sh", "-c", script}})
	asked := answerNext(t, c, false)
	got, log := runTask(t, c, tk.Name)
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
	f := newDomainFixture(t, "")
	f.task(t, "ask", "")
	answered := f.answerDomain(t, permission.Answer{Allow: true, Scope: permission.ScopeAlways, By: permission.ByWindow, Interactive: true})
	if _, log := f.run(t, "ask", dispatch.StatusSucceeded); !strings.Contains(log, "reached /asked") || !strings.Contains(log, "allow (allowed by the person)") {
		t.Errorf("first run, allowed always:\n%s", log)
	}
	if p, ok := <-answered; !ok || p.Request.Tool != permission.ToolNetworkDomain {
		t.Fatalf("no network_domain request was asked: %+v", p)
	}
	if _, log := f.run(t, "ask", dispatch.StatusSucceeded); !strings.Contains(log, "reached /asked") {
		t.Errorf("second run, remembered:\n%s", log)
	}
	if p := f.c.Broker.Pending(); len(p) > 0 {
		t.Errorf("asked again after an always answer: %+v", p)
	}
}

// TestAllowlistDomainAllowedForThisTaskOrDepartment: a scheduled run's question about an
// unknown domain offers "for this task" (and "for this department" when the task has
// one). Allowed for the task, the task's next run goes through without a question and
// another task is asked; allowed for the department, every task of the department goes
// through and a task outside it is asked, and denied it fails cleanly, with the
// person's reason and the way out in its log.
func TestAllowlistDomainAllowedForThisTaskOrDepartment(t *testing.T) {
	f := newDomainFixture(t, "")
	ctx := context.Background()
	if _, err := f.c.Departments.Add(ctx, "research", f.repo, departments.Defaults{}); err != nil {
		t.Fatal(err)
	}
	for _, tk := range []struct{ name, dept string }{{"fetch", ""}, {"other", ""}, {"r1", "research"}, {"r2", "research"}} {
		f.task(t, tk.name, tk.dept)
	}
	// The window answers through the façade's core method, as its popup does.
	window := func(scope api.Scope) func(p permission.PendingRequest) error {
		return func(p permission.PendingRequest) error {
			_, err := f.c.AnswerApproval(WindowCaller(), p.ID, api.AnswerIn{Allow: true, Scope: scope})
			return err
		}
	}
	deny := func(p permission.PendingRequest) error {
		_, err := f.c.AnswerApproval(WindowCaller(), p.ID, api.AnswerIn{Allow: false, Reason: "not for this one"})
		return err
	}
	steps := []struct {
		task   string
		answer func(permission.PendingRequest) error // nil: nothing may be asked
		offers []api.Scope
		status string
	}{
		{"fetch", window(api.ScopeTask), []api.Scope{api.ScopeOnce, api.ScopeSession, api.ScopeTask, api.ScopeAlways}, dispatch.StatusSucceeded},
		{"fetch", nil, nil, dispatch.StatusSucceeded}, // remembered at the task's next run
		{"r1", window(api.ScopeDepartment), []api.Scope{api.ScopeOnce, api.ScopeSession, api.ScopeTask, api.ScopeDepartment}, dispatch.StatusSucceeded},
		{"r2", nil, nil, dispatch.StatusSucceeded}, // another task of the department
		{"other", deny, []api.Scope{api.ScopeOnce, api.ScopeSession, api.ScopeTask, api.ScopeAlways}, dispatch.StatusFailed},
	}
	for i, st := range steps {
		var asked <-chan permission.PendingRequest
		if st.answer != nil {
			asked = f.onDomainQuestion(t, st.answer)
		}
		r, log := f.run(t, st.task, st.status)
		if st.answer == nil {
			if !strings.Contains(log, "allowed without asking: remembered grant") || !strings.Contains(log, "reached /asked") {
				t.Errorf("step %d (%s): asked again, or not through:\n%s", i, st.task, log)
			}
			continue
		}
		p, ok := <-asked
		if !ok {
			t.Fatalf("step %d (%s): nothing was asked", i, st.task)
		}
		if !slices.Equal(p.Scopes, st.offers) || p.Request.Context.Task != st.task {
			t.Errorf("step %d (%s): offered %v for task %q, want %v", i, st.task, p.Scopes, p.Request.Context.Task, st.offers)
		}
		if st.status == dispatch.StatusFailed {
			t.Logf("the denied run's log:\n%s", log)
			for _, want := range []string{"denied by the person (window): not for this one", "Airlock refused the connection to localhost:", "answer Allow when Airlock asks"} {
				if !strings.Contains(log, want) {
					t.Errorf("the denied run #%d's log lacks %q:\n%s", r.ID, want, log)
				}
			}
		}
	}
	grants, _ := f.c.Broker.Grants().List(ctx, permission.GrantFilter{Tool: permission.ToolNetworkDomain})
	if len(grants) != 2 {
		t.Errorf("grants: %+v, want one for task fetch and one for department research", grants)
	}
	// A task removed takes its grants along: one made later under its name is asked.
	if _, err := f.c.RemoveTask(WindowCaller(), "fetch"); err != nil {
		t.Fatal(err)
	}
	if grants, _ := f.c.Broker.Grants().List(ctx, permission.GrantFilter{Tool: permission.ToolNetworkDomain}); len(grants) != 1 || grants[0].Scope != api.ScopeDepartment {
		t.Errorf("after removing task fetch, grants: %+v", grants)
	}
}

// TestAllowlistOneQuestionPerDomain: three concurrent connections of one run to the same
// unknown domain (python inside the sandbox sends all three requests to the proxy before
// reading any answer) raise one network_domain request; one answer lets all three through.
func TestAllowlistOneQuestionPerDomain(t *testing.T) {
	f := newDomainFixture(t, "")
	ctx := context.Background()
	script := `import os, socket, urllib.parse
proxy = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
url = urllib.parse.urlsplit("` + f.url + `")
conns = []
for i in range(3):
    c = socket.create_connection((proxy.hostname, proxy.port))
    c.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (url.geturl(), url.netloc)).encode())
    conns.append(c)
print("== sent", flush=True)
for c in conns:
    data = b""
    while True:
        chunk = c.recv(4096)
        if not chunk:
            break
        data += chunk
    print(data.decode().splitlines()[-1], flush=True)
`
	f.task(t, "three", "", "python3", "-c", script)
	r, err := f.c.Dispatch.RunNow(ctx, "three")
	if err != nil {
		t.Fatal(err)
	}
	// All three requests are at the proxy, and one question is open: answer what is asked.
	var qs []permission.PendingRequest
	waitFor(t, func() bool {
		run, _ := f.c.Dispatch.Run(ctx, r.ID)
		log, _ := os.ReadFile(run.LogPath)
		qs = f.domainQuestions()
		return strings.Contains(string(log), "== sent") && len(qs) > 0
	})
	time.Sleep(200 * time.Millisecond) // the other connections would ask meanwhile, if they asked
	qs = f.domainQuestions()
	if len(qs) != 1 {
		t.Errorf("%d network_domain requests for one domain, want 1", len(qs))
	}
	for _, p := range qs {
		if _, err := f.c.Broker.Answer(ctx, p.ID, permission.Answer{Allow: true, Scope: permission.ScopeOnce, By: permission.ByWindow, Interactive: true}); err != nil {
			t.Fatal(err)
		}
	}
	_, log := f.wait(t, r.ID, dispatch.StatusSucceeded)
	if got := strings.Count(log, "reached /asked"); got != 3 {
		t.Errorf("%d of 3 connections went through:\n%s", got, log)
	}
}

// TestAllowlistRunWaitingOnADomainGivesBackItsSlot: with a concurrency of 1, a scheduled
// run waiting for the answer about a domain shows as waiting for you and gives back its
// slot: another task's run starts and ends meanwhile; answered, the first run goes on.
func TestAllowlistRunWaitingOnADomainGivesBackItsSlot(t *testing.T) {
	f := newDomainFixture(t, "[dispatch]\nconcurrency = 1\n")
	ctx := context.Background()
	f.task(t, "asker", "")
	f.task(t, "quick", "", "echo", "quick ran")
	first, err := f.c.Dispatch.RunNow(ctx, "asker")
	if err != nil {
		t.Fatal(err)
	}
	var q permission.PendingRequest
	waitFor(t, func() bool {
		qs := f.domainQuestions()
		if len(qs) > 0 {
			q = qs[0]
		}
		return len(qs) > 0
	})
	var waiting api.RunPage
	waitFor(t, func() bool {
		waiting, _ = f.c.ListRuns(WindowCaller(), api.RunQuery{Waiting: true})
		return len(waiting.Runs) == 1
	})
	if w := waiting.Runs[0]; w.ID != first.ID || w.Status != dispatch.StatusRunning || w.WaitingFor != q.ID || !strings.Contains(w.Reason, "waiting for you") {
		t.Errorf("the waiting run as listed: #%d %s waiting for %q (%s); want #%d running, waiting for %s", w.ID, w.Status, w.WaitingFor, w.Reason, first.ID, q.ID)
	}
	// The slot is free: another run starts and ends while the first one waits.
	if _, log := f.run(t, "quick", dispatch.StatusSucceeded); !strings.Contains(log, "quick ran") {
		t.Errorf("quick's log:\n%s", log)
	}
	if _, err := f.c.Broker.Answer(ctx, q.ID, permission.Answer{Allow: true, Scope: permission.ScopeOnce, By: permission.ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	r, log := f.wait(t, first.ID, dispatch.StatusSucceeded)
	if !strings.Contains(log, "reached /asked") || r.WaitingFor != "" {
		t.Errorf("the answered run: waiting for %q\n%s", r.WaitingFor, log)
	}
}

// domainFixture is a core under network_access = "allowlist" whose lists name nothing
// (allow_local lets the test's own server on localhost be a destination, asked about).
type domainFixture struct {
	c    *Core
	repo string
	url  string // the test server's, by a name the lists do not hold
}

func newDomainFixture(t *testing.T, config string) *domainFixture {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	c, repo, port, _ := allowlistCore(t, "allow_local = true\n"+config)
	return &domainFixture{c: c, repo: repo, url: fmt.Sprintf("http://localhost:%d/asked", port)}
}

// task creates a task in the fixture's repository; its command is argv, or curl of the
// test server (failing on a refusal).
func (f *domainFixture) task(t *testing.T, name, dept string, argv ...string) {
	t.Helper()
	if len(argv) == 0 {
		argv = []string{"curl", "-sS", "--fail-with-body", "--max-time", "60", f.url}
	}
	if _, err := f.c.Dispatch.CreateTask(context.Background(), dispatch.TaskSpec{Name: name, Cwd: f.repo, Department: dept, Argv: argv}); err != nil {
		t.Fatal(err)
	}
}

// run runs a task now and waits for it to end with status; it returns the run and its log.
func (f *domainFixture) run(t *testing.T, task, status string) (dispatch.Run, string) {
	t.Helper()
	r, err := f.c.Dispatch.RunNow(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	return f.wait(t, r.ID, status)
}

// wait waits for run id to end with status.
func (f *domainFixture) wait(t *testing.T, id uint, status string) (dispatch.Run, string) {
	t.Helper()
	var got dispatch.Run
	waitFor(t, func() bool {
		got, _ = f.c.Dispatch.Run(context.Background(), id)
		return dispatch.Finished(got.Status)
	})
	b, _ := os.ReadFile(got.LogPath)
	if got.Status != status {
		t.Fatalf("run #%d of %s: %s (%s), want %s\n%s", got.ID, got.TaskName, got.Status, got.Reason, status, b)
	}
	return got, string(b)
}

// domainQuestions are the pending network_domain requests.
func (f *domainFixture) domainQuestions() []permission.PendingRequest {
	var out []permission.PendingRequest
	for _, p := range f.c.Broker.Pending() {
		if p.Request.Tool == permission.ToolNetworkDomain {
			out = append(out, p)
		}
	}
	return out
}

// onDomainQuestion answers the next network_domain request with answer and hands it
// over (the channel closes when none comes).
func (f *domainFixture) onDomainQuestion(t *testing.T, answer func(permission.PendingRequest) error) <-chan permission.PendingRequest {
	out := make(chan permission.PendingRequest, 1)
	go func() {
		defer close(out)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if qs := f.domainQuestions(); len(qs) > 0 {
				if err := answer(qs[0]); err != nil {
					t.Errorf("answer %s: %v", qs[0].ID, err)
				}
				out <- qs[0]
				return
			}
		}
	}()
	return out
}

// answerDomain answers the next network_domain request as a.
func (f *domainFixture) answerDomain(t *testing.T, a permission.Answer) <-chan permission.PendingRequest {
	return f.onDomainQuestion(t, func(p permission.PendingRequest) error {
		_, err := f.c.Broker.Answer(context.Background(), p.ID, a)
		return err
	})
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
	c, repo, port, hits := allowlistCore(t, "allowed_domains = [\"127.0.0.1\"]\nallow_local = true\n")
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
		seen := map[string]bool{}
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, p := range c.Broker.Pending() {
				if seen[p.ID] {
					continue
				}
				seen[p.ID] = true
				allow := p.Request.Tool != permission.ToolNetworkDomain
				// Recorded before the answer, which releases the call the test then checks.
				asked <- p
				if _, err := c.Broker.Answer(context.Background(), p.ID, permission.Answer{Allow: allow, By: permission.ByWindow, Interactive: true}); err == nil && !allow {
					return
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
	base := vartmp.Dir(t, "airlock-allowlist-")
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

// allowlistCore is a real core under network_access = "allowlist" with network as the
// body of its [network] table, a workspace directory for its tasks, and a test server on
// loopback (its port, and its count of requests).
func allowlistCore(t *testing.T, network string) (c *Core, repo string, port int, hits *atomic.Int32) {
	t.Helper()
	base := allowlistBase(t, network)
	port, hits = reachedServer(t)
	c, _ = runCoreAt(t, base)
	repo = filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	return c, repo, port, hits
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
