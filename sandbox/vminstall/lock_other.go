//go:build !unix

package vminstall

// lockDir is a no-op where flock does not exist; the in-process single install still holds.
func lockDir(string) (func(), error) { return func() {}, nil }
