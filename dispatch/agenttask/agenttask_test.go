package agenttask

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec api.AgentSpec
		want string // "" for valid
		base string // the API base after defaults
	}{
		{"claude defaults", api.AgentSpec{Kind: "claude", Prompt: "fix it"}, "", "https://api.anthropic.com"},
		{"codex defaults", api.AgentSpec{Kind: "codex", Prompt: "fix it"}, "", "https://api.openai.com/v1"},
		{"unknown kind", api.AgentSpec{Kind: "gemini", Prompt: "x"}, "use claude, codex or opencode", ""},
		{"empty prompt", api.AgentSpec{Kind: "claude", Prompt: " \n"}, "--prompt-file", ""},
		{"not a URL", api.AgentSpec{Kind: "codex", Prompt: "x", APIBase: "api.openai.com"}, "not an http(s) URL", ""},
		{"user in URL", api.AgentSpec{Kind: "codex", Prompt: "x", APIBase: "https://me:pw@api.test"}, "no user name", ""},
		{"relative binary", api.AgentSpec{Kind: "claude", Prompt: "x", Binary: "bin/claude"}, "not an absolute path", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.spec
			err := Validate(&s)
			if tc.want == "" {
				if err != nil || s.APIBase != tc.base || s.APIKeySecret == "" {
					t.Fatalf("Validate = %v, spec %+v", err, s)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}

// fakeBin makes an executable named name in a new directory and returns the directory.
func fakeBin(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPreparePerKind(t *testing.T) {
	run := t.TempDir()
	for _, tc := range []struct {
		kind string
		// want are arguments the command line has, in order; env its variables.
		want  []string
		env   []string
		files []string
	}{
		{api.AgentClaude, []string{"-p", "--setting-sources", "", "--settings", filepath.Join(run, "claude-settings.json"), "--mcp-config", filepath.Join(run, "mcp.json"), "--strict-mcp-config", "--model", "m1", "--", "do it"},
			[]string{"CLAUDE_CONFIG_DIR", "ANTHROPIC_BASE_URL", "IS_SANDBOX", "HOME"}, []string{"claude-settings.json", "mcp.json"}},
		{api.AgentCodex, []string{"exec", "--skip-git-repo-check", "-m", "m1", `model_providers.airlock.base_url="http://127.0.0.1:9/v1"`, `approval_policy="never"`,
			`sandbox_mode="danger-full-access"`, "features.hooks=true",
			`hooks.PreToolUse=[{matcher = "^apply_patch$", hooks = [{type = "command", command = "/opt/airlock hook codex --wait 7200s", timeout = 7260}]}]`,
			"features.shell_tool=false", `features.view_image=false`, `web_search="disabled"`, `tools.experimental_request_user_input.enabled=false`, "features.plugins=false", "analytics.enabled=false", `mcp_servers.airlock.command="/opt/airlock"`, `mcp_servers.airlock.default_tools_approval_mode="approve"`, "--dangerously-bypass-hook-trust", "--", "do it"},
			[]string{"CODEX_HOME", "HOME"}, nil},
		{api.AgentOpencode, []string{"run", "--model", "openai/m1", "--", "do it"}, []string{"OPENCODE_CONFIG", "HOME", "XDG_CONFIG_HOME"}, []string{"opencode.json"}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			bin := fakeBin(t, tc.kind)
			p, err := Prepare(Input{Spec: api.AgentSpec{Kind: tc.kind, Prompt: "do it", Model: "m1", APIBase: "http://127.0.0.1:9/v1"},
				RunID: 7, Dir: run, Airlock: "/opt/airlock", PATH: "relative:" + bin, Wait: 2 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if p.Argv[0] != filepath.Join(bin, tc.kind) {
				t.Errorf("the agent is %s, not the one in PATH", p.Argv[0])
			}
			i := 0
			for _, a := range p.Argv {
				if i < len(tc.want) && a == tc.want[i] {
					i++
				}
			}
			if i != len(tc.want) {
				t.Errorf("the command line lacks %q (in order): %q", tc.want[i], p.Argv)
			}
			for _, k := range tc.env {
				if !strings.HasPrefix(p.Env[k], run) && k != "ANTHROPIC_BASE_URL" && k != "IS_SANDBOX" {
					t.Errorf("%s=%q is not in the run's directory", k, p.Env[k])
				}
			}
			for _, f := range tc.files {
				var v any
				if err := json.Unmarshal([]byte(p.Files[f]), &v); err != nil {
					t.Errorf("%s is not JSON: %v", f, err)
				}
				if !strings.Contains(p.Files[f], "/opt/airlock") {
					t.Errorf("%s does not run Airlock: %s", f, p.Files[f])
				}
			}
			if p.Host != "127.0.0.1:9" {
				t.Errorf("allowed host %q, want 127.0.0.1:9", p.Host)
			}
			for _, v := range p.Env {
				if strings.Contains(v, "sk-") {
					t.Errorf("a key in the plan's environment: %q", v)
				}
			}
		})
	}
}

// The hook may wait as long as the task's hold deadline, else Claude would give up on a
// question the person is still allowed to answer.
func TestClaudeHookWaitsForThePerson(t *testing.T) {
	bin := fakeBin(t, "claude")
	p, err := Prepare(Input{Spec: api.AgentSpec{Kind: "claude", Prompt: "x"}, Dir: t.TempDir(), Airlock: "/opt/air lock", PATH: bin, Wait: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct {
				Command string
				Timeout int
			}
		}
		Permissions struct{ DefaultMode string }
	}
	if err := json.Unmarshal([]byte(p.Files["claude-settings.json"]), &s); err != nil {
		t.Fatal(err)
	}
	pre := s.Hooks["PreToolUse"]
	if len(pre) != 1 || pre[0].Matcher != "*" || pre[0].Hooks[0].Timeout < int((24*time.Hour).Seconds()) ||
		pre[0].Hooks[0].Command != "'/opt/air lock' hook claude --wait 86400s" {
		t.Errorf("PreToolUse hook: %+v", pre)
	}
	for _, ev := range []string{"PostToolUse", "PostToolUseFailure"} { // what ran, or failed, reaches the audit
		if h := s.Hooks[ev]; len(h) != 1 || h[0].Matcher != "*" || !strings.Contains(h[0].Hooks[0].Command, " hook claude") {
			t.Errorf("%s hook: %+v", ev, h)
		}
	}
	if s.Permissions.DefaultMode != "bypassPermissions" {
		t.Errorf("Claude's own prompts are not off: %+v", s.Permissions)
	}
}

// What the real opencode 1.18 showed (TestAgentTaskOpencode): a tool set to false in
// "tools" left read, glob, grep, task... offered; a model its catalogue lacks must be
// declared; a workspace's opencode.json is merged over OPENCODE_CONFIG's; and its
// configuration directory without node_modules sends it to registry.npmjs.org.
func TestOpencodeOffersOnlyAirlocksTools(t *testing.T) {
	bin := fakeBin(t, "opencode")
	run := t.TempDir()
	p, err := Prepare(Input{Spec: api.AgentSpec{Kind: "opencode", Prompt: "x", Model: "gpt-fake", APIBase: "http://127.0.0.1:9/v1"},
		Dir: run, Airlock: "/opt/airlock", PATH: bin, Wait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Model      string
		SmallModel string `json:"small_model"`
		Permission map[string]string
		Provider   map[string]struct {
			Options struct{ BaseURL, APIKey string }
			Models  map[string]any
		}
		MCP map[string]struct {
			Type    string
			Command []string
			Timeout int
		}
	}
	if err := json.Unmarshal([]byte(p.Files["opencode.json"]), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Permission) != 2 || cfg.Permission["*"] != "deny" || cfg.Permission["airlock_*"] != "allow" {
		t.Errorf("opencode's own tools are not all denied, Airlock's allowed: %v", cfg.Permission)
	}
	// opencode takes the last rule that matches: "*" must come before "airlock_*".
	if text := p.Files["opencode.json"]; strings.Index(text, `"*"`) > strings.Index(text, `"airlock_*"`) {
		t.Errorf("the deny-all rule comes after Airlock's allow:\n%s", text)
	}
	if o := cfg.Provider["openai"]; o.Options.BaseURL != "http://127.0.0.1:9/v1" || o.Options.APIKey != "{env:OPENAI_API_KEY}" || o.Models["gpt-fake"] == nil {
		t.Errorf("the openai provider: %+v", o)
	}
	if cfg.Model != "openai/gpt-fake" || cfg.SmallModel != "openai/gpt-fake" {
		t.Errorf("model %q, small_model %q", cfg.Model, cfg.SmallModel)
	}
	if m := cfg.MCP["airlock"]; m.Type != "local" || !slices.Equal(m.Command, []string{"/opt/airlock", "mcp"}) || m.Timeout < 3600*1000 {
		t.Errorf("Airlock's MCP server: %+v", m)
	}
	for _, k := range []string{"OPENCODE_DISABLE_PROJECT_CONFIG", "OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_SHARE"} {
		if p.Env[k] != "1" {
			t.Errorf("%s=%q, want 1", k, p.Env[k])
		}
	}
	if p.Env["XDG_CONFIG_HOME"] != filepath.Join(run, "home", ".config") {
		t.Fatalf("XDG_CONFIG_HOME=%q", p.Env["XDG_CONFIG_HOME"])
	}
	if _, ok := p.Files["home/.config/opencode/node_modules/.keep"]; !ok || !strings.Contains(p.Files["home/.config/opencode/package-lock.json"], "@opencode-ai/plugin") {
		t.Errorf("opencode's configuration directory would send it to npm: %q", slices.Sorted(maps.Keys(p.Files)))
	}
}

func TestMissingAgentSaysHowToInstall(t *testing.T) {
	_, err := Prepare(Input{Spec: api.AgentSpec{Kind: "codex", Prompt: "x"}, Dir: t.TempDir(), Airlock: "/opt/airlock", PATH: t.TempDir()})
	if !errors.Is(err, ErrNoBinary) || !strings.Contains(err.Error(), "npm i -g @openai/codex") || !strings.Contains(err.Error(), "--agent-bin") {
		t.Fatalf("Prepare = %v", err)
	}
	_, err = Prepare(Input{Spec: api.AgentSpec{Kind: "claude", Prompt: "x", Binary: "/nonexistent/claude"}, Dir: t.TempDir(), Airlock: "/opt/airlock"})
	if !errors.Is(err, ErrNoBinary) || !strings.Contains(err.Error(), "@anthropic-ai/claude-code") {
		t.Fatalf("Prepare = %v", err)
	}
}

func TestWriteKeepsToTheRunDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run-1")
	bin := fakeBin(t, "claude")
	p, err := Prepare(Input{Spec: api.AgentSpec{Kind: "claude", Prompt: "x"}, Dir: dir, Airlock: "/opt/airlock", PATH: bin})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(dir); err != nil {
		t.Fatal(err)
	}
	var names []string
	filepath.WalkDir(filepath.Dir(dir), func(path string, d os.DirEntry, _ error) error {
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			names = append(names, rel)
		}
		return nil
	})
	slices.Sort(names)
	if !slices.Equal(names, []string{"claude-settings.json", "claude/.keep", "home/.keep", "mcp.json"}) {
		t.Errorf("files written: %q", names)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("the run directory is %v, want private", st.Mode().Perm())
	}
}

// A run directory left by an earlier run with the same id (whose agent could write in
// it) is made anew: a settings file planted as a link to the user's file is not
// written through.
func TestWriteDoesNotFollowWhatAnEarlierRunLeft(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "run-1")
	victim := filepath.Join(base, "bashrc")
	os.WriteFile(victim, []byte("the user's\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "claude"), 0o755)
	os.Symlink(victim, filepath.Join(dir, "claude-settings.json"))
	os.Symlink(base, filepath.Join(dir, "home"))
	bin := fakeBin(t, "claude")
	p, err := Prepare(Input{Spec: api.AgentSpec{Kind: "claude", Prompt: "x"}, Dir: dir, Airlock: "/opt/airlock", PATH: bin})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "the user's\n" {
		t.Errorf("the settings were written through the planted link: %q", b)
	}
	for _, name := range []string{"claude-settings.json", "home"} {
		if st, err := os.Lstat(filepath.Join(dir, name)); err != nil || st.Mode()&os.ModeSymlink != 0 {
			t.Errorf("%s is still the planted link (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(base, ".keep")); err == nil {
		t.Error("the agent's home was made through the planted link")
	}
}

// A quote or a backslash in the API base stays inside Codex's TOML string: it cannot
// end it and set another key.
func TestCodexOverrideQuoting(t *testing.T) {
	bin := fakeBin(t, "codex")
	p, err := Prepare(Input{Spec: api.AgentSpec{Kind: "codex", Prompt: "x", APIBase: `https://h.test/v1",sandbox_mode="read-only\`}, Dir: t.TempDir(), Airlock: "/opt/airlock", PATH: bin})
	if err != nil {
		t.Fatal(err)
	}
	want := `model_providers.airlock.base_url="https://h.test/v1\",sandbox_mode=\"read-only\\"`
	if !slices.Contains(p.Argv, want) {
		t.Errorf("the base URL's override is not quoted whole: %q", p.Argv)
	}
}
