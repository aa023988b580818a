//go:build unix && !linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// execOnHost runs a prepared request: Seatbelt on macOS, the application layer alone
// elsewhere (refused when the backend is "os"), whose verdict is then enforced as on
// Linux (see checkAppOnly).
func execOnHost(ctx context.Context, pr *prepared) (Result, error) {
	req := pr.req
	if err := refuseFiles(req, runtime.GOOS); err != nil {
		return Result{}, err
	}
	p := req.Policy
	argv := pr.req.Argv
	res := Result{Backend: BackendNameNone}
	if !p.Limits.IsZero() {
		why := fmt.Errorf("Airlock applies them with Linux cgroups, which %s does not have", runtime.GOOS)
		if p.LimitsRequired {
			return Result{}, &ExecError{Code: ExitSandboxFailed, Err: fmt.Errorf("%w and [limits] required = true: %v", ErrLimitsUnavailable, why)}
		}
		res.Warning = limitsNotAppliedWarning(p.Limits, why)
	}
	switch {
	case p.Mode == ModeFullAccess:
	case p.Backend == BackendApp:
		if err := checkAppOnly(pr, false); err != nil {
			return Result{Backend: BackendNameApp}, err
		}
		res.Backend = BackendNameApp
		res.Warning = joinWarn(appRanWarning, res.Warning)
	case runtime.GOOS == "darwin" && fileExists(sandboxExec):
		res.Backend = BackendNameSeatbelt
		// Seatbelt hides by path too: a hidden file's second name would be read.
		dirs, files := splitHidden(pr.hidden)
		if err := checkHiddenLinks(files, dirs, p.Unhidden); err != nil {
			return res, &ExecError{Code: ExitSandboxFailed, Err: err}
		}
		argv = append([]string{sandboxExec, "-p", SeatbeltProfile(p, pr.hidden), "--"}, argv...)
		pr.path = sandboxExec
	case p.Backend == BackendOS:
		return Result{}, &ExecError{Code: ExitSandboxFailed, Err: fmt.Errorf("%w on %s (isolation backend \"os\" refuses to run without one)", ErrNoOSBackend, runtime.GOOS)}
	default:
		if err := checkAppOnly(pr, true); err != nil {
			return Result{Backend: BackendNameApp}, err
		}
		res.Backend = BackendNameApp
		res.Warning = joinWarn(appFallbackWarning, res.Warning)
	}
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, pr.path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir, cmd.Env = pr.cwd, pr.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = req.Stdin, req.Stdout, req.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return res, execErr(ExitCannotExecute, "exec %s: %w", argv[0], err)
	}
	res.HostPid = cmd.Process.Pid
	if req.OnStart != nil {
		req.OnStart(cmd.Process.Pid)
	}
	werr := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return finish(ctx, cmd, werr, res)
}

const waitDelay = 3e9

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
