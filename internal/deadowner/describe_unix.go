//go:build unix

package deadowner

import (
	"errors"
	"syscall"
)

// describeNoProc answers without /proc (macOS): whether some process has the pid.
func describeNoProc(pid int) string {
	if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
		return "is now another process, which reused the pid"
	}
	return "no longer exists"
}
