// Package agentcmd is the command line of airlock-agent: `airlock mcp` (the MCP server,
// over stdio or, with --http, streamable HTTP on loopback; `airlock mcp token`) and `airlock hook claude` (the Claude Code hook adapter), which the plain
// `airlock` execs (app/cli/agent_beside.go). It is kept out of `airlock` because the MCP
// SDK it links costs every process a few milliseconds of start-up, and `airlock exec`
// must start in about one.
package agentcmd

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/app/cli"
	"github.com/airlock-app/airlock/app/paths"
)

// env is what the agent commands share.
type env struct {
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// paths resolves the data paths from the environment.
func (e *env) paths() (paths.Paths, error) { return paths.Resolve(e.getenv) }

// NewRoot builds the command tree: `airlock`, as the person typed it, with the agent
// commands under it and the same global --json flag as the plain command line.
func NewRoot(stdout, stderr io.Writer, getenv func(string) string) *cobra.Command {
	e := &env{stdout: stdout, stderr: stderr, getenv: getenv}
	root := &cobra.Command{
		Use:           "airlock",
		Short:         "The agent commands of Airlock's command line: the MCP server and the hook adapter",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().Bool("json", false, "print machine-readable JSON")
	root.AddCommand(newMCPCmd(e), newHookCmd(e))
	return root
}

// Execute runs the agent commands and returns the process exit code, with the plain
// command line's exit codes.
func Execute(ctx context.Context, args []string) int {
	return cli.Run(ctx, NewRoot(os.Stdout, os.Stderr, os.Getenv), args, os.Stderr)
}
