//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// auditArch is the seccomp_data.arch value of native system calls.
const auditArch = unix.AUDIT_ARCH_AARCH64

// x32Bit is zero: arm64 has no x32-like ABI to refuse.
const x32Bit = 0
