package agenttask

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// npmInstall lays out an npm install of pkg at version, its executable linked from
// node_modules/.bin as npm links it, and returns the link.
func npmInstall(t *testing.T, kind, pkg, version string) string {
	t.Helper()
	mods := filepath.Join(t.TempDir(), "node_modules")
	dir := filepath.Join(mods, filepath.FromSlash(pkg))
	for _, err := range []error{
		os.MkdirAll(filepath.Join(dir, "bin"), 0o755), os.MkdirAll(filepath.Join(mods, ".bin"), 0o755),
		os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name": "`+pkg+`", "version": "`+version+`"}`), 0o644),
		os.WriteFile(filepath.Join(dir, "bin", "cli.js"), []byte("#!/bin/sh\n"), 0o755),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	rel, _ := filepath.Rel(filepath.Join(mods, ".bin"), filepath.Join(dir, "bin", "cli.js"))
	link := filepath.Join(mods, ".bin", kinds[kind].bin)
	if err := os.Symlink(rel, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// TestPrepareRefusesUnknownVersions: an agent CLI newer than the one whose own tools
// Airlock knows is refused at the run's start, naming the version to install; the known
// ones and older ones start.
func TestPrepareRefusesUnknownVersions(t *testing.T) {
	for _, tc := range []struct {
		kind, pkg, version string
		refused            bool
	}{
		{api.AgentCodex, "@openai/codex", "0.171.0", false},
		{api.AgentCodex, "@openai/codex", "0.150.3", false},
		{api.AgentCodex, "@openai/codex", "0.172.0", true},
		{api.AgentCodex, "@openai/codex", "1.0.0", true},
		{api.AgentCodex, "@openai/codex", "latest", true},
		{api.AgentClaude, "@anthropic-ai/claude-code", "2.1.332", false},
		{api.AgentClaude, "@anthropic-ai/claude-code", "3.0.0", true},
		{api.AgentOpencode, "opencode-ai", "1.18.33", false},
		{api.AgentOpencode, "opencode-ai", "2.0.0", true},
		// Another package's version says nothing of the agent's.
		{api.AgentCodex, "codex-wrapper", "9.0.0", false},
	} {
		t.Run(tc.kind+"@"+tc.pkg+"@"+tc.version, func(t *testing.T) {
			bin := npmInstall(t, tc.kind, tc.pkg, tc.version)
			_, err := Prepare(Input{Spec: api.AgentSpec{Kind: tc.kind, Prompt: "x", Binary: bin}, Dir: t.TempDir(), Airlock: "/usr/bin/airlock"})
			if !tc.refused {
				if err != nil {
					t.Fatalf("Prepare = %v, want it to start", err)
				}
				return
			}
			if !errors.Is(err, ErrUnknownVersion) || !strings.Contains(err.Error(), "npm i -g "+known[tc.kind].pkg+"@") {
				t.Fatalf("Prepare = %v, want ErrUnknownVersion naming the version to install", err)
			}
		})
	}
}

// TestPrepareRefusesUnknownNativeClaude: Claude Code's native install
// (~/.local/bin/claude → …/claude/versions/VERSION) is held to the same versions.
func TestPrepareRefusesUnknownNativeClaude(t *testing.T) {
	for v, refused := range map[string]bool{"2.1.332": false, "3.0.1": true} {
		root := t.TempDir()
		real := filepath.Join(root, "share", "claude", "versions", v)
		link := filepath.Join(root, "bin", "claude")
		for _, err := range []error{os.MkdirAll(filepath.Dir(real), 0o755), os.MkdirAll(filepath.Dir(link), 0o755),
			os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755), os.Symlink(real, link)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		_, err := Prepare(Input{Spec: api.AgentSpec{Kind: api.AgentClaude, Prompt: "x", Binary: link}, Dir: t.TempDir(), Airlock: "/usr/bin/airlock"})
		if refused != errors.Is(err, ErrUnknownVersion) {
			t.Errorf("Claude Code %s: Prepare = %v, refused want %v", v, err, refused)
		}
	}
}

func TestGoverned(t *testing.T) {
	for _, tc := range []struct {
		kind, tool string
		want       bool
	}{
		{api.AgentClaude, "Bash", true},
		{api.AgentClaude, "Agent", true},
		{api.AgentClaude, "NotebookEdit", true},
		{api.AgentClaude, "WebFetch", true},
		{api.AgentCodex, "mcp__airlock__bash", true},
		{api.AgentCodex, "exec", true},
		{api.AgentCodex, "exec/apply_patch", true},
		{api.AgentCodex, "exec/mcp__airlock__read_file", true},
		{api.AgentCodex, "exec_command", false},
		{api.AgentCodex, "exec/exec_command", false},
		{api.AgentCodex, "apply_patch", true}, // a model with function tools: refused the same way
		{api.AgentCodex, "tool_search", true},
		{api.AgentCodex, "exec/tool_search", false},
		{api.AgentCodex, "view_image", false},
		{api.AgentCodex, "exec/view_image", false},
		{api.AgentCodex, "web_search", false},
		{api.AgentCodex, "mcp__repo__anything", false},
		{api.AgentCodex, "exec/mcp__airlockx__bash", false},
		{api.AgentOpencode, "airlock_bash", true},
		{api.AgentOpencode, "bash", false},
		{"gemini", "anything", false},
	} {
		if got := Governed(tc.kind, tc.tool); got != tc.want {
			t.Errorf("Governed(%s, %q) = %v, want %v", tc.kind, tc.tool, got, tc.want)
		}
	}
}

// TestPrepareRefusesOpencodePlugins: an opencode task whose workspace, or a directory
// above it, holds plugins opencode would load (.opencode/plugin, .opencode/plugins, an
// opencode.json naming plugins) is refused, naming the path and the way out; a workspace
// with an opencode.json of other settings, and other agents, start.
func TestPrepareRefusesOpencodePlugins(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string // under the parent of the workspace "ws"
		kind    string
		refused string // the path named, relative to the parent; "" when it starts
	}{
		{"plugin dir", map[string]string{"ws/.opencode/plugin/x.js": "x"}, api.AgentOpencode, "ws/.opencode/plugin"},
		{"plugins dir", map[string]string{"ws/.opencode/plugins/x.ts": "x"}, api.AgentOpencode, "ws/.opencode/plugins"},
		{"above the workspace", map[string]string{".opencode/plugin/x.js": "x", "ws/a.txt": ""}, api.AgentOpencode, ".opencode/plugin"},
		{"named in opencode.json", map[string]string{"ws/opencode.json": `{"plugin": ["./x.js"]}`}, api.AgentOpencode, "ws/opencode.json"},
		{"named in .opencode/opencode.jsonc", map[string]string{"ws/.opencode/opencode.jsonc": "// c\n{\"plugins\": []}"}, api.AgentOpencode, "ws/.opencode/opencode.jsonc"},
		{"above the git root", map[string]string{".opencode/plugin/x.js": "x", "ws/.git/HEAD": ""}, api.AgentOpencode, ""},
		{"other settings", map[string]string{"ws/opencode.json": `{"permission": {"*": "allow"}}`, "ws/.opencode/agent/build.md": "x"}, api.AgentOpencode, ""},
		{"claude ignores them", map[string]string{"ws/.opencode/plugin/x.js": "x"}, api.AgentClaude, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "ws"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range tc.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			bin := fakeBin(t, kinds[tc.kind].bin)
			_, err := Prepare(Input{Spec: api.AgentSpec{Kind: tc.kind, Prompt: "x"}, Dir: t.TempDir(), Workdir: filepath.Join(root, "ws"), Airlock: "/usr/bin/airlock", PATH: bin})
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("Prepare = %v, want it to start", err)
				}
				return
			}
			if !errors.Is(err, ErrRepoCode) || !strings.Contains(err.Error(), filepath.Join(root, tc.refused)+" ") || !strings.Contains(err.Error(), "--agent claude") {
				t.Fatalf("Prepare = %v, want ErrRepoCode naming %s and the way out", err, tc.refused)
			}
		})
	}
}
