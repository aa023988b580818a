package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecHidesStateAndKeepsTheProject: `airlock exec` (the real binary) hides
// Airlock's database, config and run logs from the command, and applies the project
// policy file of its working directory.
func TestExecHidesStateAndKeepsTheProject(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	// Not under /tmp: every sandbox gets a fresh /tmp, which would hide it anyway.
	base, err := os.MkdirTemp("/var/tmp", "airlock-exec-seams-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	in := newInstance(t)
	in.home = filepath.Join(base, "airlock")
	in.startDaemon()
	db := filepath.Join(in.home, "data", "airlock.db")
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("no database to hide: %v", err)
	}
	ws := filepath.Join(base, "ws")
	os.MkdirAll(filepath.Join(ws, ".airlock"), 0o755)
	out, stderr, code := in.run("exec", "--cwd", ws, "--", "sh", "-c",
		"head -c 15 "+db+"; ls -A "+filepath.Join(in.home, "data")+" "+filepath.Join(in.home, "config")+"; true")
	if code != 0 || strings.Contains(out, "SQLite format") || strings.Contains(out, "airlock.db") || strings.Contains(out, "config.toml") {
		t.Fatalf("exec read Airlock's state (exit %d): %q %q", code, out, stderr)
	}
	// The project file of the working directory holds: read-only, secret.txt protected.
	os.WriteFile(filepath.Join(ws, ".airlock", "policy.toml"), []byte("sandbox_mode = \"read-only\"\n[isolation]\nprotected = [\"secret.txt\"]\n"), 0o644)
	if _, stderr, code := in.run("exec", "--cwd", ws, "--", "sh", "-c", "echo x > new.txt"); code == 0 || !strings.Contains(stderr, "Read-only file system") {
		t.Fatalf("exec under the project's read-only: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Fatal("exec wrote under the project's read-only")
	}
	// A flag cannot loosen what the project tightened.
	if _, stderr, code := in.run("exec", "--sandbox", "workspace-write", "--cwd", ws, "--", "sh", "-c", "echo x > secret.txt"); code == 0 {
		t.Fatalf("exec --sandbox workspace-write over the project: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "secret.txt")); err == nil {
		t.Fatal("exec wrote the project's protected file")
	}
}
