// Command floor is the least any Go front-end to bubblewrap can cost: with no
// arguments it exits at once (the start-up of a static Go executable); with a
// command it runs it as a child with the same stdio and fd 3 (the seccomp
// filter) passed on, waits and returns its exit code, as `airlock exec` does
// around bwrap, with nothing else (no flags, no config, no policy). With -exec
// first it replaces itself with the command instead (no parent left), and with
// -fork it starts it through syscall.ForkExec and wait4 instead of os/exec.
package main

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case "-exec":
		_ = syscall.Exec(os.Args[2], os.Args[2:], os.Environ())
		os.Exit(125)
	case "-fork":
		pid, err := syscall.ForkExec(os.Args[2], os.Args[2:], &syscall.ProcAttr{
			Env: os.Environ(), Files: []uintptr{0, 1, 2, 3},
			Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
		})
		if err != nil {
			os.Exit(125)
		}
		var ws syscall.WaitStatus
		for {
			_, err = syscall.Wait4(pid, &ws, 0, nil)
			if !errors.Is(err, syscall.EINTR) {
				break
			}
		}
		os.Exit(ws.ExitStatus())
	}
	c := exec.Command(os.Args[1], os.Args[2:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if f := os.NewFile(3, "seccomp"); f != nil {
		c.ExtraFiles = []*os.File{f}
	}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		os.Exit(125)
	}
}
