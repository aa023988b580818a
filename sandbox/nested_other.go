//go:build !linux

package sandbox

// Enclosing reports whether this process runs inside an Airlock bubblewrap sandbox, and
// that sandbox's network_access: never, where there is no bubblewrap.
func Enclosing() (NetworkMode, bool) { return "", false }
