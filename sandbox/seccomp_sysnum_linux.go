//go:build linux && (amd64 || arm64)

package sandbox

import "golang.org/x/sys/unix"

// syscallNumbers maps the names the filter refers to onto this
// architecture's numbers. They come from golang.org/x/sys/unix constants (no
// start-up cost; go-seccomp-bpf's tables cost ~1.5 ms of init in every airlock
// process) and are checked against go-seccomp-bpf's tables in the tests.
func syscallNumbers() map[string]uint32 {
	return map[string]uint32{
		"ptrace": unix.SYS_PTRACE, "process_vm_readv": unix.SYS_PROCESS_VM_READV, "process_vm_writev": unix.SYS_PROCESS_VM_WRITEV,
		"io_uring_setup": unix.SYS_IO_URING_SETUP, "io_uring_enter": unix.SYS_IO_URING_ENTER, "io_uring_register": unix.SYS_IO_URING_REGISTER,
		"kexec_load": unix.SYS_KEXEC_LOAD, "kexec_file_load": unix.SYS_KEXEC_FILE_LOAD,
		"init_module": unix.SYS_INIT_MODULE, "finit_module": unix.SYS_FINIT_MODULE, "delete_module": unix.SYS_DELETE_MODULE,
		"bpf": unix.SYS_BPF, "perf_event_open": unix.SYS_PERF_EVENT_OPEN, "userfaultfd": unix.SYS_USERFAULTFD,
		"add_key": unix.SYS_ADD_KEY, "request_key": unix.SYS_REQUEST_KEY, "keyctl": unix.SYS_KEYCTL,
		"mount": unix.SYS_MOUNT, "umount2": unix.SYS_UMOUNT2, "pivot_root": unix.SYS_PIVOT_ROOT,
		"unshare": unix.SYS_UNSHARE, "setns": unix.SYS_SETNS,
		"open_tree": unix.SYS_OPEN_TREE, "move_mount": unix.SYS_MOVE_MOUNT, "fsopen": unix.SYS_FSOPEN,
		"fsmount": unix.SYS_FSMOUNT, "fspick": unix.SYS_FSPICK, "fsconfig": unix.SYS_FSCONFIG, "mount_setattr": unix.SYS_MOUNT_SETATTR,
		"swapon": unix.SYS_SWAPON, "swapoff": unix.SYS_SWAPOFF, "reboot": unix.SYS_REBOOT,
		"msgget": unix.SYS_MSGGET, "msgsnd": unix.SYS_MSGSND, "msgrcv": unix.SYS_MSGRCV, "msgctl": unix.SYS_MSGCTL,
		"semget": unix.SYS_SEMGET, "semop": unix.SYS_SEMOP, "semtimedop": unix.SYS_SEMTIMEDOP, "semctl": unix.SYS_SEMCTL,
		"shmget": unix.SYS_SHMGET, "shmat": unix.SYS_SHMAT, "shmdt": unix.SYS_SHMDT, "shmctl": unix.SYS_SHMCTL,
		"clone": unix.SYS_CLONE, "clone3": unix.SYS_CLONE3, "socket": unix.SYS_SOCKET,
	}
}
