// Package cli is the `airlock` command line: cobra commands that talk to the running
// app or daemon through the local API, or host the headless core themselves.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/paths"
)

// Exit codes of the CLI's own failures.
const (
	ExitError      = 1 // the command failed; the reason is on stderr
	ExitUsage      = 2 // the command line is wrong
	ExitNotRunning = 3 // no app or daemon answers
)

// env is what every command shares.
type env struct {
	json   bool
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// paths resolves the data paths from the environment.
func (e *env) paths() (paths.Paths, error) { return paths.Resolve(e.getenv) }

// client returns a local API client for the running app or daemon.
func (e *env) client() (*localapi.Client, error) {
	p, err := e.paths()
	if err != nil {
		return nil, err
	}
	return localapi.NewClient(p.Socket), nil
}

// print writes v as JSON under --json, else calls human.
func (e *env) print(v any, human func(w io.Writer)) error {
	if e.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	human(e.stdout)
	return nil
}

// exitError carries a specific exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// NewRoot builds the command tree.
func NewRoot(stdout, stderr io.Writer, getenv func(string) string) *cobra.Command {
	return newRoot(stdout, stderr, getenv, "")
}

// hotCommands are the commands on the sandbox's hot path: `airlock exec` starts every
// sandboxed command, and building the other twenty commands' flags (and cobra's
// completion command) would cost it a third of a millisecond each time.
var hotCommands = map[string]func(*env) *cobra.Command{
	"exec":  newExecCmd,
	"check": newCheckCmd,
}

// hotCommand is the hot command args start with, or "". Only the first argument is
// looked at: anything else (a global flag first, help, completion) takes the full tree.
func hotCommand(args []string) string {
	if len(args) > 0 {
		if _, ok := hotCommands[args[0]]; ok {
			return args[0]
		}
	}
	return ""
}

// newRoot builds the command tree; with only naming a hot command, the root holds that
// command alone (built by the same constructor as in the full tree), so that parsing,
// help and errors are the same and nothing else is built.
func newRoot(stdout, stderr io.Writer, getenv func(string) string, only string) *cobra.Command {
	e := &env{stdout: stdout, stderr: stderr, getenv: getenv}
	root := &cobra.Command{
		Use:   "airlock",
		Short: "Run AI agents and scheduled jobs unattended, inside a sandbox that asks you only when it matters",
		Long: "Airlock confines every run and every agent tool call in an OS sandbox, asks the person only when it\n" +
			"matters, holds background runs that start in unknown places until you authorize them, and gives\n" +
			"infrastructure changes a plan → diff → approve → apply → verify → journal path.\n\n" +
			"With no command, airlock opens the desktop app.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return launchDesktop(e)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().BoolVar(&e.json, "json", false, "print machine-readable JSON")
	if newCmd, ok := hotCommands[only]; ok {
		root.AddCommand(newCmd(e))
		root.CompletionOptions.DisableDefaultCmd = true
		return root
	}
	root.AddCommand(
		newVersionCmd(e),
		newStatusCmd(e),
		newDaemonCmd(e),
		newConfigCmd(e),
		newProfileCmd(e),
		newExecCmd(e),
		newCheckCmd(e),
		newSandboxCmd(e),
		newApprovalsCmd(e),
		newGrantsCmd(e),
		newAuditCmd(e),
		newOpsCmd(e),
		newDeptCmd(e),
		newTaskCmd(e),
		newRunsCmd(e),
		newAuthorizeCmd(e),
		newPlacesCmd(e),
		newInboxCmd(e),
		newDispatchCmd(e),
		newSecretCmd(e),
		newMCPCmd(e), newHookCmd(e),
	)
	return root
}

// Execute runs the CLI and returns the process exit code.
func Execute(ctx context.Context, args []string) int {
	return Run(ctx, newRoot(os.Stdout, os.Stderr, os.Getenv, hotCommand(args)), args, os.Stderr)
}

// Run executes root (airlock's, or airlock-agent's in package agentcmd) with args and
// returns the process exit code: ExitUsage for a wrong command line, ExitNotRunning when
// no core answers, ExitError for any other failure, whose reason goes to stderr as
// "airlock: <reason>".
func Run(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(joinNetworkValue(args))
	return exitCode(root.ExecuteContext(ctx), stderr)
}

// exitCode is the exit code for the error a command returned, which it prints.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	code := ExitError
	var ee *exitError
	var nr *localapi.NotRunningError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, &nr):
		code = ExitNotRunning
	case isUsageError(err):
		code = ExitUsage
	}
	if ee == nil || ee.err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
	}
	return code
}

func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "invalid argument", "flag needs an argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
