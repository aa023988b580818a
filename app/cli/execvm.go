package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/airlock-app/airlock/permission/preflight/vmrisk"
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
		return nil, fmt.Errorf("%w; or run it with --execution-mode local", err)
	}
	fmt.Fprintln(e.stderr, "airlock: booting a micro-VM for this command; only the working directory is shared (as /workspace), everything else it writes vanishes when it ends")
	return vm.ExecOnce(base, slog.New(slog.NewTextHandler(io.Discard, nil))), nil
}

// routeExec applies the execution mode to `airlock exec`: sandbox runs the command in a
// one-off micro-VM; auto does so for a high-risk command (vmrisk.Reason: preflight findings,
// package installs, `curl | sh`, programs from the workspace) and refuses one when the
// micro-VM is not installed (the person is at this terminal and can choose
// --execution-mode local); everything else runs on the host.
func routeExec(ctx context.Context, e *env, req *sandbox.ExecRequest, args []string) error {
	switch req.Policy.ExecutionMode {
	case sandbox.ExecSandbox:
		run, err := oneOffMicroVM(ctx, e)
		if err != nil {
			return fmt.Errorf("execution_mode \"sandbox\": %w", err)
		}
		req.MicroVM = run
		return nil
	case sandbox.ExecAuto:
		why := vmrisk.Reason(shellJoin(args), req.Policy.Cwd, e.getenv("HOME"))
		if why == "" {
			req.Policy.ExecutionMode = sandbox.ExecLocal
			return nil
		}
		run, err := oneOffMicroVM(ctx, e)
		if err != nil {
			return fmt.Errorf("execution_mode auto: %s should run in the micro-VM: %w", why, err)
		}
		fmt.Fprintf(e.stderr, "airlock: running in the micro-VM (auto: %s)\n", why)
		req.Policy.ExecutionMode, req.MicroVM = sandbox.ExecSandbox, run
	}
	return nil
}
