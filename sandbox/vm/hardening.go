package vm

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// SeccompArgs confine QEMU itself with its seccomp filter: no obsolete system calls, no
// setuid/setgid (no privilege change), no fork/exec (a compromised QEMU cannot start a
// shell on the host) and no scheduler/affinity changes.
var SeccompArgs = []string{"-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"}

var seccompCache sync.Map // qemu path → bool

// SeccompSupported reports whether qemu accepts SeccompArgs (it is built with seccomp): it
// starts qemu with the filter, no machine and a monitor on stdin, and asks it to quit. The
// answer is cached per binary.
func SeccompSupported(qemu string) bool {
	if v, ok := seccompCache.Load(qemu); ok {
		return v.(bool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(append([]string{}, SeccompArgs...), "-machine", "none", "-nodefaults", "-no-user-config", "-display", "none", "-S", "-monitor", "stdio")
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.Stdin = strings.NewReader("quit\n")
	ok := cmd.Run() == nil
	seccompCache.Store(qemu, ok)
	return ok
}
