package agentcmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-app/airlock/app/paths"
)

// TestBashSandboxOffWaitsForThePerson: a same-user edit of config.toml that turns the
// Bash sandbox off is a loosening like any other: once Airlock has a database (a core has
// run), the hook keeps confining Claude Code's Bash until the person confirms the file.
// On a new installation the file is the person's own and is taken as written.
func TestBashSandboxOffWaitsForThePerson(t *testing.T) {
	for _, tt := range []struct {
		name       string
		coreHasRun bool
		unconfined bool
	}{
		{"a new installation takes the file", false, true},
		{"a later edit waits", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			e := &env{getenv: func(k string) string {
				if k == "AIRLOCK_HOME" {
					return home
				}
				return ""
			}}
			p, err := paths.Resolve(e.getenv)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{filepath.Dir(p.ConfigFile), p.DataDir} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if tt.coreHasRun {
				// A database and no kept configuration: the defaults are in force.
				if err := os.WriteFile(p.Database, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(p.ConfigFile, []byte("[hooks]\nclaude_bash_sandbox = false\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// Confined, the hook would run `airlock` beside this test binary, which is not
			// there (b.Err says so): either way the command is not let run on the host.
			b := bashSandbox(e, "", false)
			if b.Unconfined != tt.unconfined {
				t.Fatalf("Unconfined = %v, want %v", b.Unconfined, tt.unconfined)
			}
		})
	}
}
