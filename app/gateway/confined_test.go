package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfinedOpenSymlinkSwap plays the race the policy check alone loses: the path was
// checked, then the agent's own bash swapped a symlink in. The open must stay inside.
func TestConfinedOpenSymlinkSwap(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Server{opts: Options{Policy: testPolicy(t, ws)}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(ws, "dirlink")))
	must(os.Symlink(secret, filepath.Join(ws, "filelink")))
	must(os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	must(os.WriteFile(filepath.Join(ws, "real.txt"), nil, 0o644))
	must(os.Symlink(filepath.Join(ws, "real.txt"), filepath.Join(ws, "inside-link")))

	for _, tc := range []struct {
		path   string
		create bool
	}{
		{filepath.Join(ws, "dirlink", "new"), true},
		{filepath.Join(ws, "dirlink", "sub", "new"), true},
		{filepath.Join(ws, "filelink"), false},
		{filepath.Join(ws, "filelink"), true},
		{filepath.Join(ws, ".git", "config"), true},
		{filepath.Join(ws, "..", filepath.Base(outside), "x"), true},
	} {
		f, err := s.confinedOpen(s.opts.Policy)(tc.path, tc.create)
		if err == nil {
			f.Close()
			t.Errorf("confinedOpen(%s) escaped", tc.path)
			continue
		}
		if !strings.Contains(err.Error(), "isolation error") {
			t.Errorf("confinedOpen(%s): %v; want an isolation error", tc.path, err)
		}
	}
	if got, _ := os.ReadFile(secret); string(got) != "keep" {
		t.Fatalf("the file outside changed: %q", got)
	}
	for _, name := range []string{"new", "sub", "x"} {
		if _, err := os.Lstat(filepath.Join(outside, name)); err == nil {
			t.Fatalf("%s was created outside the workspace", name)
		}
	}
	// Inside the root, symlinks that stay inside are fine, and directories are created.
	if err := writeFile(s.confinedOpen(s.opts.Policy), filepath.Join(ws, "inside-link"), "ok"); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(s.confinedOpen(s.opts.Policy), filepath.Join(ws, "a", "b", "c.txt"), "ok"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "real.txt")); string(got) != "ok" {
		t.Fatalf("real.txt = %q", got)
	}
}
