package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

// The agent commands live in airlock-agent (cmd/airlock-agent, package agentcmd): the
// MCP SDK they link costs every process a few milliseconds of start-up, and `airlock
// exec` must start in about one. `airlock mcp` and `airlock hook` become it.

func newMCPCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:                "mcp [--cwd DIR] [--department NAME] [--posture P] [--http 127.0.0.1:PORT] | mcp token",
		Short:              "Serve Airlock's governed tools to an agent over MCP (stdio, or streamable HTTP on loopback)",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return execBeside("airlock-agent", append([]string{"mcp"}, args...), "build it with `make build`")
		},
	}
}

func newHookCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:                "hook claude|codex",
		Short:              "Answer a coding agent's tool-use hooks from Airlock's broker",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := execBeside("airlock-agent", append([]string{"hook"}, args...), "build it with `make build`")
			// Never leave an agent's hook without an answer: when the adapter cannot run,
			// the answer is ask, never allow — deny for Codex, which takes no ask and runs
			// a call whose hook answered something it does not read.
			decision := "ask"
			if len(args) > 0 && args[0] == "codex" {
				decision = "deny"
			}
			out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
				"hookEventName": "PreToolUse", "permissionDecision": decision,
				"permissionDecisionReason": fmt.Sprintf("Airlock could not answer: %v", err),
			}})
			fmt.Fprintln(e.stdout, string(out))
			return nil
		},
	}
}
