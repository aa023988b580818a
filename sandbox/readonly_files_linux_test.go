package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ReadOnlyFiles are bound read-only into the sandbox's private /tmp, from a source the
// sandbox itself cannot see (a hidden directory); a backend that cannot place them refuses.
func TestReadOnlyFilesArePlacedInThePrivateTmp(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed")
	}
	root, err := os.MkdirTemp("/var/tmp", "airlock-rofiles-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	work, state := filepath.Join(root, "work"), filepath.Join(root, "state")
	os.Mkdir(work, 0o755)
	os.Mkdir(state, 0o700)
	src := filepath.Join(state, "copy")
	os.WriteFile(src, []byte("approved\n"), 0o400)
	mode := "workspace-write"
	p, err := Resolve(Inputs{Flags: Layer{Mode: &mode}, Cwd: work, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	files := []ReadOnlyFile{{Source: src, Target: "/tmp/.in/abc/migrate.sql"}}
	var out, errb bytes.Buffer
	res, err := Exec(context.Background(), ExecRequest{Policy: p, HiddenPaths: []string{state}, ReadOnlyFiles: files,
		Argv:   []string{"sh", "-c", "cat /tmp/.in/abc/migrate.sql; echo x >> /tmp/.in/abc/migrate.sql; cat " + src},
		Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatalf("exec: %v (%s)", err, errb.String())
	}
	if out.String() != "approved\n" || res.ExitCode == 0 {
		t.Fatalf("stdout %q, stderr %q, exit %d: want the copy readable, not writable, and its source hidden", out.String(), errb.String(), res.ExitCode)
	}
	if b, _ := os.ReadFile(src); string(b) != "approved\n" {
		t.Fatalf("the source changed: %q", b)
	}

	for name, bad := range map[string]ReadOnlyFile{
		"target outside /tmp": {Source: src, Target: filepath.Join(work, "migrate.sql")},
		"target /tmp itself":  {Source: src, Target: "/tmp"},
		"relative source":     {Source: "copy", Target: "/tmp/x"},
		"unclean target":      {Source: src, Target: "/tmp/a/../../etc/x"},
	} {
		_, err := Exec(context.Background(), ExecRequest{Policy: p, ReadOnlyFiles: []ReadOnlyFile{bad}, Argv: []string{"true"}})
		var ee *ExecError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), "under /tmp") {
			t.Errorf("%s: %v", name, err)
		}
	}

	if landlockAvailable() {
		old := forcedBackend
		forcedBackend = BackendNameLandlock
		defer func() { forcedBackend = old }()
		_, err := Exec(context.Background(), ExecRequest{Policy: p, ReadOnlyFiles: files, Argv: []string{"true"}})
		if !errors.Is(err, ErrCannotPlaceFiles) {
			t.Fatalf("landlock with files to place: %v", err)
		}
	}
	full := p
	full.Mode = ModeFullAccess
	if _, err := Exec(context.Background(), ExecRequest{Policy: full, ReadOnlyFiles: files, Argv: []string{"true"}}); !errors.Is(err, ErrCannotPlaceFiles) {
		t.Fatalf("full access with files to place: %v", err)
	}
}
