package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startDaemonLogged starts the daemon with its log in a file, and returns the file's path.
func (in *instance) startDaemonLogged() string {
	in.t.Helper()
	log := filepath.Join(in.t.TempDir(), "daemon.log")
	f, err := os.Create(log)
	if err != nil {
		in.t.Fatal(err)
	}
	d := in.cmd("daemon")
	d.Stdout, d.Stderr = f, f
	if err := d.Start(); err != nil {
		in.t.Fatal(err)
	}
	f.Close()
	in.t.Cleanup(func() {
		d.Process.Kill()
		d.Wait()
	})
	in.waitStatus(func(st map[string]any) bool { return st["running"] == true && st["sandbox"] != nil })
	return log
}

// sandboxLine is the sandbox line of `airlock status` (and the way-out line under it).
func (in *instance) sandboxLine() string {
	in.t.Helper()
	out, errOut, code := in.run("status")
	if code != 0 {
		in.t.Fatalf("airlock status: exit %d: %s%s", code, out, errOut)
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "sandbox ") || (len(lines) > 0 && strings.HasPrefix(strings.TrimSpace(l), "way out:")) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// waitSandboxLine waits for `airlock status`'s sandbox line to start with prefix (after
// "sandbox"): the core re-reads config.toml when it changes.
func (in *instance) waitSandboxLine(prefix string) string {
	in.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		line := in.sandboxLine()
		if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(line, "sandbox")), prefix) {
			return line
		}
		if time.Now().After(deadline) {
			in.t.Fatalf("the sandbox line never became %q; last:\n%s", prefix, line)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStatusLineIsRedUnderFullAccess: `airlock status` says GREEN bubblewrap while every
// promise holds, RED "not sandboxed" as soon as full-access is in force (with the way
// out), and green again when it is taken back. The footer and the tray show the same
// indicator (sandbox.Indicate). full-access written into config.toml waits for the
// person: until confirmed, the status says what waits and stays green.
func TestStatusLineIsRedUnderFullAccess(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("needs bubblewrap")
	}
	in := newInstance(t)
	password := in.pamProof("")
	approvals := in.approvalsSection()
	in.writeConfig("sandbox_mode = \"workspace-write\"\n" + approvals)
	in.startDaemonLogged()
	if line := in.waitSandboxLine("GREEN"); !strings.Contains(line, "GREEN bubblewrap") {
		t.Skipf("this machine's sandbox is not all green, so the test cannot see it turn red and back:\n%s", line)
	}
	in.writeConfig("sandbox_mode = \"full-access\"\n" + approvals)
	in.waitStatus(func(st map[string]any) bool { return st["config"].(map[string]any)["pending"] != nil })
	if out, _, _ := in.run("status"); !strings.Contains(out, "WAITING FOR YOU") || !strings.Contains(out, "sandbox_mode") || !strings.Contains(out, "GREEN bubblewrap") {
		t.Fatalf("full-access written into config.toml took effect, or nothing says it waits:\n%s", out)
	}
	in.confirmWaiting(password)
	line := in.waitSandboxLine("RED not sandboxed")
	for _, want := range []string{"sandbox_mode is full-access", "config.toml", `way out: set sandbox_mode = "workspace-write"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the red line does not say %q:\n%s", want, line)
		}
	}
	in.writeConfig("sandbox_mode = \"read-only\"\n" + approvals)
	in.waitSandboxLine("GREEN bubblewrap")
}

// TestStartupWarningWithoutBubblewrap: a daemon started where bwrap is not in PATH says
// so at start-up in its log, with the way out, and `airlock status` is not green.
func TestStartupWarningWithoutBubblewrap(t *testing.T) {
	in := newInstance(t)
	in.env = append(in.env, "PATH="+t.TempDir()) // no bwrap, no slirp4netns
	log := in.startDaemonLogged()
	line := in.sandboxLine()
	if strings.Contains(line, "GREEN") || !strings.Contains(line, "bubblewrap is missing") && !strings.Contains(line, "no OS sandbox") {
		t.Errorf("airlock status without bubblewrap:\n%s", line)
	}
	if !strings.Contains(line, "way out: install bubblewrap: apt install bubblewrap") {
		t.Errorf("the status line offers no way out:\n%s", line)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		text := string(b)
		if (strings.Contains(text, "WARN sandbox: ") || strings.Contains(text, "ERROR sandbox: ")) && strings.Contains(text, "apt install bubblewrap") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon's log has no start-up warning about the sandbox:\n%s", text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
