package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/vartmp"
)

// checkPolicy is the policy `airlock check` resolves in dir (its verdict aside).
func (in *instance) checkPolicy(dir string) map[string]any {
	in.t.Helper()
	c := in.cmd("check", "--json", "--", "true")
	c.Dir = dir
	out, _ := c.Output()
	var rep map[string]any
	if err := json.Unmarshal(out, &rep); err != nil {
		in.t.Fatalf("check printed %s", out)
	}
	return rep["policy"].(map[string]any)
}

// checkOverAPI asks the daemon how it would judge tool in dir (POST /v1/permission/check,
// as an agent adapter asks), returning the evaluation.
func (in *instance) checkOverAPI(tool, params, dir string) map[string]any {
	in.t.Helper()
	body := `{"tool":"` + tool + `","params":` + params + `,"context":{"cwd":"` + dir + `"}}`
	raw, err := exec.Command("curl", "-s", "--unix-socket", filepath.Join(in.home, "run", "airlock.sock"),
		"-X", "POST", "http://airlock/v1/permission/check", "-d", body).Output()
	if err != nil {
		in.t.Fatalf("permission check: %v", err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		in.t.Fatalf("permission check answered %s", raw)
	}
	return ev
}

// Each shipped profile and preset, chosen with `airlock profile use`, is what the
// running core and the CLI's own resolution then apply: config.toml keeps its comments,
// the sandbox mode is the profile's (and says it came from the profile), and the core's
// approval policy, reviewer and tool tiers are the profile's.
func TestEachProfileThroughTheCLI(t *testing.T) {
	in := newInstance(t)
	ws, err := os.MkdirTemp("/var/tmp", "airlock-profiles-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	const comment = "# my own note: keep me\n"
	// approve-for-me needs a reviewer command to hand the questions to. A profile that
	// loosens the answer path waits for the person: they confirm it with their password.
	password := in.pamProof("")
	in.writeConfig(comment + "[reviewer]\ncommand = [\"/bin/true\"] # the reviewer\n" + in.approvalsSection())
	in.startDaemon()
	cfg := filepath.Join(in.home, "config", "config.toml")

	type tiers map[string]string // tool → the core's base tier
	cases := []struct {
		name, mode, approval, reviewer string
		tiers                          tiers
	}{
		{"ask", "workspace-write", "on-request", "user", tiers{"bash": "P1"}},
		{"approve-for-me", "workspace-write", "on-request", "auto_review", tiers{"bash": "P1"}},
		{"read-only", "read-only", "on-request", "user", tiers{"bash": "P1"}},
		{"full-access", "full-access", "never", "user", tiers{"bash": "P1"}},
		{"personal", "workspace-write", "on-request", "user", tiers{"bash": "P1", "write_file": "P0", "read_file": "P0", "web_fetch": "P0"}},
		{"shared", "workspace-write", "on-request", "user", tiers{"bash": "P2", "web_fetch": "P1", "write_file": "P0", "read_file": "P0"}},
		{"beginner", "workspace-write", "on-request", "user", tiers{"bash": "P2", "read_file": "P1", "write_file": "P1"}},
		{"demo", "workspace-write", "on-request", "user", tiers{"bash": "P2", "read_file": "P2", "write_file": "P2", "list_dir": "P2"}},
	}
	params := map[string]string{"bash": `{"command":"ls"}`, "read_file": `{"path":"` + ws + `/a"}`,
		"write_file": `{"path":"` + ws + `/a","content":"x"}`, "web_fetch": `{"url":"https://example.com/"}`, "list_dir": `{"path":"` + ws + `"}`}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := in.run("profile", "use", c.name)
			if code != 0 {
				t.Fatalf("profile use %s: exit %d: %s", c.name, code, stderr)
			}
			if !strings.Contains(out, c.name) {
				t.Errorf("profile use printed %q", out)
			}
			data, _ := os.ReadFile(cfg)
			if !strings.Contains(string(data), comment) || !strings.Contains(string(data), `profile = "`+c.name+`"`) || !strings.Contains(string(data), "# the reviewer") {
				t.Fatalf("config.toml after profile use:\n%s", data)
			}
			if c.name == "full-access" && !strings.Contains(stderr, "nothing confines the agent and nothing asks you") {
				t.Errorf("choosing full access with approval never did not say what it gives up: %q", stderr)
			}
			if strings.Contains(stderr, "airlock config confirm") {
				in.confirmWaiting(password)
			} else if c.name == "full-access" || c.name == "approve-for-me" {
				t.Errorf("profile %s loosens the answer path, but nothing said it waits: %q", c.name, stderr)
			}

			// The CLI's own resolution of the sandbox part.
			pol := in.checkPolicy(ws)
			if pol["mode"] != c.mode {
				t.Errorf("check's policy mode = %v, want %s", pol["mode"], c.mode)
			}
			if src := pol["sources"].(map[string]any)["sandbox_mode"].(map[string]any); c.mode != "workspace-write" || c.name == "ask" || c.name == "approve-for-me" {
				if src["layer"] != "profile" || !strings.Contains(src["detail"].(string), c.name) {
					t.Errorf("sandbox_mode's source = %v, want the profile %s", src, c.name)
				}
			}

			// The core reloads config.toml on its own; wait until it applies the profile.
			applied := func() []string {
				var wrong []string
				ev := in.checkOverAPI("bash", params["bash"], ws)
				if ev["approval_policy"] != c.approval || ev["reviewer"] != c.reviewer {
					wrong = append(wrong, fmt.Sprintf("approval policy %v, reviewer %v", ev["approval_policy"], ev["reviewer"]))
				}
				for tool, want := range c.tiers {
					if got := in.checkOverAPI(tool, params[tool], ws)["base_tier"]; got != want {
						wrong = append(wrong, fmt.Sprintf("%s at %v, want %s", tool, got, want))
					}
				}
				return wrong
			}
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				wrong := applied()
				if len(wrong) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the core never applied profile %s: %v", c.name, wrong)
				}
			}
		})
	}

	// A key written in config.toml overrides the profile chosen there.
	in.writeConfig(comment + "profile = \"read-only\"\nsandbox_mode = \"workspace-write\"\n")
	if pol := in.checkPolicy(ws); pol["mode"] != "workspace-write" {
		t.Errorf("sandbox_mode written beside profile read-only: mode %v", pol["mode"])
	}
	// An unknown profile is refused with the known names, at use and in the file.
	if _, stderr, code := in.run("profile", "use", "nope"); code == 0 || !strings.Contains(stderr, "ask, approve-for-me, read-only, full-access, personal, shared, beginner, demo") {
		t.Errorf("profile use nope: exit %d, %q", code, stderr)
	}
	in.writeConfig("profile = \"nope\"\n")
	out, _, _ := in.run("config", "show")
	if !strings.Contains(out, "line 1, column 11") || !strings.Contains(out, `profile = "nope" is not a profile`) {
		t.Errorf("config show of an unknown profile does not name it with its place:\n%s", out)
	}
}

// --profile and AIRLOCK_PROFILE choose the profile of one command, under real
// bubblewrap: read-only keeps the working directory unwritten, ask writes it; the flag
// wins over the variable, and a flag written beside it wins over both.
func TestCommandProfileConfinesExec(t *testing.T) {
	in := newInstance(t)
	ws, err := os.MkdirTemp("/var/tmp", "airlock-profile-exec-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	target := filepath.Join(ws, "written")
	write := []string{"exec", "--cwd", ws}
	tail := []string{"--", "sh", "-c", "echo x > " + target}

	if _, stderr, code := in.run(append(append(write, "--profile", "read-only"), tail...)...); code == 0 {
		t.Fatalf("exec --profile read-only wrote: %s", stderr)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the read-only profile let the command write its working directory")
	}
	in.env = append(in.env, "AIRLOCK_PROFILE=read-only")
	if _, _, code := in.run(append(write, tail...)...); code == 0 {
		t.Fatal("AIRLOCK_PROFILE=read-only let the command write")
	}
	if _, stderr, code := in.run(append(append(write, "--profile", "ask"), tail...)...); code != 0 {
		t.Fatalf("--profile ask over AIRLOCK_PROFILE=read-only: exit %d: %s", code, stderr)
	}
	os.Remove(target)
	if _, stderr, code := in.run(append(append(write, "--sandbox", "workspace-write"), tail...)...); code != 0 {
		t.Fatalf("--sandbox workspace-write over AIRLOCK_PROFILE=read-only: exit %d: %s", code, stderr)
	}
	if _, stderr, code := in.run(append(append(write, "--profile", "bogus"), tail...)...); code != 125 || !strings.Contains(stderr, `unknown profile "bogus"`) || !strings.Contains(stderr, "airlock profile list") {
		t.Fatalf("--profile bogus: exit %d: %s", code, stderr)
	}
}

// A department's profile and a task's profile are layers of a scheduled run's policy:
// the task's over the department's, each beneath the keys given beside it; the run
// itself is confined by it under real bubblewrap. Codex's --ask-for-approval sets the
// approval policy, and an unknown profile is refused with the known names.
func TestDepartmentAndTaskProfiles(t *testing.T) {
	in := newInstance(t)
	root, err := os.MkdirTemp("/var/tmp", "airlock-dept-profile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	dir := filepath.Join(root, "docs")
	os.Mkdir(dir, 0o755)
	// Inside a workspace root, so the department's directory is a known place already.
	in.writeConfig("[workspace]\nroots = [\"" + root + "\"]\n")
	in.startDaemon()
	if _, stderr, code := in.run("dept", "add", "docs", dir, "--profile", "read-only"); code != 0 {
		t.Fatalf("dept add --profile read-only: %s", stderr)
	}
	if _, stderr, code := in.run("dept", "add", "other", dir, "--profile", "nope"); code == 0 || !strings.Contains(stderr, `unknown profile "nope"`) || !strings.Contains(stderr, "read-only, full-access") {
		t.Fatalf("dept add --profile nope: exit %d: %s", code, stderr)
	}
	target := filepath.Join(dir, "written")
	if _, stderr, code := in.run("task", "add", "--name", "w", "--cwd", dir, "--dept", "docs", "--ask-for-approval", "untrusted", "--", "sh", "-c", "echo x > "+target); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	effective := func() map[string]any {
		out, _, _ := in.run("task", "list", "--json")
		var rows []map[string]any
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("task list: %s", out)
		}
		return rows[0]["effective"].(map[string]any)
	}
	if eff := effective(); eff["sandbox_mode"] != "read-only" || eff["profile"] != "read-only" || eff["approval_policy"] != "untrusted" {
		t.Fatalf("effective policy of a task in a read-only department, --ask-for-approval untrusted: %v", eff)
	}
	// On-request, so the run (whose command creating the task approved) asks nothing.
	if _, stderr, code := in.run("task", "edit", "w", "--ask-for-approval", "on-request"); code != 0 {
		t.Fatalf("task edit --ask-for-approval on-request: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", "w"); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _, _ := in.run("runs", "list", "--json", "--task", "w")
		var runs []map[string]any
		json.Unmarshal([]byte(out), &runs)
		if len(runs) > 0 && runs[0]["status"] == "waiting_approval" {
			// The sandbox refuses the write up front and asks to re-run with more access:
			// the person says no.
			for _, p := range in.waitPending(1) {
				in.run("approvals", "deny", fmt.Sprint(p["id"]))
			}
		}
		if len(runs) > 0 && (runs[0]["status"] == "failed" || runs[0]["status"] == "denied") {
			if reason := fmt.Sprint(runs[0]["reason"]); !strings.Contains(reason, "sandbox_mode is read-only") {
				t.Fatalf("the run ended %s: %s", runs[0]["status"], reason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run under read-only never failed: %s", out)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("a run under its department's read-only profile wrote its directory")
	}
	// The full-access profile widens access as sandbox_mode full-access does: a person's act.
	if _, stderr, code := in.run("task", "add", "--name", "wide", "--cwd", dir, "--profile", "full-access", "--", "true"); code == 0 || !strings.Contains(stderr, "needs a person") {
		t.Fatalf("task add --profile full-access with nobody at a terminal: exit %d: %s", code, stderr)
	}
	// The task's own profile over the department's.
	if _, stderr, code := in.run("task", "edit", "w", "--profile", "ask"); code != 0 {
		t.Fatalf("task edit --profile ask: %s", stderr)
	}
	if eff := effective(); eff["sandbox_mode"] != "workspace-write" || eff["profile"] != "ask" {
		t.Fatalf("effective policy with the task's profile ask over the department's read-only: %v", eff)
	}
}

// A task's preset reaches the broker for its runs, but only to tighten (a request names
// its run itself, which proves nothing): under demo every command asks every time, so
// the run's own command waits for the person at P2; under personal, which would lower
// tiers, the run goes as the configuration says.
func TestTaskPresetTightensItsRuns(t *testing.T) {
	in := newInstance(t)
	root, err := os.MkdirTemp("/var/tmp", "airlock-task-preset-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	in.writeConfig("[workspace]\nroots = [\"" + root + "\"]\n")
	in.startDaemon()
	for _, name := range []string{"demo", "personal"} {
		if _, stderr, code := in.run("task", "add", "--name", name, "--cwd", root, "--profile", name, "--", "true"); code != 0 {
			t.Fatalf("task add --profile %s: %s", name, stderr)
		}
	}
	status := func(task string) (string, string) {
		out, _, _ := in.run("runs", "list", "--json", "--task", task)
		var runs []map[string]any
		json.Unmarshal([]byte(out), &runs)
		if len(runs) == 0 {
			return "", out
		}
		return fmt.Sprint(runs[0]["status"]), out
	}
	in.run("task", "run-now", "personal")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if st, out := status("personal"); st == "succeeded" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the run under personal never succeeded: %s", out)
		}
	}
	in.run("task", "run-now", "demo")
	pending := in.waitPending(1)
	if pending[0]["tier"] != "P2" {
		t.Fatalf("the run under demo asked at %v: %v", pending[0]["tier"], pending[0])
	}
	if st, out := status("demo"); st != "waiting_approval" {
		t.Fatalf("the run under demo is %s: %s", st, out)
	}
}

// TestMCPSessionProfileTightens: `airlock mcp --profile beginner` (or AIRLOCK_PROFILE)
// makes the session's reads ask, as the preset says, where the core's own settings let
// them run silently; a session's profile that would loosen (personal: bash P1) changes
// nothing, since any caller may name one.
func TestMCPSessionProfileTightens(t *testing.T) {
	in, ws := profileTightenInstance(t, "airlock-mcp-profile-")
	in.bin = withAgent // airlock mcp is airlock-agent's
	read := map[string]any{"path": filepath.Join(ws, "notes.txt")}

	plain := in.mcpSession("--cwd", ws)
	if out := mcpCall(plain, "read_file", read); !strings.Contains(out, "heron") {
		t.Fatalf("a plain session's read: %s", out)
	}
	for _, how := range []struct {
		name string
		args []string
		env  string
	}{{"flag", []string{"--profile", "beginner"}, ""}, {"environment", nil, "AIRLOCK_PROFILE=beginner"}} {
		t.Run(how.name, func(t *testing.T) {
			in.env = nil
			if how.env != "" {
				in.env = []string{how.env}
			}
			cs := in.mcpSession(append([]string{"--cwd", ws}, how.args...)...)
			done := make(chan string, 1)
			go func() { done <- mcpCall(cs, "read_file", read) }()
			p := in.waitPending(1)[0]
			if p["tier"] != "P1" {
				t.Errorf("the beginner session's read asks at %v, want P1", p["tier"])
			}
			if _, stderr, code := in.run("approvals", "deny", p["id"].(string), "--reason", "beginner"); code != 0 {
				t.Fatalf("deny: %s", stderr)
			}
			if out := <-done; strings.Contains(out, "heron") {
				t.Errorf("the denied read ran: %s", out)
			}
		})
	}
	in.env = nil
	loose := in.mcpSession("--cwd", ws, "--profile", "personal")
	done := make(chan string, 1)
	go func() { done <- mcpCall(loose, "bash", map[string]any{"command": "echo hi"}) }()
	if p := in.waitPending(1)[0]; p["tier"] != "P2" {
		t.Errorf("ESCAPE: a session's profile lowered bash from P2 to %v", p["tier"])
	} else {
		in.run("approvals", "deny", p["id"].(string))
	}
	<-done
}

// TestHookProfileTightens: `airlock hook claude --profile beginner` (or AIRLOCK_PROFILE
// in Claude Code's environment) makes a Read ask, as the preset says, where the core's
// own settings let it run; a profile that would loosen (personal: bash P1 under the
// core's P2) changes nothing, and an unknown one is never an allow.
func TestHookProfileTightens(t *testing.T) {
	in, ws := profileTightenInstance(t, "airlock-hook-profile-")
	read := `{"file_path":"` + filepath.Join(ws, "notes.txt") + `"}`
	if d, r := in.hookDecision("5s", ws, "Read", read); d != "allow" {
		t.Fatalf("a plain hook's Read: %s %q", d, r)
	}
	for i, how := range []struct{ name, flag, env string }{{"flag", "beginner", ""}, {"environment", "", "AIRLOCK_PROFILE=beginner"}} {
		t.Run(how.name, func(t *testing.T) {
			in.env = nil
			if how.env != "" {
				in.env = []string{how.env}
			}
			d, r := in.hookDecisionWith("5s", ws, "Read", read, how.flag)
			if d == "allow" {
				t.Fatalf("the beginner hook's Read was allowed: %q", r)
			}
			if n := in.auditTiers("read_file")["P1"]; n != i+1 {
				t.Errorf("the beginner hook's Read was not asked at P1 (%d P1 rows): %v", n, in.auditTiers("read_file"))
			}
		})
	}
	in.env = nil
	if d, r := in.hookDecisionWith("5s", ws, "Bash", `{"command":"echo hi"}`, "personal"); d == "allow" {
		t.Errorf("ESCAPE: a hook's profile lowered bash from P2: %s %q", d, r)
	}
	if d, r := in.hookDecisionWith("5s", ws, "Read", read, "no-such-profile"); d == "allow" || !strings.Contains(r, "no-such-profile") {
		t.Errorf("an unknown profile: %s %q", d, r)
	}
}

// auditTiers counts `airlock audit --json`'s rows of tool by tier.
func (in *instance) auditTiers(tool string) map[string]int {
	in.t.Helper()
	n := map[string]int{}
	for _, r := range in.auditRows() {
		if r["tool"] == tool {
			n[r["tier"].(string)]++
		}
	}
	return n
}

// profileTightenInstance is a running instance whose workspace root ws (fresh, under
// /var/tmp, holding notes.txt) runs reads silently and asks for bash every time (P2).
func profileTightenInstance(t *testing.T, prefix string) (*instance, string) {
	t.Helper()
	in := newInstance(t)
	ws := vartmp.Dir(t, prefix)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("heron\n"), 0o644)
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), fmt.Sprintf("[workspace]\nroots = [%q]\n[permission.tiers]\nbash = \"P2\"\n", ws))
	in.startDaemon()
	return in, ws
}
