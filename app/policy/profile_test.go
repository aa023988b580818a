package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/sandbox"
)

// A profile is one layer at each level, just beneath the keys of that level:
// default < config profile < config keys < AIRLOCK_PROFILE < env keys < --profile < flags.
func TestProfileLayersOrder(t *testing.T) {
	ro, ww := "read-only", "workspace-write"
	cases := []struct {
		name      string
		file      string
		env       map[string]string
		flagProf  string
		flagMode  *string
		want      sandbox.Mode
		wantLayer string
		detail    string
	}{
		{name: "nothing", want: sandbox.ModeWorkspaceWrite, wantLayer: sandbox.LayerDefault},
		{name: "config profile", file: `profile = "read-only"`, want: sandbox.ModeReadOnly, wantLayer: sandbox.LayerProfile, detail: "profile read-only (config"},
		{name: "config key over config profile", file: "profile = \"read-only\"\nsandbox_mode = \"workspace-write\"", want: sandbox.ModeWorkspaceWrite, wantLayer: sandbox.LayerFile},
		{name: "env profile over config key", file: `sandbox_mode = "workspace-write"`, env: map[string]string{config.EnvProfile: "read-only"}, want: sandbox.ModeReadOnly, wantLayer: sandbox.LayerProfile, detail: "env AIRLOCK_PROFILE"},
		{name: "env key over env profile", env: map[string]string{config.EnvProfile: "read-only", sandbox.EnvSandboxMode: "workspace-write"}, want: sandbox.ModeWorkspaceWrite, wantLayer: sandbox.LayerEnv},
		{name: "flag profile over env key", env: map[string]string{sandbox.EnvSandboxMode: "workspace-write"}, flagProf: "full-access", want: sandbox.ModeFullAccess, wantLayer: sandbox.LayerProfile, detail: "flag --profile"},
		{name: "flag over flag profile", flagProf: "read-only", flagMode: &ww, want: sandbox.ModeWorkspaceWrite, wantLayer: sandbox.LayerFlag},
		{name: "person's own profile", file: "profile = \"mine\"\n[profiles.mine]\nsandbox_mode = \"read-only\"", want: sandbox.ModeReadOnly, wantLayer: sandbox.LayerProfile, detail: "profile mine"},
		{name: "a preset leaves the mode", file: `profile = "demo"`, flagMode: &ro, want: sandbox.ModeReadOnly, wantLayer: sandbox.LayerFlag},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := config.Parse("config.toml", []byte(c.file+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HOME": t.TempDir()}
			for k, v := range c.env {
				env[k] = v
			}
			r, err := Resolve(Inputs{File: f, FilePath: "config.toml", Getenv: func(k string) string { return env[k] },
				Flags: Flags{Sandbox: sandbox.Layer{Mode: c.flagMode}, Profile: c.flagProf}, Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			src := r.Sandbox.Sources[sandbox.KeyMode]
			if r.Sandbox.Mode != c.want || src.Layer != c.wantLayer || !strings.Contains(src.Detail, c.detail) {
				t.Fatalf("mode %s from %+v, want %s from %s (%s)", r.Sandbox.Mode, src, c.want, c.wantLayer, c.detail)
			}
		})
	}
}

// An unknown profile is refused where it was chosen, naming the known ones; a recorded
// policy ignores AIRLOCK_PROFILE like every other variable.
func TestUnknownProfileIsRefused(t *testing.T) {
	for _, in := range []Inputs{
		{Getenv: func(k string) string { return map[string]string{config.EnvProfile: "nope"}[k] }},
		{Flags: Flags{Profile: "nope"}, Getenv: func(string) string { return "" }},
	} {
		in.Cwd = t.TempDir()
		_, err := Resolve(in)
		if !errors.Is(err, config.ErrUnknownProfile) || !strings.Contains(err.Error(), "ask, approve-for-me, read-only, full-access, personal, shared, beginner, demo") {
			t.Errorf("unknown profile: %v", err)
		}
	}
	in := Inputs{Recorded: true, Cwd: t.TempDir(), Getenv: func(k string) string { return map[string]string{config.EnvProfile: "nope"}[k] }}
	if _, err := Resolve(in); err != nil {
		t.Errorf("a recorded policy read AIRLOCK_PROFILE: %v", err)
	}
}

// A project policy file cannot choose a profile: it is listed as ignored, and the mode
// stays the trusted configuration's.
func TestProjectFileCannotChooseAProfile(t *testing.T) {
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, ".airlock"), 0o755)
	os.WriteFile(filepath.Join(repo, ".airlock", "policy.toml"), []byte("profile = \"full-access\"\n[profiles.x]\nsandbox_mode = \"full-access\"\n"), 0o644)
	r, err := Resolve(Inputs{Getenv: func(k string) string { return "" }, Cwd: repo})
	if err != nil {
		t.Fatal(err)
	}
	if r.Sandbox.Mode != sandbox.ModeWorkspaceWrite {
		t.Fatalf("a project file chose mode %s", r.Sandbox.Mode)
	}
	found := false
	for _, ig := range r.Sandbox.Ignored {
		found = found || (ig.Key == "profile" && strings.Contains(ig.String(), "may not choose"))
	}
	if !found {
		t.Fatalf("the project file's profile was not said to be ignored: %v", r.Sandbox.Ignored)
	}
}
