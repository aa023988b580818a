package realpath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestKernelAgrees: Resolve gives up exactly where the kernel does, and lands where the
// kernel lands.
func TestKernelAgrees(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(ws, "self")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		loop bool
	}{
		{"chain of 40", chain(t, filepath.Join(base, "c40"), "../ws", MaxLinks), false},
		{"chain of 41", chain(t, filepath.Join(base, "c41"), "../ws", MaxLinks+1), true},
		{"40 along the path", ws + strings.Repeat("/self", MaxLinks), false},
		{"41 along the path", ws + strings.Repeat("/self", MaxLinks+1), true},
		{"39 along the path after a chain of 1", chain(t, filepath.Join(base, "c1"), "../ws", 1) + strings.Repeat("/self", MaxLinks-1), false},
		{"40 along the path after a chain of 1", chain(t, filepath.Join(base, "c1b"), "../ws", 1) + strings.Repeat("/self", MaxLinks), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kernelErr := syscall.Access(tc.path, 0)
			got, _, err := Resolve(tc.path, Options{})
			if errors.Is(kernelErr, syscall.ELOOP) != tc.loop || errors.Is(err, syscall.ELOOP) != tc.loop {
				t.Fatalf("kernel: %v; Resolve: %q, %v", kernelErr, got, err)
			}
			if err == nil && got != ws {
				t.Fatalf("Resolve = %q, the kernel opens %s", got, ws)
			}
		})
	}
}
