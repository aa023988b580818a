// Package vartmp gives tests a directory under /var/tmp: what a sandbox sees of the host
// (every sandbox has a /tmp of its own, which would hide a directory made there).
package vartmp

import (
	"os"
	"testing"
)

// Dir is a fresh directory under /var/tmp named after prefix, removed when the test ends.
func Dir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
