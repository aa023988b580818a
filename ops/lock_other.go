//go:build !unix

package ops

// lockFile is a no-op where flock is not available: the service's own mutex still orders
// its appends.
func lockFile(string) (func(), error) { return func() {}, nil }
