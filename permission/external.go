package permission

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
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
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxExternalOutput, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
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
	if stdout.overflow {
		return nil, fmt.Errorf("%s printed more than %d bytes", argv[0], maxExternalOutput)
	}
	return stdout.Bytes(), nil
}

// limitedBuffer keeps at most max bytes and remembers that it dropped some.
type limitedBuffer struct {
	bytes.Buffer
	max      int
	overflow bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.Len()
	if room <= 0 {
		b.overflow = b.overflow || len(p) > 0
		return len(p), nil
	}
	if len(p) > room {
		b.overflow = true
		b.Buffer.Write(p[:room])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

var _ io.Writer = (*limitedBuffer)(nil)
