package sandbox

import (
	"encoding/binary"
	"fmt"
	"sync"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompOptions choose the filter variant.
type seccompOptions struct {
	// networkOff denies AF_UNIX (host sockets such as D-Bus or Docker are
	// reachable through a read-only root) and AF_VSOCK socket creation.
	networkOff bool
	// socketsOnlyNetlink denies every socket family but AF_NETLINK: the
	// Landlock backend has no network namespace, so seccomp alone keeps the
	// network off there.
	socketsOnlyNetlink bool
	// denyUnix denies AF_UNIX and AF_VSOCK socket creation even with the
	// network on: without a mount namespace (Landlock) hidden sockets can only
	// be kept out of reach this way.
	denyUnix bool
	// denySysVIPC denies System V message queues, semaphores and shared
	// memory: without an IPC namespace they would be the host's.
	denySysVIPC bool
}

var sysVIPCSyscalls = []string{"msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl", "shmget", "shmat", "shmdt", "shmctl"}

// deniedSyscalls are refused with EPERM in every sandbox: ptrace and
// cross-process memory access, io_uring (it bypasses seccomp for the calls it
// carries), and kernel interfaces a sandboxed process never needs (module and
// kexec loading, bpf, perf, userfaultfd, the kernel keyrings, mount and
// namespace manipulation).
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd",
	"add_key", "request_key", "keyctl",
	"mount", "umount2", "pivot_root", "unshare", "setns",
	"open_tree", "move_mount", "fsopen", "fsmount", "fspick", "fsconfig", "mount_setattr",
	"swapon", "swapoff", "reboot",
}

// namespaceCloneFlags are refused in clone(2): a sandboxed process makes no namespaces.
const namespaceCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWCGROUP

const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	// Offsets in struct seccomp_data.
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits on little-endian machines
)

var (
	seccompCacheMu sync.Mutex
	seccompCache   = map[seccompOptions][]byte{}
)

// seccompProgram returns the filter as raw sock_filter records (8 bytes each,
// native endian), ready for bwrap --seccomp FD or seccomp(2). Assembled once per variant.
func seccompProgram(o seccompOptions) ([]byte, error) {
	seccompCacheMu.Lock()
	defer seccompCacheMu.Unlock()
	if b, ok := seccompCache[o]; ok {
		return b, nil
	}
	insns, err := seccompInstructions(o)
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(insns)
	if err != nil {
		return nil, fmt.Errorf("assemble seccomp filter: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		out = binary.NativeEndian.AppendUint16(out, r.Op)
		out = append(out, r.Jt, r.Jf)
		out = binary.NativeEndian.AppendUint32(out, r.K)
	}
	seccompCache[o] = out
	return out, nil
}

// seccompInstructions builds the filter. It is written out with x/net/bpf
// rather than assembled by go-seccomp-bpf's Policy because that library
// compares 64-bit arguments as a whole (the kernel truncates an int argument,
// so socket(0x100000001, …) would slip past an "Equal 1" rule) and lets
// foreign architectures (i386 int $0x80) through by default; both are refused
// here. go-seccomp-bpf's syscall tables check our numbers in the tests.
func seccompInstructions(o seccompOptions) ([]bpf.Instruction, error) {
	numbers := syscallNumbers()
	if numbers == nil {
		return nil, fmt.Errorf("seccomp: no syscall table for this architecture; Airlock's OS sandbox supports linux/amd64 and linux/arm64")
	}
	nr := func(name string) (uint32, bool) {
		n, ok := numbers[name]
		return n, ok
	}
	p := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: retENOSYS}, // foreign ABI (i386 on x86_64)
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	if x32Bit != 0 {
		p = append(p,
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipFalse: 1},
			bpf.RetConstant{Val: retENOSYS}) // x32 ABI
	}
	for _, name := range deniedSyscalls {
		if n, ok := nr(name); ok {
			p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: n, SkipFalse: 1}, bpf.RetConstant{Val: retEPERM})
		}
	}
	if o.denySysVIPC {
		for _, name := range sysVIPCSyscalls {
			if n, ok := nr(name); ok {
				p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: n, SkipFalse: 1}, bpf.RetConstant{Val: retEPERM})
			}
		}
	}
	if n, ok := nr("clone3"); ok {
		// clone3 passes its flags in memory seccomp cannot read: ENOSYS makes libc fall back to clone.
		p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: n, SkipFalse: 1}, bpf.RetConstant{Val: retENOSYS})
	}
	if n, ok := nr("clone"); ok {
		p = append(p,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: n, SkipFalse: 4},
			bpf.LoadAbsolute{Off: offArg0, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: namespaceCloneFlags, SkipFalse: 1},
			bpf.RetConstant{Val: retEPERM},
			bpf.RetConstant{Val: retAllow})
	}
	sock, ok := nr("socket")
	if !ok || !(o.networkOff || o.socketsOnlyNetlink || o.denyUnix) {
		return append(p, bpf.RetConstant{Val: retAllow}), nil
	}
	p = append(p,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: sock, SkipTrue: 1},
		bpf.RetConstant{Val: retAllow},
		bpf.LoadAbsolute{Off: offArg0, Size: 4}) // the family, as the kernel reads it (int)
	if o.socketsOnlyNetlink {
		return append(p,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_NETLINK, SkipFalse: 1},
			bpf.RetConstant{Val: retAllow},
			bpf.RetConstant{Val: retEPERM}), nil
	}
	return append(p,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_UNIX, SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_VSOCK, SkipFalse: 1},
		bpf.RetConstant{Val: retEPERM},
		bpf.RetConstant{Val: retAllow}), nil
}

// BwrapSeccompFilter returns the seccomp program Exec hands bwrap for p
// (`--seccomp FD`): raw sock_filter records. For benchmarks and debugging.
func BwrapSeccompFilter(p Policy) ([]byte, error) {
	return seccompProgram(bwrapSeccompOptions(p))
}

// bwrapSeccompOptions: AF_UNIX (and AF_VSOCK) creation is refused with the network on
// too: the host's sockets by path (D-Bus, Docker, X11's /tmp/.X11-unix) are in the
// read-only root, and the run's own network namespace reaches the outside over IP.
func bwrapSeccompOptions(p Policy) seccompOptions {
	return seccompOptions{networkOff: !p.Network.On(), denyUnix: true}
}
