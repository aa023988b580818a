package ops

import "syscall"

// sysProcAttr puts the command in its own process group and kills it if Airlock dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
