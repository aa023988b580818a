//go:build unix && !linux

package ops

import "syscall"

// sysProcAttr puts the command in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
