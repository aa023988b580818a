package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecAppBackendFromTheCLI: `airlock exec --backend app` has no OS sandbox, so the
// application layer's verdict is enforced: a write it denies is refused with 122, a
// command it cannot see into (a python one-liner) with 125 and the way out, and nothing
// is written outside the working directory; a command it fully accounts for runs.
func TestExecAppBackendFromTheCLI(t *testing.T) {
	in := newInstance(t)
	base, err := os.MkdirTemp("/var/tmp", "airlock-exec-app-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "file.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpOut, err := os.MkdirTemp("/tmp", "airlock-exec-app-outside-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmpOut)
	for _, tc := range []struct {
		name string
		argv []string
		code int
		// stderr must hold every one of these.
		stderr []string
	}{
		{"redirect to /tmp", []string{"sh", "-c", "echo x > " + filepath.Join(tmpOut, "outside")}, 122, []string{"sandbox denied write", "outside the writable roots"}},
		{"touch ..", []string{"touch", "../outside"}, 122, []string{"sandbox denied write"}},
		{"python one-liner", []string{"python3", "-c", "open('../outside', 'w').write('x')"}, 125,
			[]string{"python3", "does not model", "--backend auto", "apt install bubblewrap"}},
		{"python in a shell", []string{"sh", "-c", "python3 -c \"open('" + filepath.Join(tmpOut, "outside") + "', 'w')\""}, 125,
			[]string{"--backend auto", "apt install bubblewrap"}},
		{"ls", []string{"ls"}, 0, []string{"application layer checks everything it does"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := in.run(append([]string{"exec", "--backend", "app", "--cwd", ws, "--"}, tc.argv...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, out, stderr)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q: %q", s, stderr)
				}
			}
			if tc.code == 0 && out != "file.txt\n" {
				t.Errorf("ls printed %q", out)
			}
			for _, p := range []string{outside, filepath.Join(tmpOut, "outside")} {
				if _, err := os.Lstat(p); err == nil {
					t.Fatalf("ESCAPE: %s was written outside the working directory", p)
				}
			}
		})
	}
}
