package cli

import (
	"bytes"
	"testing"
)

// The hot commands (exec, check) are built alone, and are the same commands as in the
// full tree: the same flags, usage and help.
func TestHotCommandBuildsOnlyItself(t *testing.T) {
	getenv := func(string) string { return "" }
	full := NewRoot(&bytes.Buffer{}, &bytes.Buffer{}, getenv)
	tests := []struct {
		args []string
		hot  string
	}{
		{[]string{"exec", "--", "/bin/true"}, "exec"},
		{[]string{"exec", "--network", "--", "curl", "x"}, "exec"},
		{[]string{"check", "rm -rf /"}, "check"},
		{[]string{"--json", "check", "ls"}, ""}, // a global flag first: the full tree
		{[]string{"status"}, ""},
		{[]string{"help", "exec"}, ""},
		{[]string{"__complete", "exec", ""}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		got := hotCommand(tt.args)
		if got != tt.hot {
			t.Errorf("hotCommand(%q) = %q, want %q", tt.args, got, tt.hot)
			continue
		}
		if got == "" {
			continue
		}
		root := newRoot(&bytes.Buffer{}, &bytes.Buffer{}, getenv, got)
		if n := len(root.Commands()); n != 1 || root.Commands()[0].Name() != got {
			t.Errorf("root for %q holds %d commands, want only %s", tt.args, n, got)
			continue
		}
		hot, _, err := root.Find([]string{got})
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := full.Find([]string{got})
		if err != nil {
			t.Fatal(err)
		}
		if hot.UsageString() != want.UsageString() || hot.Long != want.Long {
			t.Errorf("%s alone differs from %s in the full tree:\n%s\n--- full tree:\n%s", got, got, hot.UsageString(), want.UsageString())
		}
	}
}

// Run through the hot root keeps the exit codes: a wrong flag is a usage error, a
// command that fails passes its code through.
func TestHotCommandExitCodes(t *testing.T) {
	if hotCommand([]string{"exec"}) == "" {
		t.Fatal("exec is not on the hot path")
	}
	dir := t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME":
			return dir
		}
		return ""
	}
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"exec", "--bogus", "--", "true"}, ExitUsage},
		{[]string{"exec"}, ExitUsage},
		{[]string{"exec", "--sandbox", "nonsense", "--", "true"}, 125},
		{[]string{"check", "--bogus", "ls"}, ExitUsage},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		root := newRoot(&out, &errb, getenv, hotCommand(tt.args))
		if code := Run(t.Context(), root, tt.args, &errb); code != tt.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tt.args, code, tt.code, errb.String())
		}
	}
}
