package gateway

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenResolved: both ways of opening (openat2, and component by component where
// openat2 is missing) open a resolved path and refuse one that holds a link anywhere.
func TestOpenResolved(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a", "b", "f"), []byte("content"), 0o644))
	must(os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "dirlink")))
	must(os.Symlink(filepath.Join(dir, "a", "b", "f"), filepath.Join(dir, "filelink")))
	for name, open := range map[string]func(string, int) (*os.File, error){
		"openat2": openResolved,
		"by components": func(p string, fl int) (*os.File, error) {
			return openByComponents(p, fl|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
		},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := open(filepath.Join(dir, "a", "b", "f"), syscall.O_RDONLY)
			must(err)
			got, _ := io.ReadAll(f)
			f.Close()
			if string(got) != "content" {
				t.Fatalf("read %q", got)
			}
			for _, p := range []string{filepath.Join(dir, "dirlink", "b", "f"), filepath.Join(dir, "filelink")} {
				f, err := open(p, syscall.O_RDONLY)
				if err == nil {
					f.Close()
					t.Fatalf("%s was opened through a link", p)
				}
				if !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) {
					t.Fatalf("%s: %v; want ELOOP or ENOTDIR", p, err)
				}
			}
			d, err := open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY)
			must(err)
			d.Close()
		})
	}
}
