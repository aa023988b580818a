//go:build unix

package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/airlock-app/airlock/internal/capped"
)

// LocalRunner runs commands directly on the host with os/exec: each in its own process
// group, killed as a group at the timeout (and any process it left behind is killed when
// it exits), output capped. It does NOT confine anything: ReadOnly and Network are not
// enforced. The app backs [Runner] with the sandbox; LocalRunner is the fallback for a
// machine with no sandbox backend, and what the package's tests use.
type LocalRunner struct {
	// Env is the environment of every command; nil means the current process's.
	Env []string
}

// Run implements [Runner].
func (r LocalRunner) Run(ctx context.Context, spec RunSpec) (RunResult, error) {
	// Nothing confines the command here: it reads the approved copies where they are kept.
	c, err := spec.CommandFor(func(in StagedInput) string { return in.Copy })
	if err != nil {
		return RunResult{ExitCode: -1}, fmt.Errorf("run: %w", err)
	}
	var argv []string
	switch c.Kind() {
	case "argv":
		argv = c.Argv
	case "shell":
		argv = []string{"/bin/sh", "-c", c.Shell}
	default:
		return RunResult{}, errors.New("run: empty command")
	}
	if spec.Timeout <= 0 {
		spec.Timeout = DefaultReadTimeout
	}
	if spec.OutputCap <= 0 {
		spec.OutputCap = DefaultOutputCap
	}
	runCtx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = r.Env
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	stdout := capped.NewBuffer(spec.OutputCap)
	stderr := capped.NewBuffer(spec.OutputCap)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return RunResult{ExitCode: -1}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	err = cmd.Wait()
	_ = killGroup(cmd.Process.Pid) // whatever the command left running dies with it
	res := RunResult{ExitCode: -1, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		Truncated: stdout.Truncated() || stderr.Truncated(), Duration: time.Since(start)}
	res.TimedOut = errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) && runCtx.Err() == nil {
		return res, fmt.Errorf("run %s: %w", argv[0], err)
	}
	return res, nil
}

func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
