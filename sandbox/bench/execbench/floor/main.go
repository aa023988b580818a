// Command floor is the least any Go front-end to bubblewrap can cost: with no
// arguments it exits at once (the start-up of a static Go executable); with a
// command it runs it as a child with the same stdio and fd 3 (the seccomp
// filter) passed on, waits and returns its exit code, as `airlock exec` does
// around bwrap, with nothing else (no flags, no config, no policy).
package main

import (
	"errors"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		return
	}
	c := exec.Command(os.Args[1], os.Args[2:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if f := os.NewFile(3, "seccomp"); f != nil {
		c.ExtraFiles = []*os.File{f}
	}
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		os.Exit(125)
	}
}
