//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// auditArch is the seccomp_data.arch value of native system calls.
const auditArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks x32-ABI system call numbers, which the filter refuses.
const x32Bit = 0x40000000
