package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A read-only run whose working directory is under the host's /tmp (hidden by the
// sandbox's private /tmp) still starts there and reads it, and still cannot write.
func TestReadOnlyRunInHostTmp(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed")
	}
	dir, err := os.MkdirTemp("/tmp", "airlock-ro-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "f"), []byte("hello\n"), 0o644)
	mode := "read-only"
	p, err := Resolve(Inputs{Flags: Layer{Mode: &mode}, Cwd: dir, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"sh", "-c", "pwd; cat f; echo x > g"}, Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatalf("exec: %v (%s)", err, errb.String())
	}
	if got := out.String(); !strings.Contains(got, dir) || !strings.Contains(got, "hello") {
		t.Fatalf("stdout %q, stderr %q", got, errb.String())
	}
	if res.ExitCode == 0 {
		t.Fatal("the write must fail in read-only mode")
	}
	if _, err := os.Stat(filepath.Join(dir, "g")); err == nil {
		t.Fatal("a read-only run wrote g on the host")
	}
}
