//go:build linux && !amd64 && !arm64

package sandbox

// On other architectures no filter is built: Exec fails closed with the error
// from seccompInstructions.
func syscallNumbers() map[string]uint32 { return nil }

const auditArch = 0

const x32Bit = 0
