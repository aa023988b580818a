//go:build !unix

package ops

// dirIdentity is empty where the platform has no device and inode: not pinned there.
func dirIdentity(string) (string, error) { return "", nil }
