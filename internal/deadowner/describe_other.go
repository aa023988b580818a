//go:build !unix

package deadowner

// describeNoProc cannot look on this platform.
func describeNoProc(int) string { return "cannot be looked at on this platform" }
