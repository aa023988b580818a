package sandbox

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
)

// TestSyscallNumbersMatchGoSeccompBPF checks our x/sys/unix-based table
// against go-seccomp-bpf's generated tables for this architecture.
func TestSyscallNumbersMatchGoSeccompBPF(t *testing.T) {
	info, err := arch.GetInfo("")
	if err != nil {
		t.Skipf("go-seccomp-bpf has no table for this architecture: %v", err)
	}
	for name, nr := range syscallNumbers() {
		want, ok := info.SyscallNames[name]
		if !ok {
			t.Errorf("%s: unknown to go-seccomp-bpf", name)
			continue
		}
		if uint32(want) != nr {
			t.Errorf("%s = %d, go-seccomp-bpf says %d", name, nr, want)
		}
	}
	if uint32(info.ID) != auditArch {
		t.Errorf("audit arch %#x, go-seccomp-bpf says %#x", auditArch, uint32(info.ID))
	}
	for _, name := range append(append([]string(nil), deniedSyscalls...), sysVIPCSyscalls...) {
		if _, ok := syscallNumbers()[name]; !ok {
			t.Errorf("denied syscall %s has no number", name)
		}
	}
}

// TestSeccompArgumentTruncation: the kernel reads socket's family as an int,
// so a family with high bits set must be refused like AF_UNIX itself.
func TestSeccompArgumentTruncation(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		p, _ := testPolicy(t, "workspace-write", false)
		var out bytes.Buffer
		script := `
import ctypes, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for fam in (1, 0x100000001, 0xffffffff00000001):
    r = libc.syscall(41, ctypes.c_ulong(fam), 1, 0)
    print("family", hex(fam), "->", "fd" if r >= 0 else "errno %d" % ctypes.get_errno())
a, b = socket.socketpair(); print("socketpair ok")
`
		res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{python, "-c", script}, Stdout: &out, Stderr: &out})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v %+v\n%s", err, res, out.String())
		}
		if strings.Contains(out.String(), "-> fd") || !strings.Contains(out.String(), "socketpair ok") {
			t.Errorf("ESCAPE: an AF_UNIX socket was created through argument high bits, or socketpair broke:\n%s", out.String())
		}
	})
}
