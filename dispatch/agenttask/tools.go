package agenttask

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/airlock-app/airlock/api"
)

// ErrUnknownVersion is wrapped when the agent's version is one whose tools Airlock does
// not know: a newer CLI may offer its model a tool of its own that runs outside Airlock.
var ErrUnknownVersion = errors.New("agent version whose tools Airlock does not know")

// Governed reports whether tool, as the agent kind's CLI offers it to its model (under
// the settings Prepare writes), is one Airlock decides or one that can change nothing:
//
//   - Claude Code: every tool, its subagents' (Task/Agent) included, passes the hook
//     (PreToolUse matcher "*"), which asks Airlock before the call runs.
//   - Codex: Airlock's MCP tools; code mode's exec and wait, which only call the tools
//     listed here ("exec/NAME" is a tool exec offers), and tool_search, which only finds
//     them; apply_patch, refused by Codex's own read-only sandbox; MCP resources (only
//     Airlock's server is configured); the clock; messages to the (absent) user; and
//     subagents, which run with the same configuration.
//   - opencode: Airlock's MCP tools only (its own are denied, and denied tools are not
//     offered).
func Governed(kind, tool string) bool {
	switch kind {
	case api.AgentClaude:
		return tool != ""
	case api.AgentCodex:
		t := strings.TrimPrefix(tool, "exec/")
		if strings.HasPrefix(t, "mcp__airlock__") {
			return true
		}
		switch t {
		case "apply_patch", "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource":
			return true // inside exec (code mode) or beside it (a model with function tools)
		case "clock__curr_time":
			return t != tool
		}
		if t != tool {
			return false
		}
		switch tool {
		case "exec", "wait", "tool_search", "send_message_to_user_async", "request_user_input_async",
			"spawn_agent", "followup_task", "interrupt_agent", "list_agents", "send_message", "wait_agent":
			return true
		}
	case api.AgentOpencode:
		return strings.HasPrefix(tool, "airlock_")
	}
	return false
}

// known is, per agent kind, its npm package and the newest version whose tools Governed
// knows (major, minor); a version above it is refused. Below it the tools are the same
// or fewer. For 0.x (Codex) each minor may change them; else each major.
var known = map[string]struct {
	pkg          string
	major, minor int
}{
	api.AgentClaude:   {pkg: "@anthropic-ai/claude-code", major: 2},
	api.AgentCodex:    {pkg: "@openai/codex", major: 0, minor: 171},
	api.AgentOpencode: {pkg: "opencode-ai", major: 1},
}

// checkVersion refuses an agent executable whose version (read from the npm package it
// belongs to, or the native install's directory, found by its real path) is newer than the one whose tools Airlock knows.
// Claude Code's native install names its version in its path. An executable of neither
// kind is not refused here: its version cannot be read without running it.
func checkVersion(kind, bin string) error {
	k, ok := known[kind]
	if !ok {
		return nil
	}
	v, ok := packageVersion(bin, k.pkg)
	if !ok && kind == api.AgentClaude {
		v, ok = claudeNativeVersion(bin)
	}
	if !ok {
		return nil
	}
	major, minor, ok := majorMinor(v)
	if !ok {
		return fmt.Errorf("%w: %s %s (%s) has version %q, which Airlock cannot read: install a released version, e.g. `npm i -g %s@%s`",
			ErrUnknownVersion, Name(kind), bin, k.pkg, v, k.pkg, knownText(k.major, k.minor))
	}
	newer := major > k.major
	if k.major == 0 && major == 0 {
		newer = minor > k.minor
	}
	if newer {
		return fmt.Errorf("%w: %s %s is %s, newer than %s, the last whose own tools Airlock knows to be off or governed (a newer one may offer its model a tool that runs outside Airlock): install that version, `npm i -g %s@%s`, or wait for an Airlock that knows this one",
			ErrUnknownVersion, Name(kind), bin, v, knownText(k.major, k.minor), k.pkg, knownText(k.major, k.minor))
	}
	return nil
}

func knownText(major, minor int) string {
	if major == 0 {
		return "0." + strconv.Itoa(minor)
	}
	return strconv.Itoa(major)
}

// packageVersion is the version of the npm package pkg that bin (its real path) lies in.
func packageVersion(bin, pkg string) (string, bool) {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return "", false
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
			var p struct{ Name, Version string }
			if json.Unmarshal(b, &p) == nil && p.Name == pkg {
				return p.Version, true
			}
		}
		if parent := filepath.Dir(dir); parent == dir || filepath.Base(dir) == "node_modules" {
			return "", false
		}
	}
}

// claudeNativeVersion is the version of a Claude Code that its native installer put in
// place: ~/.local/bin/claude links to …/claude/versions/VERSION.
func claudeNativeVersion(bin string) (string, bool) {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil || filepath.Base(filepath.Dir(real)) != "versions" {
		return "", false
	}
	v := filepath.Base(real)
	_, _, ok := majorMinor(v)
	return v, ok
}

// majorMinor reads "MAJOR.MINOR[.…]".
func majorMinor(v string) (int, int, bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil && major >= 0 && minor >= 0
}

// ErrRepoCode is wrapped when the workspace holds code the agent would run in its own
// process on its own, asking nobody.
var ErrRepoCode = errors.New("the workspace holds code the agent would run unasked")

// checkOpencodeRepo refuses a workspace from which opencode would load plugins: opencode
// 1.18 loads .opencode/plugin/*.js and .opencode/plugins/*.js, and the plugins an
// opencode.json names, from the working directory and every directory above it up to the
// git work tree's root (or /), in spite
// of OPENCODE_DISABLE_PROJECT_CONFIG and OPENCODE_PURE. A plugin is code opencode runs in
// its own process: no tool call, no question. A configuration file that mentions plugins
// at all is refused too (its format is opencode's, and JSONC).
func checkOpencodeRepo(workdir string) error {
	if workdir == "" {
		return nil
	}
	for dir := filepath.Clean(workdir); ; dir = filepath.Dir(dir) {
		for _, d := range []string{".opencode/plugin", ".opencode/plugins"} {
			if _, err := os.Lstat(filepath.Join(dir, d)); err == nil {
				return repoCodeError(filepath.Join(dir, d))
			}
		}
		for _, f := range []string{"opencode.json", "opencode.jsonc", ".opencode/opencode.json", ".opencode/opencode.jsonc"} {
			if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil && strings.Contains(string(b), `"plugin`) {
				return repoCodeError(filepath.Join(dir, f))
			}
		}
		// opencode looks up to the project's root (its git work tree's), else to /.
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil || filepath.Dir(dir) == dir {
			return nil
		}
	}
}

func repoCodeError(path string) error {
	return fmt.Errorf("%w: opencode would load the plugins of %s and run them in its own process, with no question asked (it does so whatever its settings say): move them out of the workspace and its parent directories, or run this task with Claude Code or Codex (`airlock task edit NAME --agent claude`)",
		ErrRepoCode, path)
}
