package agentse2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/fakemodel"
	"github.com/airlock-app/airlock/internal/vartmp"
)

// keyMarker is in the planted private key's body: no tool result may show it.
const keyMarker = "b3BlbnNzaC1rZXktdjEAAAAAKEYMATERIALx7q"

// TestClaudeCodeBashRunsInAirlocksSandbox: the real Claude Code on the host, its
// PreToolUse hook `airlock hook claude` asking a real daemon, runs a script of Bash
// calls that read a private key planted in its $HOME/.ssh through a file operand the
// classifier does not see (wc/du --files0-from, date -f) or a /proc/self/cwd walk, and
// lists ~/.ssh, then Reads and Edits the key: under the default approval policy (the person allows each question
// once) and under `never`, none of them shows the key or its name, since the hook
// runs each command through `airlock exec`, where ~/.ssh is hidden by the OS; a benign
// command's output and exit status come back unchanged, a heredoc and quotes included.
func TestClaudeCodeBashRunsInAirlocksSandbox(t *testing.T) {
	claude := fakemodel.CLI(t, "claude")
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	bin := buildAirlock(t)
	for _, policy := range []string{"", "never"} {
		name := policy
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			home := vartmp.Dir(t, "airlock-hookbash-home-")
			repo := filepath.Join(home, "Airlock", "repo")
			for _, err := range []error{
				os.MkdirAll(filepath.Join(home, ".ssh"), 0o700),
				os.MkdirAll(repo, 0o755),
				os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"+keyMarker+"\n-----END OPENSSH PRIVATE KEY-----\n"), 0o600),
				os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("the secret word is heron\n"), 0o644),
			} {
				if err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"HOME=" + home, "AIRLOCK_HOME=" + filepath.Join(home, ".airlock"), "XDG_CONFIG_HOME=", "XDG_DATA_HOME=", "XDG_STATE_HOME=", "XDG_RUNTIME_DIR="}
			if policy != "" {
				if err := os.MkdirAll(filepath.Join(home, ".airlock", "config"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, ".airlock", "config", "config.toml"), []byte("approval_policy = \""+policy+"\"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			startDaemon(t, bin, env)
			stop := answerOnce(t, bin, env)
			defer stop()

			attacks := []string{
				"wc --files0-from=$HOME/.ssh/id_rsa",
				"du --files0-from=$HOME/.ssh/id_rsa",
				"date -f$HOME/.ssh/id_rsa",
				"cat /proc/self/cwd/../../.ssh/id_rsa", // repo → Airlock → $HOME
				"ls -a $HOME/.ssh",
			}
			benign := "cat notes.txt; printf '%s|%s\\n' \"it's\" \"$(echo sub)\"; cat <<'EOF'\n$HOME stays 'literal'\nEOF\nexit 3"
			var script []fakemodel.Turn
			for _, c := range append(attacks, benign) {
				script = append(script, fakemodel.Turn{Tool: "Bash", Input: map[string]any{"command": c, "description": "step"}})
			}
			// Claude Code's own file tools run in its process, outside any sandbox: the hook
			// refuses them over hidden paths (or asks the person, who refuses here). This
			// Claude Code offers no Grep or Glob of its own (it greps through Bash); the
			// hook's refusal of those is held by app/gateway's tests.
			key := filepath.Join(home, ".ssh", "id_rsa")
			files := []fakemodel.Turn{
				{Tool: "Read", Input: map[string]any{"file_path": key}},
				{Tool: "Edit", Input: map[string]any{"file_path": key, "old_string": keyMarker, "new_string": "x"}},
			}
			script = append(append(script, files...), fakemodel.Turn{Text: "all done"})
			fake := fakemodel.Start(t, script)

			settings := filepath.Join(home, "claude-settings.json")
			hook := bin + " hook claude --wait 40s --wait-unattended"
			s, _ := json.Marshal(map[string]any{"hooks": map[string]any{
				"PreToolUse": []any{map[string]any{"matcher": "Bash|Read|Write|Edit|Glob|Grep", "hooks": []any{map[string]any{"type": "command", "command": hook, "timeout": 60}}}},
			}})
			if err := os.WriteFile(settings, s, 0o644); err != nil {
				t.Fatal(err)
			}
			out := run(t, repo, append(env, "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"), "ANTHROPIC_BASE_URL="+fake.URL,
				"ANTHROPIC_API_KEY=sk-fake", "IS_SANDBOX=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"),
				claude, "-p", "do the task", "--settings", settings, "--output-format", "json", "--dangerously-skip-permissions")
			results := fake.LastResults()
			defer func() {
				if t.Failed() {
					t.Logf("claude said: %s", out)
				}
				for i, r := range results {
					t.Logf("result %d: %q", i, r)
				}
			}()
			if len(results) != len(attacks)+1+len(files) {
				t.Fatalf("the model received %d tool results, want %d", len(results), len(attacks)+1+len(files))
			}
			for i, f := range files {
				if r := results[len(attacks)+1+i]; strings.Contains(r, keyMarker) || strings.Contains(r, "PRIVATE KEY") {
					t.Errorf("ESCAPE: Claude Code's %s showed the private key: %q", f.Tool, r)
				}
			}
			for i, c := range attacks {
				if r := results[i]; strings.Contains(r, keyMarker) || strings.Contains(r, "PRIVATE KEY") || slices.Contains(strings.Split(r, "\n"), "id_rsa") {
					t.Errorf("ESCAPE: %s showed the private key or its name: %q", c, r)
				}
			}
			r := results[len(attacks)]
			for _, want := range []string{"the secret word is heron", "it's|sub", "$HOME stays 'literal'", "3"} {
				if !strings.Contains(r, want) {
					t.Errorf("the benign command's result lacks %q: %q", want, r)
				}
			}
			if _, err := os.Stat(filepath.Join(home, ".ssh", "id_rsa")); err != nil {
				t.Errorf("the key is gone: %v", err)
			}
		})
	}
}

// buildAirlock builds airlock, airlock-agent and airlockd side by side, as `make
// build` leaves them, and returns the path of airlock.
func buildAirlock(t *testing.T) string {
	t.Helper()
	dir := vartmp.Dir(t, "airlock-hookbash-bin-")
	for _, pkg := range []string{"airlock", "airlock-agent", "airlockd"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, pkg), "../../cmd/"+pkg)
		if pkg != "airlockd" {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", pkg, err, out)
		}
	}
	return filepath.Join(dir, "airlock")
}

// startDaemon starts `airlock daemon` with env and waits until it answers.
func startDaemon(t *testing.T, bin string, env []string) {
	t.Helper()
	d := exec.Command(bin, "daemon")
	d.Env = append(os.Environ(), env...)
	var logs bytes.Buffer
	d.Stdout, d.Stderr = &logs, &logs
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = d.Process.Kill()
		_ = d.Wait()
		if t.Failed() {
			t.Logf("daemon:\n%s", logs.String())
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st := exec.Command(bin, "status")
		st.Env = d.Env
		if st.Run() == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not answer in 30s:\n%s", logs.String())
		}
	}
}

// answerOnce is the person at a terminal: each P1 question is allowed once from the
// CLI, so that what stops a command is the sandbox, not a refusal; a P2 or
// interactive-only one (a credential read by a file tool) is denied. stop ends it.
func answerOnce(t *testing.T, bin string, env []string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		seen := map[string]bool{}
		for ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			c := exec.CommandContext(ctx, bin, "approvals", "list", "--json")
			c.Env = append(os.Environ(), env...)
			raw, err := c.Output()
			if err != nil {
				continue
			}
			var pending []api.PendingRequest
			if json.Unmarshal(raw, &pending) != nil {
				continue
			}
			for _, p := range pending {
				if seen[p.ID] {
					continue
				}
				seen[p.ID] = true
				a := exec.CommandContext(ctx, bin, "approvals", "allow", p.ID, "--once")
				if p.Tier != "P1" || p.InteractiveOnly {
					a = exec.CommandContext(ctx, bin, "approvals", "deny", p.ID, "--reason", "not my keys")
				}
				a.Env = c.Env
				if out, err := a.CombinedOutput(); err != nil && ctx.Err() == nil {
					t.Logf("allowing %s: %v %s", p.Summary, err, out)
				}
				t.Logf("%s: %s", a.Args[2], fmt.Sprint(p.Summary))
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}
