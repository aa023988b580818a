package permission

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-app/airlock/internal/capped"
)

// maxExternalOutput bounds what a hook or reviewer may print.
const maxExternalOutput = 1 << 20

// runExternal runs a trusted helper command (a hook or the reviewer) with JSON on stdin
// and returns its stdout. The whole process group is killed when the timeout or ctx
// ends, so a hung helper or a child it left behind cannot hold the request.
func runExternal(ctx context.Context, argv []string, input []byte, timeout time.Duration) ([]byte, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("no command configured")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(input)
	stdout, stderr := capped.NewBuffer(maxExternalOutput), capped.NewBuffer(4096)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%s did not answer within %s", argv[0], timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return nil, fmt.Errorf("%s failed: %w: %s", argv[0], err, msg)
		}
		return nil, fmt.Errorf("%s failed: %w", argv[0], err)
	}
	if stdout.Truncated() {
		return nil, fmt.Errorf("%s printed more than %d bytes", argv[0], maxExternalOutput)
	}
	return stdout.Bytes(), nil
}
