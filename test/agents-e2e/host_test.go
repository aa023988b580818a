// Package agentse2e proves the fake model APIs (internal/fakemodel) with the real Claude
// Code, Codex and opencode CLIs on the host, with no Airlock in between: what the end-to-end tests
// of agent tasks (app's TestAgentTask*) build on. `make agents-e2e` installs the CLIs from
// npm (package.json here, pinned by package-lock.json) and runs them.
package agentse2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/fakemodel"
)

// TestClaudeCodeTalksToTheFake: the real Claude Code, pointed at the fake by
// ANTHROPIC_BASE_URL, runs its script: the Read's result reaches the model, the Write
// lands, the final text is the answer, and the key is sent as Claude Code sends it.
func TestClaudeCodeTalksToTheFake(t *testing.T) {
	claude := fakemodel.CLI(t, "claude")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the secret word is heron\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.Start(t, []fakemodel.Turn{
		{Tool: "Read", Input: map[string]any{"file_path": filepath.Join(dir, "notes.txt")}},
		{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(dir, "out.txt"), "content": "written by the agent\n"}},
		{Text: "all done"},
	})
	home := t.TempDir()
	out := run(t, dir, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + home, "ANTHROPIC_BASE_URL=" + fake.URL, "ANTHROPIC_API_KEY=sk-fake",
		"IS_SANDBOX=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"},
		claude, "-p", "do the task", "--output-format", "json", "--dangerously-skip-permissions")
	if !strings.Contains(out, `"result":"all done"`) {
		t.Errorf("claude's answer is not the script's final text:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out.txt")); string(b) != "written by the agent\n" {
		t.Errorf("out.txt = %q", b)
	}
	checkFake(t, fake, 3, "X-Api-Key", "sk-fake")
}

// TestCodexTalksToTheFake: the real Codex, given a model provider pointed at the fake
// (the Responses API), runs its script: the output of its own shell tool reaches the
// model, and the final text is the answer.
func TestCodexTalksToTheFake(t *testing.T) {
	codex := fakemodel.CLI(t, "codex")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the secret word is heron\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.Start(t, []fakemodel.Turn{
		{Tool: "exec_command", Input: map[string]any{"cmd": "cat notes.txt"}},
		{Text: "all done"},
	})
	home := t.TempDir()
	out := run(t, dir, []string{"HOME=" + home, "CODEX_HOME=" + home, "FAKE_KEY=sk-fake"},
		codex, "exec", "--skip-git-repo-check", "-c", "model_provider=fake",
		"-c", `model_providers.fake={name="fake",base_url="`+fake.URL+`/v1",wire_api="responses",env_key="FAKE_KEY"}`,
		"-c", "model=gpt-fake", "-c", "approval_policy=never", "-s", "danger-full-access", "do the task")
	if !strings.Contains(out, "all done") {
		t.Errorf("codex's answer is not the script's final text:\n%s", out)
	}
	checkFake(t, fake, 2, "Authorization", "Bearer sk-fake")
}

// run runs the CLI in dir with env added and returns what it printed; it fails the test
// when the CLI fails.
func run(t *testing.T, dir string, env []string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(argv[0]), err, out.String())
	}
	return out.String()
}

// checkFake: the CLI took all turns of the script, sent the key in header, and the first
// tool's result (notes.txt) reached the model.
func checkFake(t *testing.T, fake *fakemodel.Server, turns int, header, key string) {
	t.Helper()
	if n := fake.Turns(); n != turns {
		t.Errorf("the CLI took %d of the script's %d turns", n, turns)
	}
	for _, r := range fake.ScriptRequests() {
		if got := r.Header.Get(header); got != key {
			t.Errorf("%s: %s = %q, want %q", r.Path, header, got, key)
		}
	}
	if res := fake.LastResults(); len(res) == 0 || !strings.Contains(res[0], "heron") {
		t.Errorf("the tool's result did not reach the model: %q", res)
	}
	if t.Failed() {
		for i, r := range fake.Requests() {
			t.Logf("request %d: %s turn %d tools %q results %q", i, r.Path, r.Turn, r.Tools, r.Results)
		}
	}
}

// TestOpencodeTalksToTheFake: the real opencode, given a config file (OPENCODE_CONFIG) whose
// openai provider points at the fake (the Responses API), runs its script: the Read's
// result reaches the model, and the final text is the answer.
func TestOpencodeTalksToTheFake(t *testing.T) {
	opencode := fakemodel.CLI(t, "opencode")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the secret word is heron\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.Start(t, []fakemodel.Turn{
		{Tool: "read", Input: map[string]any{"filePath": filepath.Join(dir, "notes.txt")}},
		{Text: "all done"},
	})
	home := t.TempDir()
	cfg := filepath.Join(home, "opencode.json")
	if err := os.WriteFile(cfg, []byte(`{"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
  "provider": {"openai": {"options": {"baseURL": "`+fake.URL+`/v1", "apiKey": "{env:FAKE_KEY}"}, "models": {"gpt-fake": {}}}},
  "model": "openai/gpt-fake", "permission": {"read": "allow", "external_directory": "allow"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// opencode works in $PWD, not in the directory it starts in.
	out := run(t, dir, []string{"PWD=" + dir, "HOME=" + home, "XDG_CONFIG_HOME=" + home + "/.config", "XDG_DATA_HOME=" + home + "/.local/share",
		"XDG_STATE_HOME=" + home + "/.local/state", "XDG_CACHE_HOME=" + home + "/.cache", "OPENCODE_CONFIG=" + cfg, "FAKE_KEY=sk-fake",
		"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1"},
		opencode, "run", "--", "do the task")
	if !strings.Contains(out, "all done") {
		t.Errorf("opencode's answer is not the script's final text:\n%s", out)
	}
	checkFake(t, fake, 2, "Authorization", "Bearer sk-fake")
	if t.Failed() {
		t.Log(out)
	}
}
