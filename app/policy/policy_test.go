package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/sandbox"
)

func TestProjectPolicyAboveTheCwdTightens(t *testing.T) {
	repo := t.TempDir()
	sub := filepath.Join(repo, "pkg", "inner")
	if err := os.MkdirAll(filepath.Join(repo, ".airlock"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(sub, 0o755)
	// The checkout asks for read-only (tighter: applied) and network on (looser: ignored).
	os.WriteFile(filepath.Join(repo, ".airlock", "policy.toml"), []byte("sandbox_mode = \"read-only\"\n[sandbox_workspace_write]\nnetwork_access = true\n"), 0o644)
	f, err := config.Parse("config.toml", []byte("sandbox_mode = \"workspace-write\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": t.TempDir()}
	r, err := Resolve(Inputs{File: f, FilePath: "config.toml", Getenv: func(k string) string { return env[k] }, Cwd: sub})
	p := r.Sandbox
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != sandbox.ModeReadOnly || p.Network != sandbox.NetworkOff {
		t.Fatalf("mode %s network %v: the project file must tighten and never loosen", p.Mode, p.Network)
	}
	// Trusted explicitly from the environment, the network request applies.
	env["AIRLOCK_TRUST_PROJECT_CONFIG"] = "1"
	f2, _ := config.Parse("config.toml", []byte(""))
	r, err = Resolve(Inputs{File: f2, FilePath: "config.toml", Getenv: func(k string) string { return env[k] }, Cwd: repo})
	p = r.Sandbox
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != sandbox.ModeReadOnly {
		t.Fatalf("trusted project: mode %s", p.Mode)
	}
}

// config.toml is checked (with positions) before the sandbox parses it: both must
// accept exactly the same spellings.
func TestConfigChoicesAgreeWithTheSandbox(t *testing.T) {
	for _, v := range []string{"read-only", "workspace-write", "full-access", "danger-full-access", "readonly", "bogus"} {
		_, cfgErr := config.Parse("c.toml", []byte("sandbox_mode = \""+v+"\"\n"))
		_, sbErr := sandbox.ParseMode(v)
		if (cfgErr == nil) != (sbErr == nil) {
			t.Errorf("sandbox_mode %q: config says %v, sandbox says %v", v, cfgErr, sbErr)
		}
	}
	for _, v := range []string{"auto", "os", "app", "bwrap"} {
		_, cfgErr := config.Parse("c.toml", []byte("[isolation]\nbackend = \""+v+"\"\n"))
		_, sbErr := sandbox.ParseBackend(v)
		if (cfgErr == nil) != (sbErr == nil) {
			t.Errorf("backend %q: config says %v, sandbox says %v", v, cfgErr, sbErr)
		}
	}
	for _, v := range []string{"local", "sandbox", "auto", "vm"} {
		_, cfgErr := config.Parse("c.toml", []byte("execution_mode = \""+v+"\"\n"))
		_, sbErr := sandbox.ParseExecutionMode(v)
		if (cfgErr == nil) != (sbErr == nil) {
			t.Errorf("execution_mode %q: config says %v, sandbox says %v", v, cfgErr, sbErr)
		}
	}
}
