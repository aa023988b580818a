package agentcmd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/airlock-app/airlock/app/gateway"
	"github.com/airlock-app/airlock/permission/preflight/vmrisk"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// sessionMicroVM gives `airlock mcp`'s sessions their micro-VMs for the sandbox and auto
// execution modes: a warm VM per session (each client of --http has its own) for the
// workspace, booted on the first command that needs it and kept for the next ones
// (stopped after 5 idle minutes and when the server ends, taking everything written
// outside the workspace with it). Without an installed
// runtime and image, those commands are refused with the way out.
func sessionMicroVM(ctx context.Context, e *env, dir string, policy sandbox.Policy, opts *gateway.Options, log *slog.Logger) func() {
	home := e.getenv("HOME")
	opts.Risk = func(command string) string { return vmrisk.Reason(command, policy.Cwd, home) }
	st := vminstall.New(vminstall.Config{Dir: dir}).Refresh(ctx)
	base, err := vm.ConfigFromInstall(dir, st)
	if err != nil {
		fmt.Fprintf(e.stderr, "airlock mcp: execution_mode %s: %v\n", policy.ExecutionMode, err)
		return func() {}
	}
	pool := vm.NewPool(base, 5*time.Minute, nil, log)
	opts.MicroVM = func(session string) sandbox.MicroVM { return pool.Session(session).SandboxExec }
	return pool.Close
}
