package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testPolicy resolves a workspace-write policy in a fresh temp dir with an outside dir next to it.
func testPolicy(t testing.TB, mode string, network bool) (Policy, string) {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Resolve(Inputs{Cwd: ws, Home: filepath.Join(base, "home"), Env: envMap(nil), Flags: Layer{Mode: &mode, Network: netp(network)}})
	if err != nil {
		t.Fatal(err)
	}
	return p, outside
}

func TestCheckWrite(t *testing.T) {
	p, outside := testPolicy(t, "workspace-write", false)
	ws := p.Cwd
	os.Symlink(outside, filepath.Join(ws, "escape"))
	os.Symlink("../outside", filepath.Join(ws, "rel-escape"))
	os.Symlink(filepath.Join(ws, ".git"), filepath.Join(ws, "gitlink"))
	os.Symlink(filepath.Join(ws, "sub"), filepath.Join(ws, "sublink"))
	tests := []struct {
		path    string
		allowed bool
		why     string
	}{
		{"file.txt", true, ""},
		{"sub/new/deep.txt", true, ""},
		{ws + "/x", true, ""},
		{"sublink/ok", true, ""},
		{"/dev/null", true, ""},
		{"../outside/x", false, "outside the writable roots"},
		{"sub/../../outside/x", false, "outside the writable roots"},
		{"escape/x", false, "outside the writable roots"},
		{"rel-escape/x", false, "outside the writable roots"},
		{"sublink/../../outside/x", false, "outside the writable roots"},
		{"/etc/passwd", false, "outside"},
		{"~/.bashrc", false, "outside"},
		{"/tmp/x", false, "outside"},
		{".git/config", false, "protected"},
		{".git/hooks/pre-commit", false, "protected"},
		{".git", false, "protected"},
		{".airlock/policy.toml", false, "protected"},
		{"sub/.git/config", false, "protected"},
		{"gitlink/config", false, "protected"},
		{"./.git/../.git/x", false, "protected"},
	}
	for _, tt := range tests {
		err := p.CheckWrite(tt.path)
		if tt.allowed != (err == nil) {
			t.Errorf("CheckWrite(%q) = %v, want allowed=%v", tt.path, err, tt.allowed)
			continue
		}
		if err != nil {
			d, ok := IsDenied(err)
			if !ok || d.Reason != ReasonWrite || !strings.Contains(err.Error(), tt.why) || d.Hint == "" {
				t.Errorf("CheckWrite(%q) = %v, want a write denial mentioning %q", tt.path, err, tt.why)
			}
		}
	}
}

func TestCheckWriteModes(t *testing.T) {
	ro, _ := testPolicy(t, "read-only", false)
	if err := ro.CheckWrite("file.txt"); err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "workspace-write") {
		t.Errorf("read-only write = %v", err)
	}
	if err := ro.CheckWrite("/dev/null"); err != nil {
		t.Errorf("read-only /dev/null = %v", err)
	}
	full, outside := testPolicy(t, "full-access", false)
	for _, path := range []string{"/etc/passwd", ".git/config", outside} {
		if err := full.CheckWrite(path); err != nil {
			t.Errorf("full-access CheckWrite(%q) = %v", path, err)
		}
	}
}

func TestCheckNetworkAndRead(t *testing.T) {
	off, _ := testPolicy(t, "workspace-write", false)
	err := off.CheckNetwork("example.com")
	if d, ok := IsDenied(err); !ok || d.Reason != ReasonNetwork || !strings.Contains(err.Error(), "network_access") {
		t.Errorf("CheckNetwork off = %v", err)
	}
	on, _ := testPolicy(t, "workspace-write", true)
	if err := on.CheckNetwork("example.com"); err != nil {
		t.Errorf("CheckNetwork on = %v", err)
	}
	off.Hidden = []string{"/run/user/0/airlock"}
	if err := off.CheckRead("/run/user/0/airlock/airlock.sock"); err == nil {
		t.Error("hidden socket readable")
	}
	if err := off.CheckRead("/etc/passwd"); err != nil {
		t.Errorf("reading /etc/passwd: %v", err)
	}
}

func TestDeniedErrorMessage(t *testing.T) {
	e := &IsolationDeniedError{Reason: ReasonWrite, Path: "/etc/x", Command: "echo > /etc/x", Why: "it is outside", Hint: "add it"}
	want := "sandbox denied write of /etc/x (in `echo > /etc/x`): it is outside; add it"
	if e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
}
