package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Exit codes suggested for `airlock exec`'s own failures (the command's own
// exit code is passed through; a command killed by signal N gives 128+N).
const (
	ExitTimeout       = 124 // the command ran past --timeout and was killed
	ExitSandboxFailed = 125 // Airlock could not set up the sandbox (bad policy, no backend with --backend os, bwrap failure)
	ExitCannotExecute = 126 // the command was found but could not be executed
	ExitNotFound      = 127 // the command was not found
	ExitDenied        = 122 // the application layer denied the command (IsolationDeniedError)
)

// Backend names reported in Result.Backend and Status.Backend.
const (
	BackendNameBwrap    = "bwrap"
	BackendNameLandlock = "landlock"
	BackendNameSeatbelt = "seatbelt"
	BackendNameApp      = "app"  // application layer only
	BackendNameNone     = "none" // full-access: no isolation
)

// ExecRequest is one command to run under a policy.
type ExecRequest struct {
	Policy Policy
	// Argv is the command; Argv[0] is looked up in the sandbox's PATH.
	Argv []string
	// Cwd is where the command runs; "" means Policy.Cwd. It should lie inside a writable root.
	Cwd string
	// Env is the command's environment (nil: this process's). Credentials are scrubbed unless granted.
	Env []string
	// GrantEnv names credential variables the command may keep (exact names).
	GrantEnv []string
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	// Timeout kills the whole process tree when exceeded (0: none besides ctx).
	Timeout time.Duration
	// HiddenPaths are hidden in addition to Policy.Hidden (e.g. Airlock's run directory).
	HiddenPaths []string
	// OnStart receives the host pid of the sandbox's root process as soon as it
	// runs (the local API refuses state-changing requests from that process tree).
	OnStart func(hostPid int)
	// MicroVM runs the command when Policy.ExecutionMode is "sandbox" (sandbox/vm's
	// Pool.SandboxExec or vm.ExecOnce provide one). Without it that mode is refused.
	MicroVM MicroVM
	// ReadOnlyFiles are host files bound read-only at a path inside the sandbox (under
	// /tmp, the sandbox's own tmpfs, so nothing outside can swap them). Only bubblewrap
	// places them; every other backend refuses a request that has them.
	ReadOnlyFiles []ReadOnlyFile
	// Egress connects a network_access = "allowlist" run to the egress proxy (under
	// bubblewrap only). Without it such a run has no network, and Result.Warning says so.
	Egress Egress
	// Ask serves the sandbox's ask-only channel (under bubblewrap only; never with
	// full-access, which has no namespace of its own): called like Egress, with AskAddr,
	// before the command is released, and stopped when it ends. The command finds the
	// channel in EnvAskSocket. Without it an agent in the sandbox has nobody to ask.
	Ask Egress
}

// ReadOnlyFile is one entry of [ExecRequest.ReadOnlyFiles].
type ReadOnlyFile struct {
	Source string // host path
	Target string // absolute path inside the sandbox, under /tmp
}

// ErrCannotPlaceFiles is returned when a request has ReadOnlyFiles and the backend that
// would run it cannot place them.
var ErrCannotPlaceFiles = errors.New("this command needs files placed read-only inside the sandbox, which only bubblewrap can do: install bubblewrap (apt install bubblewrap)")

func refuseFiles(req ExecRequest, backend string) error {
	if len(req.ReadOnlyFiles) == 0 {
		return nil
	}
	return &ExecError{Code: ExitSandboxFailed, Err: fmt.Errorf("%w (backend %s)", ErrCannotPlaceFiles, backend)}
}

func checkReadOnlyFiles(files []ReadOnlyFile) error {
	for _, f := range files {
		t := filepath.Clean(f.Target)
		if !filepath.IsAbs(f.Source) || t != f.Target || !within(t, "/tmp") || t == "/tmp" {
			return execErr(ExitSandboxFailed, "exec: read-only file %s → %s: the source must be absolute and the target a clean path under /tmp", f.Source, f.Target)
		}
	}
	return nil
}

// MicroVM runs one command inside the micro-VM. req.Cwd is absolute and req.Env already
// scrubbed of credentials not granted.
type MicroVM func(ctx context.Context, req ExecRequest) (Result, error)

// BackendNameMicroVM is Result.Backend for a command run in the micro-VM.
const BackendNameMicroVM = "microvm"

// ErrMicroVMUnavailable is returned for execution_mode "sandbox" when the caller has no
// micro-VM to run the command in.
var ErrMicroVMUnavailable = errors.New(`execution_mode "sandbox" runs commands in the micro-VM, which is not available here: install it with ` +
	"`airlock sandbox install`" + ` (or from the Sandbox tab), or use execution_mode = "local"`)

// execMicroVM runs req in the micro-VM when the policy asks for it; ok is false otherwise.
func execMicroVM(ctx context.Context, req ExecRequest) (Result, bool, error) {
	if req.Policy.ExecutionMode != ExecSandbox {
		return Result{}, false, nil
	}
	if err := refuseFiles(req, BackendNameMicroVM); err != nil {
		return Result{}, true, err
	}
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return Result{}, true, execErr(ExitSandboxFailed, "exec: no command given")
	}
	if req.Policy.Mode == "" || req.Policy.Cwd == "" {
		return Result{}, true, execErr(ExitSandboxFailed, "exec: the policy is not resolved (call sandbox.Resolve)")
	}
	if req.MicroVM == nil {
		return Result{}, true, &ExecError{Code: ExitSandboxFailed, Err: ErrMicroVMUnavailable}
	}
	if req.Cwd == "" {
		req.Cwd = req.Policy.Cwd
	}
	if !filepath.IsAbs(req.Cwd) {
		abs, err := filepath.Abs(req.Cwd)
		if err != nil {
			return Result{}, true, execErr(ExitSandboxFailed, "exec: working directory %s: %w", req.Cwd, err)
		}
		req.Cwd = abs
	}
	env := req.Env
	if env == nil {
		env = os.Environ()
	}
	req.Env = slices.DeleteFunc(ScrubEnv(env, req.GrantEnv), func(kv string) bool { return strings.HasPrefix(kv, innerStageEnv+"=") })
	res, err := req.MicroVM(ctx, req)
	if res.Backend == "" {
		res.Backend = BackendNameMicroVM
	}
	return res, true, err
}

// Result is how a command ended.
type Result struct {
	// ExitCode is the command's exit code, or 128+N when killed by signal N.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that killed the command ("" if it exited).
	Signal string `json:"signal,omitempty"`
	// TimedOut is true when Timeout (or ctx's deadline) killed it.
	TimedOut bool `json:"timed_out"`
	// Backend is what confined it: bwrap, landlock, seatbelt, app or none.
	Backend string `json:"backend"`
	// Warning is set when isolation is weaker than asked (fell back to the application layer).
	Warning string `json:"warning,omitempty"`
	// HostPid is the sandbox root's host pid.
	HostPid int `json:"host_pid"`
	// Limit names the resource limit that ended the command (LimitMemory, LimitPids),
	// and LimitMessage says it in words ("ended: the pids limit (512) was reached …").
	Limit        string `json:"limit,omitempty"`
	LimitMessage string `json:"limit_message,omitempty"`
}

// ExecError is a failure of Airlock itself (not of the command), with the exit
// code `airlock exec` should use.
type ExecError struct {
	Code int
	Err  error
}

func (e *ExecError) Error() string { return e.Err.Error() }
func (e *ExecError) Unwrap() error { return e.Err }

func execErr(code int, format string, args ...any) error {
	return &ExecError{Code: code, Err: fmt.Errorf(format, args...)}
}

// ErrNoOSBackend is returned with backend = "os" when no OS backend is available.
var ErrNoOSBackend = errors.New("no OS sandbox backend is available")

// innerStageEnv marks a re-executed airlock binary as the Landlock inner stage.
const innerStageEnv = "AIRLOCK_SANDBOX_INNER_STAGE"

// prepared is the common part of every backend's run.
type prepared struct {
	req    ExecRequest
	cwd    string
	env    []string
	hidden []string
	path   string // resolved Argv[0] on the host
}

// Exec runs req.Argv under req.Policy (in the micro-VM when the policy's execution mode
// says so, otherwise on this host under the strongest backend the policy allows:
// execOnHost), and returns when the command and every process it started are gone. The
// command's failure is in Result.ExitCode; Airlock's own failures are *ExecError (with
// the exit code to use) or *ProtectedSymlinkError.
func Exec(ctx context.Context, req ExecRequest) (Result, error) {
	if res, ok, err := execMicroVM(ctx, req); ok {
		return res, err
	}
	pr, err := prepare(req)
	if err != nil {
		return Result{}, err
	}
	return execOnHost(ctx, pr)
}

func prepare(req ExecRequest) (*prepared, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, execErr(ExitSandboxFailed, "exec: no command given")
	}
	if err := checkReadOnlyFiles(req.ReadOnlyFiles); err != nil {
		return nil, err
	}
	if req.Policy.Mode == "" || req.Policy.Cwd == "" {
		return nil, execErr(ExitSandboxFailed, "exec: the policy is not resolved (call sandbox.Resolve)")
	}
	if req.Policy.ExecutionMode == ExecSandbox {
		return nil, &ExecError{Code: ExitSandboxFailed, Err: ErrMicroVMUnavailable}
	}
	pr := &prepared{req: req, cwd: req.Cwd}
	if pr.cwd == "" {
		pr.cwd = req.Policy.Cwd
	}
	if !filepath.IsAbs(pr.cwd) {
		abs, err := filepath.Abs(pr.cwd)
		if err != nil {
			return nil, execErr(ExitSandboxFailed, "exec: working directory %s: %w", pr.cwd, err)
		}
		pr.cwd = abs
	}
	env := req.Env
	if env == nil {
		env = os.Environ()
	}
	pr.env = ScrubEnv(env, req.GrantEnv)
	pr.env = slices.DeleteFunc(pr.env, func(kv string) bool { return strings.HasPrefix(kv, innerStageEnv+"=") })
	pr.hidden = append(append([]string(nil), req.Policy.Hidden...), req.HiddenPaths...)
	path, err := lookPathIn(req.Argv[0], envValue(pr.env, "PATH"), pr.cwd)
	if err != nil {
		return nil, err
	}
	pr.path = path
	return pr, nil
}

// lookPathIn finds a command the way execvp would with the given PATH.
func lookPathIn(name, pathEnv, cwd string) (string, error) {
	check := func(p string) error {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			return syscall.EACCES
		}
		return nil
	}
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if err := check(p); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return "", execErr(ExitNotFound, "exec %s: command not found", name)
			}
			return "", execErr(ExitCannotExecute, "exec %s: %v", name, err)
		}
		return p, nil
	}
	if pathEnv == "" {
		pathEnv = "/usr/local/bin:/usr/bin:/bin"
	}
	var denied error
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, name)
		err := check(p)
		if err == nil {
			return p, nil
		}
		if errors.Is(err, syscall.EACCES) && denied == nil {
			denied = execErr(ExitCannotExecute, "exec %s: %s is not executable", name, p)
		}
	}
	if denied != nil {
		return "", denied
	}
	return "", execErr(ExitNotFound, "exec %s: command not found in PATH", name)
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// withTimeout applies req.Timeout to ctx. Without a timeout and with a
// context that is never done, ctx is returned as is: exec then watches nothing
// (one goroutine less on the hot path).
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	if ctx.Done() == nil {
		return ctx, func() {}
	}
	return context.WithCancel(ctx)
}

// finish turns a Wait error into a Result.
func finish(ctx context.Context, cmd *exec.Cmd, werr error, res Result) (Result, error) {
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal().String()
			res.ExitCode = 128 + int(ws.Signal())
		} else {
			res.ExitCode = cmd.ProcessState.ExitCode()
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.TimedOut = true
		return res, nil
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) && !errors.Is(werr, exec.ErrWaitDelay) {
		return res, execErr(ExitSandboxFailed, "exec: %w", werr)
	}
	return res, nil
}

// joinWarn joins two warnings ("" is none).
func joinWarn(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}
