package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandLineWarnsAsTheWindowDoes: the red lines the window draws are printed by the
// command line too: full access with approval never and a home-directory working
// directory (airlock exec, airlock check, airlock task add), and a shell tool set to P0
// in config.toml (airlock exec, airlock check, airlock config show).
func TestCommandLineWarnsAsTheWindowDoes(t *testing.T) {
	home, err := os.MkdirTemp("/var/tmp", "airlock-warn-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	const dangerous = "Full access with approval never: this command may change anything your user can"
	const inHome = "Runs in your home directory"
	const bashP0 = "bash is P0: every shell command it runs runs without asking you"

	in := newInstance(t)
	in.env = append(in.env, "HOME="+home)
	in.writeConfig("sandbox_mode = \"full-access\"\napproval_policy = \"never\"\n[permission.tiers]\nbash = \"P0\"\n")
	_, stderr, code := in.run("exec", "--cwd", home, "--", "true")
	if code != 0 {
		t.Fatalf("exec: exit %d: %s", code, stderr)
	}
	for _, want := range []string{dangerous, inHome, bashP0} {
		if !strings.Contains(stderr, "airlock: warning: "+want) {
			t.Errorf("airlock exec does not warn %q:\n%s", want, stderr)
		}
	}
	out, _, _ := in.run("check", "--cwd", home, "--", "ls")
	for _, want := range []string{dangerous, inHome, bashP0} {
		if !strings.Contains(out, "WARNING   "+want) {
			t.Errorf("airlock check does not warn %q:\n%s", want, out)
		}
	}
	out, _, _ = in.run("config", "show")
	if !strings.Contains(out, "WARNING: "+bashP0) {
		t.Errorf("airlock config show does not warn about bash at P0:\n%s", out)
	}

	// A sandboxed command elsewhere, with the tiers' defaults: no warning.
	work := filepath.Join(home, "work")
	os.MkdirAll(work, 0o755)
	in.writeConfig("sandbox_mode = \"workspace-write\"\n")
	_, stderr, code = in.run("exec", "--cwd", work, "--", "true")
	if code != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("exec in workspace-write: exit %d, stderr %q", code, stderr)
	}

	// A task in the home directory: the core's red line, printed by task add.
	in.startDaemon()
	out, stderr, code = in.run("task", "add", "--name", "at-home", "--cwd", home, "--schedule", "@daily", "--", "true")
	if code != 0 || !strings.Contains(out, "WARNING    "+inHome) {
		t.Errorf("task add in the home directory: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}
