package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// TestClaudeBashUnconfinedIsRed: `airlock status` and `airlock config show` say where
// the hook runs Claude Code's Bash, in capitals when config.toml leaves it unconfined.
func TestClaudeBashUnconfinedIsRed(t *testing.T) {
	for _, tt := range []struct {
		name, config, where string
		red                 bool
	}{
		{"absent", "", "sandbox", false},
		{"on", "[hooks]\nclaude_bash_sandbox = true\n", "sandbox", false},
		{"off", "[hooks]\nclaude_bash_sandbox = false\n", "unconfined", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.config != "" {
				os.MkdirAll(filepath.Join(home, "config"), 0o700)
				if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(tt.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			e := &env{getenv: func(k string) string {
				if k == "AIRLOCK_HOME" {
					return home
				}
				return ""
			}}
			where, warning := e.claudeBash()
			var out bytes.Buffer
			printStatus(&out, api.Status{}, warning)
			line := ""
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(l, "claude bash") {
					line = l
				}
			}
			if where != tt.where || strings.Contains(line, "UNCONFINED") != tt.red {
				t.Fatalf("claudeBash = %q; status line %q", where, line)
			}
			view, err := localConfigView(context.Background(), e)
			if err != nil {
				t.Fatal(err)
			}
			shown := strings.Join(view.Warnings, "\n")
			if strings.Contains(shown, "UNCONFINED") != tt.red {
				t.Fatalf("config show warnings: %q", view.Warnings)
			}
			for _, s := range view.Settings {
				if s.Key == "hooks.claude_bash_sandbox" && s.Value != !tt.red {
					t.Fatalf("config show: %s = %v", s.Key, s.Value)
				}
			}
		})
	}
}

// TestExecGrantWritable: exec's --grant-writable makes exactly that path writable for
// the command (what the hook passes on when a person allowed an escalation once), and
// refuses a hidden one.
func TestExecGrantWritable(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	base, err := os.MkdirTemp("/var/tmp", "airlock-grant-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	home, ws, other := filepath.Join(base, "home"), filepath.Join(base, "ws"), filepath.Join(base, "other")
	for _, d := range []string{filepath.Join(home, ".ssh"), ws, other} {
		os.MkdirAll(d, 0o755)
	}
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "AIRLOCK_HOME":
			return filepath.Join(home, ".airlock")
		case "PATH":
			return os.Getenv("PATH")
		}
		return ""
	}
	run := func(args ...string) error {
		root := NewRoot(&bytes.Buffer{}, &bytes.Buffer{}, getenv)
		root.SetArgs(append([]string{"exec", "--sandbox=workspace-write", "--network=off", "--cwd", ws}, args...))
		return root.ExecuteContext(context.Background())
	}
	target := filepath.Join(other, "x")
	if err := run("--", "touch", target); err == nil {
		t.Fatal("a write outside the workspace ran without a grant")
	}
	if err := run("--grant-writable", other, "--", "touch", target); err != nil {
		t.Fatalf("with --grant-writable %s: %v", other, err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the granted write did not land: %v", err)
	}
	if err := run("--grant-writable", filepath.Join(home, ".ssh"), "--", "true"); err == nil || !strings.Contains(err.Error(), "stays hidden") {
		t.Fatalf("a grant of a hidden path: %v", err)
	}
}
