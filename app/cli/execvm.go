package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"

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
