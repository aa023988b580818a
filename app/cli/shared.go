package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airlock-app/airlock/sandbox"
)

// What airlock-agent's commands (package agentcmd) share with this command line, so
// that `airlock mcp` takes the sandbox flags `airlock exec` takes and both executables
// answer a failure with the same exit codes.

// PolicyFlags are the sandbox flags of `exec` and `check` (--sandbox, --network, --cwd,
// --writable-root, --protect, --backend, --execution-mode).
type PolicyFlags struct{ f policyFlags }

// Register adds the flags to fs.
func (p *PolicyFlags) Register(fs *pflag.FlagSet) { p.f.register(fs) }

// Resolve resolves the policy for the flags given in fs through the one resolution, as
// `airlock exec` does; getenv is the environment it reads (config.toml's place, the
// AIRLOCK_* variables).
func (p *PolicyFlags) Resolve(getenv func(string) string, fs *pflag.FlagSet) (sandbox.Policy, error) {
	return p.f.resolve(&env{getenv: getenv}, fs)
}

// Run executes root with args and returns the process exit code: ExitUsage for a wrong
// command line, ExitNotRunning when no core answers, ExitError for any other failure,
// whose reason goes to stderr as "airlock: <reason>".
func Run(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	return exitCode(root.ExecuteContext(ctx), stderr)
}
