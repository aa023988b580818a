package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/airlock-app/airlock/app/gateway"
	"github.com/airlock-app/airlock/dispatch/sandboxexec/risk"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// oneOffMicroVM is how `airlock exec --execution-mode sandbox` runs its command: in a VM
// booted for it alone from the installed runtime and image, stopped when the command ends
// (so nothing but the workspace outlives it). The CLI does not borrow the daemon's warm
// pool: its stdin, stdout and exit code are this process's, and a command must not depend
// on a daemon running. The cost is a cold boot per command (see microvm-bench.md).
func oneOffMicroVM(ctx context.Context, e *env) (sandbox.MicroVM, error) {
	p, err := e.paths()
	if err != nil {
		return nil, err
	}
	st := vminstall.New(vminstall.Config{Dir: p.SandboxDir}).Refresh(ctx)
	base, err := vm.ConfigFromInstall(p.SandboxDir, st)
	if err != nil {
		return nil, fmt.Errorf("execution_mode \"sandbox\": %w; or run it with --execution-mode local", err)
	}
	fmt.Fprintf(e.stderr, "airlock: booting a micro-VM for this command (%s); only the working directory is shared (as /workspace), everything else it writes vanishes when it ends\n", st.Support.Accel)
	return vm.ExecOnce(base, slog.New(slog.NewTextHandler(io.Discard, nil))), nil
}

// sessionMicroVM gives an `airlock mcp` session its micro-VM for the sandbox and auto
// execution modes: a warm VM for the session's workspace, booted on the first command that
// needs it and kept for the next ones (stopped after 5 idle minutes and at the end of the
// session, taking everything written outside the workspace with it). Without an installed
// runtime and image, those commands are refused with the way out.
func sessionMicroVM(ctx context.Context, e *env, dir string, policy sandbox.Policy, opts *gateway.Options, log *slog.Logger) func() {
	home := e.getenv("HOME")
	opts.Risk = func(command string) string { return risk.Reason(command, policy.Cwd, home) }
	st := vminstall.New(vminstall.Config{Dir: dir}).Refresh(ctx)
	base, err := vm.ConfigFromInstall(dir, st)
	if err != nil {
		fmt.Fprintf(e.stderr, "airlock mcp: execution_mode %s: %v\n", policy.ExecutionMode, err)
		return func() {}
	}
	pool := vm.NewPool(base, 5*time.Minute, nil, log)
	opts.MicroVM = pool.SandboxExec
	return pool.Close
}
