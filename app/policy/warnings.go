package policy

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/sandbox"
)

// Warnings are the red lines of a policy in a working directory, in words, one
// definition for the window, the task list and the command line: full-access with
// approval_policy never, and a working directory that is the home directory or /.
// what names what runs ("every run", "this command").
func Warnings(what string, mode sandbox.Mode, approval, cwd, home string) []string {
	out := []string{}
	if mode == sandbox.ModeFullAccess && approval == "never" {
		out = append(out, "Full access with approval never: "+what+" may change anything your user can, and nothing asks you first.")
	}
	switch {
	case home != "" && cwd != "" && filepath.Clean(cwd) == filepath.Clean(home):
		out = append(out, "Runs in your home directory: everything in it is within reach of the command.")
	case cwd == "/":
		out = append(out, "Runs in / — the whole file system is within reach of the command.")
	}
	return out
}

// ShellTierWarnings are the red lines of [permission.tiers] (config.toml's, as written)
// that set a shell tool to P0, sorted by tool.
func ShellTierWarnings(tiers map[string]string) []string {
	var tools []string
	for tool := range tiers {
		tools = append(tools, tool)
	}
	sort.Strings(tools)
	out := []string{}
	for _, tool := range tools {
		if w := ShellTierWarning(tool, tiers[tool]); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// ShellTierWarning is the red line of a shell tool at P0 ("" for any other tool or
// tier): every command it runs would run without asking.
func ShellTierWarning(tool, tier string) string {
	if !api.IsShellTool(tool) || !strings.EqualFold(tier, "P0") {
		return ""
	}
	return fmt.Sprintf("%s is P0: every shell command it runs runs without asking you (only the sandbox and the dangerous-command preflight still stand); "+
		"set it to P1 (asks once) or P2 (asks every time) in [permission.tiers]", tool)
}

// ClaudeBashWarning is the red line of [hooks] claude_bash_sandbox = false ("" when the
// sandbox is on): Claude Code's own Bash then runs on the host, unconfined.
func ClaudeBashWarning(h config.Hooks) string {
	if h.ClaudeBashSandbox == nil || *h.ClaudeBashSandbox {
		return ""
	}
	return "[hooks] claude_bash_sandbox = false: Claude Code's own Bash runs UNCONFINED on your machine, with your user's rights " +
		"(only the hook's question and the classifier stand before your credentials); remove the line to run each command through airlock exec"
}
