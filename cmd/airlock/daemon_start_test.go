package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The daemon says "running" only once it answers: a start that fails after opening the
// database (here: a regular file where its socket goes) prints the failure alone, in
// both forms.
func TestDaemonAnnouncesOnlyWhenAnswering(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		running string // what an early announcement looks like
		failure string
	}{
		{"human", []string{"daemon"}, "running as pid", "exists and is not a socket"},
		{"json", []string{"daemon", "--json"}, `"running":true`, `"running":false`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newInstance(t)
			run := filepath.Join(in.home, "run")
			if err := os.MkdirAll(run, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(run, "airlock.sock"), []byte("not a socket\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := in.run(tc.args...)
			if code == 0 || strings.Contains(stderr, tc.running) || !strings.Contains(stderr, tc.failure) || !strings.Contains(stderr, "move it away") {
				t.Fatalf("exit %d, stderr:\n%s\nwant the failure (%q) with the way out, and no %q", code, stderr, tc.failure, tc.running)
			}
		})
	}
}

// A socket replaced by a regular file while the daemon runs: the CLI says what it found,
// that a core runs (its pid) and the way out, never that no core runs.
func TestSocketReplacedByAFile(t *testing.T) {
	in := newInstance(t)
	d := in.startDaemon()
	sock := filepath.Join(in.home, "run", "airlock.sock")
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sock, []byte("not a socket\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := in.run("status")
	for _, want := range []string{fmt.Sprintf("an Airlock core runs (pid %d)", d.Process.Pid), "is a regular file, not its socket", "mv " + sock, "kill -TERM"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("status: exit %d, %q does not say %q", code, stderr, want)
		}
	}
	if code == 3 || strings.Contains(stderr, "no Airlock app or daemon is running") {
		t.Fatalf("status says no core runs while one does (exit %d): %s", code, stderr)
	}
	// The way out works: move the file, restart.
	os.Rename(sock, sock+".moved")
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	in.startDaemon()
}
