package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/gateway"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/mcptest"
	"github.com/airlock-app/airlock/internal/vartmp"
	"github.com/airlock-app/airlock/permission"
)

// projectRepo makes a repository under the core's ~/Airlock whose .airlock/policy.toml
// holds policy, and returns its path.
func projectRepo(t *testing.T, c *Core, policy string) string {
	t.Helper()
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".airlock"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".airlock", "policy.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	return repo
}

// mcpSession serves Airlock's MCP tools for a workspace, asking the running core c over
// its socket, and returns a connected client (as `airlock mcp` does).
func mcpSession(t *testing.T, c *Core, ws string) *mcp.ClientSession {
	t.Helper()
	r, err := policy.Resolve(c.policyInputs(ws, policy.Flags{}, false))
	if err != nil {
		t.Fatal(err)
	}
	client := localapi.NewClient(c.Paths.Socket)
	srv := gateway.NewServer(gateway.Options{Policy: r.Sandbox, Broker: gateway.APIBroker{Client: client}, Client: client})
	return mcptest.Connect(t, srv)
}

func toolText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (bool, string) {
	t.Helper()
	res, text := mcptest.CallText(t, cs, name, args)
	return res.IsError, text
}

// answerNext answers the next pending request as the person in the window would, and
// returns it (with how many were pending at that moment).
func answerNext(t *testing.T, c *Core, allow bool) <-chan permission.PendingRequest {
	t.Helper()
	return answerNextWithin(t, c, allow, 30*time.Second)
}

// answerNextWithin is answerNext waiting up to limit for the request.
func answerNextWithin(t *testing.T, c *Core, allow bool, limit time.Duration) <-chan permission.PendingRequest {
	t.Helper()
	out := make(chan permission.PendingRequest, 1)
	go func() {
		deadline := time.Now().Add(limit)
		for time.Now().Before(deadline) {
			if p := c.Broker.Pending(); len(p) > 0 {
				if _, err := c.Broker.Answer(context.Background(), p[0].ID, permission.Answer{Allow: allow, By: permission.ByWindow, Interactive: true}); err != nil {
					t.Errorf("answer %s: %v", p[0].ID, err)
				}
				out <- p[0]
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(out)
	}()
	return out
}

// TestEscalationRunsTheCallWithExactlyWhatItAsked: through the MCP tools and the real
// broker, a person's "allow" of an isolation escalation runs that one call with the
// access it asked for — one path writable, or a credential readable by a file tool —
// and nothing else; the next call asks again. Under on-failure the person is asked once.
func TestEscalationRunsTheCallWithExactlyWhatItAsked(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	for _, approval := range []string{"on-request", "on-failure"} {
		t.Run(approval, func(t *testing.T) {
			// Not under /tmp: every sandbox gets a fresh /tmp, which would hide the state anyway.
			base := vartmp.Dir(t, "airlock-escalation-")
			c, _ := runCoreAt(t, base)
			home := c.getenv("HOME")
			ws := filepath.Join(home, "ws")
			outside := filepath.Join(home, "outside")
			other := filepath.Join(home, "other")
			for _, d := range []string{ws, outside, other, filepath.Join(home, ".ssh")} {
				os.MkdirAll(d, 0o755)
			}
			os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n"), 0o600)
			personWrites(t, c, "approval_policy = \""+approval+"\"\n")
			waitFor(t, func() bool { return string(c.Broker.Settings().ApprovalPolicy) == approval })
			cs := mcpSession(t, c, ws)

			// bash: writes outside the workspace ask, and the allow makes exactly that
			// directory writable for that one command.
			asked := answerNext(t, c, true)
			isErr, text := toolText(t, cs, api.ToolBash, map[string]any{"command": "echo hi > " + outside + "/x.txt"})
			p := <-asked
			if isErr {
				t.Fatalf("allowed escalation did not run: %s", text)
			}
			if p.Kind != permission.KindIsolationEscalation || !strings.Contains(strings.Join(p.Reasons, " "), outside+" writable") {
				t.Fatalf("the request does not say what allowing it gives: %+v", p)
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "x.txt")); string(b) != "hi\n" {
				t.Fatalf("the escalated command did not write: %s", text)
			}
			if len(c.Broker.Pending()) != 0 {
				t.Fatalf("asked twice for one command: %+v", c.Broker.Pending())
			}
			// Exactly that access: a second target in the same kind of call is its own question.
			asked = answerNext(t, c, false)
			isErr, _ = toolText(t, cs, api.ToolBash, map[string]any{"command": "echo hi > " + outside + "/y.txt"})
			if p := <-asked; p.ID == "" || !isErr {
				t.Fatalf("the grant was remembered: the next call did not ask (%+v)", p)
			}
			if _, err := os.Stat(filepath.Join(outside, "y.txt")); err == nil {
				t.Fatal("a denied escalation wrote")
			}

			// write_file: the same way out exists for the file tools.
			asked = answerNext(t, c, true)
			if isErr, text := toolText(t, cs, api.ToolWriteFile, map[string]any{"path": filepath.Join(other, "z.txt"), "content": "z"}); isErr {
				t.Fatalf("write_file with an allowed escalation: %s", text)
			}
			<-asked
			if b, _ := os.ReadFile(filepath.Join(other, "z.txt")); string(b) != "z" {
				t.Fatal("write_file's escalation did not write")
			}

			// read_file of a credential: P2, asked, and readable for that one call only.
			asked = answerNext(t, c, true)
			isErr, text = toolText(t, cs, api.ToolReadFile, map[string]any{"path": filepath.Join(home, ".ssh", "id_ed25519")})
			if p := <-asked; isErr || !strings.Contains(text, "fake") || p.Tier != permission.P2 {
				t.Fatalf("read_file with an allowed escalation: %v %s (%+v)", isErr, text, p)
			}

			// Airlock's own state stays hidden from the session's bash, even once allowed.
			asked = answerNext(t, c, true)
			isErr, text = toolText(t, cs, api.ToolBash, map[string]any{"command": "cat " + c.Paths.Database + " | head -c 16; ls -A " + c.Paths.DataDir + " " + filepath.Dir(c.Paths.ConfigFile)})
			stdout, _, _ := strings.Cut(strings.TrimPrefix(text[strings.Index(text, "--- stdout ---"):], "--- stdout ---"), "--- stderr ---")
			if _, err := os.Stat(c.Paths.Database); err != nil {
				t.Fatalf("the test has no database to hide: %v", err)
			}
			if strings.Contains(stdout, "SQLite format") || strings.Contains(stdout, "airlock.db") || strings.Contains(stdout, "config.toml") {
				t.Fatalf("the MCP bash tool read Airlock's state: %v %s", isErr, text)
			}
			<-asked
		})
	}
}

// createTask creates a task in c's dispatch, failing the test if it cannot.
func createTask(t testing.TB, c *Core, spec dispatch.TaskSpec) dispatch.Task {
	t.Helper()
	tk, err := c.Dispatch.CreateTask(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// runTask runs the task now, waits until the run has finished, and returns it with its log.
func runTask(t *testing.T, c *Core, name string) (dispatch.Run, string) {
	t.Helper()
	ctx := context.Background()
	r, err := c.Dispatch.RunNow(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var got dispatch.Run
	// Up to 3 minutes: a run in the micro-VM boots it first (under TCG on a loaded machine).
	waitUntil(t, "run "+name+" to finish", 3*time.Minute, func() bool { got, _ = c.Dispatch.Run(ctx, r.ID); return dispatch.Finished(got.Status) })
	b, _ := os.ReadFile(got.LogPath)
	return got, string(b)
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestScheduledRunKeepsTheProjectsTightening: a repository that asks for read-only with
// secret.txt protected is held to it by a scheduled run too. A write of the protected
// file is refused without a question (no escalation can allow it); another write asks,
// and the person's "allow once" makes exactly that path writable for that one run.
func TestScheduledRunKeepsTheProjectsTightening(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	base := vartmp.Dir(t, "airlock-project-run-")
	c, _ := runCoreAt(t, base)
	ctx := context.Background()
	repo := projectRepo(t, c, "sandbox_mode = \"read-only\"\n[isolation]\nprotected = [\"secret.txt\"]\n")
	os.WriteFile(filepath.Join(repo, "secret.txt"), []byte("original\n"), 0o644)

	wait := func(id uint) dispatch.Run {
		t.Helper()
		var r dispatch.Run
		waitFor(t, func() bool {
			r, _ = c.Dispatch.Run(ctx, id)
			return dispatch.Finished(r.Status)
		})
		return r
	}
	secret := createTask(t, c, dispatch.TaskSpec{Name: "overwrite", Cwd: repo, Argv: []string{"sh", "-c", "echo pwned > secret.txt"}})
	r, err := c.Dispatch.RunNow(ctx, secret.Name)
	if err != nil {
		t.Fatal(err)
	}
	got := wait(r.ID)
	if got.Status != dispatch.StatusDenied || !strings.Contains(got.Reason, "read-only (project "+filepath.Join(repo, ".airlock", "policy.toml")) {
		t.Fatalf("run over the protected file: %s (%s)", got.Status, got.Reason)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "secret.txt")); string(b) != "original\n" {
		t.Fatalf("secret.txt was overwritten: %q", b)
	}

	other := createTask(t, c, dispatch.TaskSpec{Name: "notes", Cwd: repo, Argv: []string{"sh", "-c", "echo n > notes.txt && echo pwned > secret.txt"}})
	// Both writes are denials; one of them no grant can lift: refused, nothing asked.
	r, _ = c.Dispatch.RunNow(ctx, other.Name)
	if got := wait(r.ID); got.Status != dispatch.StatusDenied {
		t.Fatalf("a run that also writes the protected file: %s (%s)", got.Status, got.Reason)
	}
	notes := createTask(t, c, dispatch.TaskSpec{Name: "notes-only", Cwd: repo, Argv: []string{"sh", "-c", "echo n > notes.txt"}})
	asked := answerNext(t, c, true)
	r, _ = c.Dispatch.RunNow(ctx, notes.Name)
	p := <-asked
	got = wait(r.ID)
	if got.Status != dispatch.StatusSucceeded || p.Kind != permission.KindIsolationEscalation {
		t.Fatalf("allowed once: %s (%s), asked %+v", got.Status, got.Reason, p)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "notes.txt")); string(b) != "n\n" {
		t.Fatalf("notes.txt: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "secret.txt")); string(b) != "original\n" {
		t.Fatalf("secret.txt was overwritten: %q", b)
	}
	// Once is once: the next run asks again.
	asked = answerNext(t, c, false)
	r, _ = c.Dispatch.RunNow(ctx, notes.Name)
	if p := <-asked; p.ID == "" {
		t.Fatal("the next run did not ask")
	}
	if got := wait(r.ID); got.Status != dispatch.StatusDenied {
		t.Fatalf("denied the second time: %s (%s)", got.Status, got.Reason)
	}
}

// TestProjectDenyRuleThroughTheRealSurfaces: a project's deny rule, through the real MCP
// server, the real Claude Code hook adapter and a real scheduled run, all asking the
// running core over its socket.
func TestProjectDenyRuleThroughTheRealSurfaces(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	base := vartmp.Dir(t, "airlock-project-deny-")
	c, _ := runCoreAt(t, base)
	ctx := context.Background()
	repo := projectRepo(t, c, "[[permission.rules]]\ntool = \"bash\"\npattern = \"cat *\"\naction = \"deny\"\n")
	os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("n\n"), 0o644)

	// MCP: the agent's bash is refused by the rule, without asking anyone.
	cs := mcpSession(t, c, repo)
	isErr, text := toolText(t, cs, api.ToolBash, map[string]any{"command": "cat notes.txt"})
	if !isErr || !strings.Contains(text, "cat *") || strings.Contains(text, "--- stdout ---") {
		t.Fatalf("MCP bash under the project's deny rule: %v %s", isErr, text)
	}
	// The hook: Claude Code's own Bash gets a deny with the rule as the reason.
	client := localapi.NewClient(c.Paths.Socket)
	hook := gateway.ClaudeHook{Broker: gateway.APIBroker{Client: client}, Wait: 5 * time.Second, MCPServer: "airlock"}
	in := `{"session_id":"s1","cwd":"` + repo + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cat notes.txt"},"tool_use_id":"t1"}`
	var out strings.Builder
	if err := hook.Run(ctx, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"permissionDecision":"deny"`) || !strings.Contains(out.String(), "cat *") {
		t.Fatalf("hook under the project's deny rule: %s", out.String())
	}
	// A scheduled run's own command is refused by the same rule.
	tk := createTask(t, c, dispatch.TaskSpec{Name: "reader", Cwd: repo, Argv: []string{"cat", "notes.txt"}})
	got, _ := runTask(t, c, tk.Name)
	if got.Status != dispatch.StatusDenied || !strings.Contains(got.Reason, "cat *") {
		t.Fatalf("scheduled run under the project's deny rule: %s (%s)", got.Status, got.Reason)
	}
	if len(c.Broker.Pending()) != 0 {
		t.Fatalf("a deny rule asked someone: %+v", c.Broker.Pending())
	}
}

// TestNoQuestionForWhatNoGrantLifts: a write into what every sandbox hides (Airlock's
// own config.toml and data directory, a credential directory) is refused at once with
// the reason, through the MCP tools and the real broker: nothing is asked, because
// allowing it could not run the call (before, the write was offered as a one-time
// escalation, and after the person allowed it the call failed "cannot be given … stays
// hidden"). A write outside the workspace that a grant does lift still asks.
func TestNoQuestionForWhatNoGrantLifts(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	base := vartmp.Dir(t, "airlock-deadend-")
	c, _ := runCoreAt(t, base)
	home := c.getenv("HOME")
	ws := filepath.Join(home, "ws")
	outside := filepath.Join(home, "outside")
	for _, d := range []string{ws, outside, filepath.Join(home, ".ssh")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(c.Paths.ConfigFile, []byte("approval_policy = \"on-request\"\n"), 0o644)
	waitFor(t, func() bool { return string(c.Broker.Settings().ApprovalPolicy) == "on-request" })
	cs := mcpSession(t, c, ws)
	config := c.Paths.ConfigFile
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"write_file config.toml", api.ToolWriteFile, map[string]any{"path": config, "content": "terminal_proof = \"tty\"\n"}},
		{"bash into config.toml", api.ToolBash, map[string]any{"command": "echo 'terminal_proof = \"tty\"' >> " + config}},
		{"write_file into the data directory", api.ToolWriteFile, map[string]any{"path": filepath.Join(c.Paths.DataDir, "secrets", "planted.json"), "content": "{}"}},
		{"bash into ~/.ssh", api.ToolBash, map[string]any{"command": "echo key >> " + filepath.Join(home, ".ssh", "authorized_keys")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := answerNextWithin(t, c, true, 10*time.Second) // a person who says yes, if asked
			isErr, text := toolText(t, cs, tc.tool, tc.args)
			if !isErr || !strings.Contains(text, "no escalation can give it") {
				t.Errorf("want the call refused at once with the reason, got error %v:\n%s", isErr, text)
			}
			if strings.Contains(text, "cannot be given") {
				t.Errorf("DEAD END: a question was offered that allowing could not satisfy:\n%s", text)
			}
			if p, ok := <-asked; ok {
				t.Errorf("DEAD END: the person was asked %q for what no grant can lift (%v)", p.ID, p.Reasons)
			}
		})
	}
	if b, _ := os.ReadFile(config); strings.Contains(string(b), "terminal_proof") {
		t.Fatalf("config.toml was written: %s", b)
	}
	if _, err := os.Stat(filepath.Join(home, ".ssh", "authorized_keys")); err == nil {
		t.Fatal("~/.ssh/authorized_keys was written")
	}
	// Control: what a grant lifts still asks, and the allow runs it.
	asked := answerNext(t, c, true)
	if isErr, text := toolText(t, cs, api.ToolWriteFile, map[string]any{"path": filepath.Join(outside, "ok.txt"), "content": "ok"}); isErr {
		t.Fatalf("an escalation a grant lifts: %s", text)
	}
	if p, ok := <-asked; !ok || p.Kind != permission.KindIsolationEscalation {
		t.Fatalf("a write outside the workspace was not asked as an escalation: %+v", p)
	}
}
