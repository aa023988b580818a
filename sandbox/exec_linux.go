package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// waitDelay bounds how long Exec waits for output pipes after the process tree is gone.
const waitDelay = 3 * time.Second

var (
	bwrapOnce sync.Once
	bwrapBin  string
)

// bwrapPath is the hot-path check for bubblewrap: one PATH lookup per process.
func bwrapPath() string {
	bwrapOnce.Do(func() {
		if p := os.Getenv("AIRLOCK_BWRAP"); p != "" {
			bwrapBin = p
			return
		}
		bwrapBin, _ = exec.LookPath("bwrap")
	})
	return bwrapBin
}

// forcedBackend lets tests (and `airlock sandbox status` experiments) pin the
// OS backend: "bwrap", "landlock" or "" (strongest available).
var forcedBackend = ""

// forcedNone makes tests behave as on a machine with no OS backend.
const forcedNone = "none-available"

// execOnHost runs a prepared request on Linux with the strongest backend the policy
// allows: bubblewrap, then Landlock. Without an OS backend (isolation backend "app", or
// "auto" on a machine without one) the application layer's verdict is enforced: a
// denial is returned as the *IsolationDeniedError, and a command whose effects the
// analysis cannot see is refused with an *ExecError (ExitSandboxFailed) wrapping
// ErrAppLayerCannotCheck.
func execOnHost(ctx context.Context, pr *prepared) (Result, error) {
	req := pr.req
	p := req.Policy
	if p.Mode == ModeFullAccess {
		if err := refuseFiles(req, BackendNameNone); err != nil {
			return Result{Backend: BackendNameNone}, err
		}
		return runDirect(ctx, pr, BackendNameNone, "")
	}
	if p.Backend == BackendApp {
		if err := refuseFiles(req, BackendNameApp); err != nil {
			return Result{Backend: BackendNameApp}, err
		}
		if err := checkAppOnly(pr, false); err != nil {
			return Result{Backend: BackendNameApp}, err
		}
		return runDirect(ctx, pr, BackendNameApp, appRanWarning)
	}
	useBwrap := forcedBackend == BackendNameBwrap || (forcedBackend == "" && bwrapPath() != "")
	if _, nested := Enclosing(); nested && forcedBackend == "" && landlockAvailable() {
		// bubblewrap refuses to nest in an Airlock sandbox (--disable-userns): trying
		// would only print its failure into every command's stderr.
		useBwrap = false
	}
	if forcedBackend == forcedNone {
		useBwrap = false
	}
	if useBwrap {
		res, started, err := runBwrap(ctx, pr)
		// A missing network stack is not bwrap's failure: Landlock cannot help there.
		if started || err == nil || forcedBackend == BackendNameBwrap || !landlockAvailable() || errors.Is(err, ErrNoNetworkStack) {
			return res, err
		}
		// bwrap could not build the sandbox (e.g. user namespaces blocked): fall back.
		if ferr := refuseFiles(req, BackendNameLandlock); ferr != nil {
			return res, errors.Join(err, ferr)
		}
		res, err = runLandlock(ctx, pr)
		res.Warning = joinWarn("bubblewrap could not start the sandbox; Landlock was used instead", res.Warning)
		return res, err
	}
	if err := refuseFiles(req, BackendNameLandlock); err != nil {
		return Result{}, err
	}
	if landlockAvailable() {
		return runLandlock(ctx, pr)
	}
	if p.Backend == BackendOS {
		return Result{}, &ExecError{Code: ExitSandboxFailed, Err: fmt.Errorf("%w (isolation backend \"os\" refuses to run without one): install bubblewrap: apt install bubblewrap", ErrNoOSBackend)}
	}
	if err := checkAppOnly(pr, true); err != nil {
		return Result{Backend: BackendNameApp}, err
	}
	return runDirect(ctx, pr, BackendNameApp, appFallbackWarning)
}

// newCmd builds the host command with its own process group, killed as a
// whole on cancellation.
func newCmd(ctx context.Context, pr *prepared, path string, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Args[0] = args0(path, pr)
	cmd.Dir = pr.cwd
	cmd.Env = pr.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pr.req.Stdin, pr.req.Stdout, pr.req.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = waitDelay
	return cmd
}

// killGroup kills cmd's process group and cmd itself (a limit was reached).
func killGroup(cmd *exec.Cmd) func() {
	return func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Process.Kill()
		}
	}
}

func args0(path string, pr *prepared) string {
	if path == pr.path {
		return pr.req.Argv[0]
	}
	return path
}

// runDirect runs without an OS sandbox (full-access, or the application layer
// alone), still killing the whole process group at the end.
func runDirect(ctx context.Context, pr *prepared, backend, warning string) (Result, error) {
	ctx, cancel := withTimeout(ctx, pr.req.Timeout)
	defer cancel()
	cmd := newCmd(ctx, pr, pr.path, pr.req.Argv[1:])
	cmd.Args = append([]string{pr.req.Argv[0]}, pr.req.Argv[1:]...)
	res := Result{Backend: backend, Warning: warning}
	lim, err := startLimited(pr, cmd, &res, killGroup(cmd))
	if err != nil {
		var ee *ExecError
		if errors.As(err, &ee) {
			return res, err
		}
		return res, execErr(ExitCannotExecute, "exec %s: %w", pr.req.Argv[0], err)
	}
	res.HostPid = cmd.Process.Pid
	if pr.req.OnStart != nil {
		pr.req.OnStart(cmd.Process.Pid)
	}
	werr := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever stayed in the group
	finishLimited(lim, &res)
	return finish(ctx, cmd, werr, res)
}

// runBwrap runs the command under bubblewrap. started reports whether the
// command itself began (false: bwrap failed while building the sandbox).
func runBwrap(ctx context.Context, pr *prepared) (res Result, started bool, err error) {
	p := pr.req.Policy
	res.Backend = BackendNameBwrap
	plan, err := planMounts(p, pr.hidden)
	if err != nil {
		return res, false, &ExecError{Code: ExitSandboxFailed, Err: err}
	}
	filter, err := seccompProgram(bwrapSeccompOptions(p))
	if err != nil {
		return res, false, execErr(ExitSandboxFailed, "exec: %w", err)
	}
	seccompR, seccompW, err := os.Pipe()
	if err != nil {
		return res, false, execErr(ExitSandboxFailed, "exec: seccomp pipe: %w", err)
	}
	defer seccompR.Close()
	if _, err := seccompW.Write(filter); err != nil { // < pipe buffer: never blocks
		seccompW.Close()
		return res, false, execErr(ExitSandboxFailed, "exec: write seccomp filter: %w", err)
	}
	seccompW.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return res, false, execErr(ExitSandboxFailed, "exec: status pipe: %w", err)
	}
	defer statusR.Close()

	// The placeholders are held before the arguments are made: what exists may have
	// changed since planMounts (another sandbox in this directory ended or started).
	ph, plan, err := holdPlaceholders(ctx, plan)
	if err != nil {
		return res, false, &ExecError{Code: ExitSandboxFailed, Err: err}
	}
	defer ph.release()
	args := bwrapArgs(p, plan, pr.cwd, 3, 4)
	var net *netSetup
	egress := p.Network == NetworkAllowlist && pr.req.Egress != nil
	if p.Network == NetworkAllowlist && !egress {
		res.Warning = joinWarn(EgressNotConnected, res.Warning)
	}
	if egress {
		// The proxy's address is fixed, so its variables go in before bwrap starts.
		pr.env = ProxyEnv(pr.env, EgressAddr)
	}
	pr.env = setEnv(pr.env, EnvEnclosingNetwork, string(p.Network))
	ask := pr.req.Ask
	if ask != nil {
		pr.env = AskEnv(pr.env)
	}
	if p.Network.On() || egress || ask != nil {
		hook := pr.req.Egress
		if !egress {
			hook = nil
		}
		if net, err = newNetSetup(hook, ask, p.Network.On()); err != nil {
			statusW.Close()
			return res, false, err
		}
		defer net.close()
		net.allowLocal = p.Allowlist != nil && p.Allowlist.AllowLocal
		args = append(args, net.bwrapArgs(5)...)
	}
	for _, f := range pr.req.ReadOnlyFiles {
		args = append(args, "--ro-bind", f.Source, f.Target)
	}
	args = append(args, "--")
	args = append(args, pr.req.Argv...)

	ctx, cancel := withTimeout(ctx, pr.req.Timeout)
	defer cancel()
	cmd := newCmd(ctx, pr, bwrapPath(), args)
	cmd.Args[0] = "bwrap"
	cmd.ExtraFiles = []*os.File{seccompR, statusW}
	if net != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, net.childFiles()...)
	}
	lim, err := startLimited(pr, cmd, &res, killGroup(cmd))
	if err != nil {
		statusW.Close()
		var ee *ExecError
		if errors.As(err, &ee) {
			return res, false, err
		}
		return res, false, execErr(ExitSandboxFailed, "exec: start bwrap: %w (install bubblewrap: apt install bubblewrap)", err)
	}
	statusW.Close()
	res.HostPid = cmd.Process.Pid
	if net != nil {
		// bwrap holds the command back (--block-fd) until the stack (or the egress
		// proxy) is up: nothing runs in a namespace without its way out, nor races it.
		net.afterStart()
		if sandboxUp, err := net.connect(ctx); err != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			finishLimited(lim, &res)
			return res, true, err
		} else if !sandboxUp {
			net.close() // bwrap failed: its status and exit code tell why
		}
	}
	if pr.req.OnStart != nil {
		pr.req.OnStart(cmd.Process.Pid)
	}
	werr := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	finishLimited(lim, &res)
	if net != nil {
		net.stop(false) // the namespace is gone with the sandbox: so is its stack
	}
	// bwrap is gone: its few status lines sit in the pipe buffer. They are read
	// without waiting: a deadline could pass before the read is even scheduled on a
	// loaded machine, and lose them.
	status := readBuffered(statusR, 1<<16)
	started = bytes.Contains(status, []byte(`"child-pid"`))
	res, err = finish(ctx, cmd, werr, res)
	if err == nil && !started && !res.TimedOut {
		return res, false, execErr(ExitSandboxFailed, "exec: bubblewrap could not build the sandbox (exit code %d; its message is above). "+
			"If user namespaces are blocked: %s; or use the Landlock backend", res.ExitCode, userNSFix(readSysctl))
	}
	return res, started, err
}

// readBuffered returns what is in the (non-blocking) pipe r now, up to max bytes,
// without waiting for more.
func readBuffered(r *os.File, max int) []byte {
	rc, err := r.SyscallConn()
	if err != nil {
		return nil
	}
	var out []byte
	buf := make([]byte, 4096)
	_ = rc.Read(func(fd uintptr) bool {
		for len(out) < max {
			n, err := syscall.Read(int(fd), buf)
			if n <= 0 || err != nil {
				break // EAGAIN: nothing more buffered; 0: every writer is gone
			}
			out = append(out, buf[:n]...)
		}
		return true
	})
	return out
}
