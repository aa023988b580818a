package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func sp(s string) *string { return &s }

func TestResolvePrecedence(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		in       Inputs
		mode     Mode
		modeFrom string
		network  bool
		netFrom  string
	}{
		{"defaults", Inputs{}, ModeWorkspaceWrite, "default", false, "default"},
		{"file", Inputs{File: Layer{Mode: sp("read-only")}}, ModeReadOnly, "file", false, "default"},
		{"env over file", Inputs{File: Layer{Mode: sp("read-only")}, Env: envMap(map[string]string{EnvSandboxMode: "full-access"})},
			ModeFullAccess, "env", true, "env"},
		{"flag over env", Inputs{Flags: Layer{Mode: sp("read-only")}, Env: envMap(map[string]string{EnvSandboxMode: "full-access"})},
			ModeReadOnly, "flag", false, "default"},
		{"alias", Inputs{Flags: Layer{Mode: sp("danger-full-access")}}, ModeFullAccess, "flag", true, "flag"},
		{"network env", Inputs{File: Layer{Network: netp(false)}, Env: envMap(map[string]string{EnvNetwork: "1"})},
			ModeWorkspaceWrite, "default", true, "env"},
		{"network flag", Inputs{Flags: Layer{Network: netp(true)}}, ModeWorkspaceWrite, "default", true, "flag"},
		{"read-only forces network off", Inputs{Flags: Layer{Mode: sp("read-only"), Network: netp(true)}}, ModeReadOnly, "flag", false, "flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := resolveCase(t, dir, &tt.in)
			if p.Mode != tt.mode || p.Sources[KeyMode].Layer != tt.modeFrom {
				t.Errorf("mode = %s from %+v, want %s from %s", p.Mode, p.Sources[KeyMode], tt.mode, tt.modeFrom)
			}
			if p.Network != *netp(tt.network) || p.Sources[KeyNetwork].Layer != tt.netFrom {
				t.Errorf("network = %v from %+v, want %v from %s", p.Network, p.Sources[KeyNetwork], tt.network, tt.netFrom)
			}
		})
	}
}

func TestResolveSourcesDetail(t *testing.T) {
	p, err := Resolve(Inputs{Cwd: t.TempDir(), Env: envMap(map[string]string{EnvSandboxMode: "read-only", EnvBackend: "app"}), FilePath: "/c.toml",
		File: Layer{ExecutionMode: sp("local")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Sources[KeyMode].Detail; got != "env AIRLOCK_SANDBOX_MODE" {
		t.Errorf("mode detail = %q", got)
	}
	if p.Backend != BackendApp || p.Sources[KeyBackend].Detail != "env AIRLOCK_SANDBOX_BACKEND" {
		t.Errorf("backend = %s from %+v", p.Backend, p.Sources[KeyBackend])
	}
	if got := p.Sources[KeyExecutionMode].Detail; !strings.Contains(got, "/c.toml") {
		t.Errorf("execution mode detail = %q, want the config path", got)
	}
}

func TestResolveInvalidValues(t *testing.T) {
	tests := []struct {
		in   Inputs
		want []string
	}{
		{Inputs{Flags: Layer{Mode: sp("yolo")}}, []string{`"yolo"`, "flag --sandbox", "read-only, workspace-write, full-access"}},
		{Inputs{Env: envMap(map[string]string{EnvSandboxMode: "rw"})}, []string{`"rw"`, "env AIRLOCK_SANDBOX_MODE", "workspace-write"}},
		{Inputs{File: Layer{Backend: sp("docker")}}, []string{`"docker"`, "config", "auto, os, app"}},
		{Inputs{Env: envMap(map[string]string{EnvNetwork: "maybe"})}, []string{`"maybe"`, "env AIRLOCK_NETWORK", "true/false"}},
		{Inputs{Env: envMap(map[string]string{EnvExecutionMode: "vm"})}, []string{`"vm"`, "AIRLOCK_EXECUTION_MODE", "local, sandbox, auto"}},
		{Inputs{Cwd: "/does/not/exist"}, []string{"/does/not/exist"}},
	}
	for _, tt := range tests {
		if tt.in.Cwd == "" {
			tt.in.Cwd = t.TempDir()
		}
		if tt.in.Env == nil {
			tt.in.Env = envMap(nil)
		}
		_, err := Resolve(tt.in)
		if err == nil {
			t.Errorf("Resolve(%+v) succeeded, want an error", tt.in)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not mention %q", err, w)
			}
		}
	}
}

func writeProject(t *testing.T, dir, body string) *ProjectPolicy {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".airlock"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ProjectPolicyFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	pp, err := LoadProjectPolicy(dir)
	if err != nil {
		t.Fatal(err)
	}
	return pp
}

func TestProjectPolicyOnlyTightens(t *testing.T) {
	dir := t.TempDir()
	loosen := writeProject(t, dir, `
sandbox_mode = "full-access"
execution_mode = "local"
[sandbox_workspace_write]
network_access = true
writable_roots = ["/"]
[isolation]
backend = "app"
protected = ["secrets"]
[[permission.rules]]
tool = "bash"
action = "allow"
`)
	p, err := Resolve(Inputs{Cwd: dir, Env: envMap(nil), Project: []*ProjectPolicy{loosen}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != ModeWorkspaceWrite || p.Network != NetworkOff || p.Backend != BackendAuto || len(p.WritableRoots) != 1 {
		t.Fatalf("untrusted project loosened the policy: %+v", p)
	}
	var keys []string
	for _, ig := range p.Ignored {
		keys = append(keys, ig.Key)
		if !strings.Contains(ig.Reason, EnvTrustProject) {
			t.Errorf("ignored %s reason %q does not say how to trust", ig.Key, ig.Reason)
		}
	}
	for _, k := range []string{KeyMode, KeyNetwork, KeyWritableRoots, KeyBackend, KeyExecutionMode} {
		if !slices.Contains(keys, k) {
			t.Errorf("ignored keys %q lack %s", keys, k)
		}
	}
	if !slices.Contains(p.Protected, filepath.Join(p.Cwd, "secrets")) {
		t.Errorf("project protected path not added: %q", p.Protected)
	}

	// Trusted by the environment: the same file applies.
	p, err = Resolve(Inputs{Cwd: dir, TrustProject: true, Project: []*ProjectPolicy{loosen}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != ModeFullAccess || p.Backend != BackendApp || p.Sources[KeyMode].Layer != LayerProject {
		t.Fatalf("trusted project not applied: mode %s backend %s sources %+v", p.Mode, p.Backend, p.Sources)
	}
	// A flag still wins over a trusted project.
	p, _ = Resolve(Inputs{Cwd: dir, TrustProject: true, Flags: Layer{Mode: sp("read-only")}, Project: []*ProjectPolicy{loosen}})
	if p.Mode != ModeReadOnly {
		t.Fatalf("flag lost to a trusted project: %s", p.Mode)
	}
}

func TestProjectPolicyTightens(t *testing.T) {
	dir := t.TempDir()
	tight := writeProject(t, dir, `
sandbox_mode = "read-only"
[sandbox_workspace_write]
network_access = false
[isolation]
backend = "os"
`)
	p, err := Resolve(Inputs{Cwd: dir, Env: envMap(map[string]string{EnvNetwork: "1"}), Flags: Layer{Mode: sp("full-access")}, Project: []*ProjectPolicy{tight}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != ModeReadOnly || p.Network != NetworkOff || p.Backend != BackendOS {
		t.Fatalf("project did not tighten: mode %s network %v backend %s", p.Mode, p.Network, p.Backend)
	}
	if s := p.Sources[KeyMode]; s.Layer != LayerProject || !strings.Contains(s.Detail, ProjectPolicyFile) {
		t.Fatalf("mode source = %+v", s)
	}
}

func TestLoadProjectPolicyErrors(t *testing.T) {
	dir := t.TempDir()
	if pp, err := LoadProjectPolicy(dir); pp != nil || err != nil {
		t.Fatalf("missing file: %v %v", pp, err)
	}
	os.MkdirAll(filepath.Join(dir, ".airlock"), 0o755)
	os.WriteFile(filepath.Join(dir, ProjectPolicyFile), []byte("sandbox_mode = ["), 0o644)
	if _, err := LoadProjectPolicy(dir); err == nil || !strings.Contains(err.Error(), ProjectPolicyFile) {
		t.Fatalf("bad TOML error = %v", err)
	}
	pp := writeProject(t, dir, "sandbox_mode = 3\n[isolation]\nprotected = \"x\"\n")
	if len(pp.Ignored) != 2 || pp.Layer.Mode != nil {
		t.Fatalf("wrong types not ignored: %+v", pp)
	}
}

func TestResolveRootsAndProtected(t *testing.T) {
	base := t.TempDir()
	cwd := filepath.Join(base, "work")
	extra := filepath.Join(base, "extra")
	os.MkdirAll(cwd, 0o755)
	os.MkdirAll(extra, 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(cwd, link)
	// A worktree-style .git pointer file.
	gitdir := filepath.Join(base, "main.git", "worktrees", "w")
	os.MkdirAll(gitdir, 0o755)
	os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644)
	os.WriteFile(filepath.Join(cwd, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644)

	p, err := Resolve(Inputs{Cwd: link, Env: envMap(nil), File: Layer{WritableRoots: []string{extra, filepath.Join(base, "missing")}, Protected: []string{".env", "/etc/x"}}})
	if err != nil {
		t.Fatal(err)
	}
	realCwd, _ := filepath.EvalSymlinks(cwd)
	realExtra, _ := filepath.EvalSymlinks(extra)
	if !slices.Equal(p.WritableRoots, []string{realCwd, realExtra}) {
		t.Errorf("roots = %q", p.WritableRoots)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "missing") {
		t.Errorf("warnings = %q", p.Warnings)
	}
	for _, want := range []string{filepath.Join(realCwd, ".git"), filepath.Join(realCwd, ".airlock"), filepath.Join(realCwd, ".env"),
		filepath.Join(realExtra, ".git"), "/etc/x", gitdir, filepath.Join(base, "main.git")} {
		if !slices.Contains(p.Protected, want) {
			t.Errorf("protected %q lacks %s", p.Protected, want)
		}
	}
	// The flag layer replaces the file's roots.
	p, _ = Resolve(Inputs{Cwd: cwd, Env: envMap(nil), Flags: Layer{WritableRoots: []string{}}, File: Layer{WritableRoots: []string{extra}}})
	if len(p.WritableRoots) != 1 || p.Sources[KeyWritableRoots].Layer != LayerFlag {
		t.Errorf("flag roots: %q from %+v", p.WritableRoots, p.Sources[KeyWritableRoots])
	}
	// read-only has no writable roots.
	p, _ = Resolve(Inputs{Cwd: cwd, Env: envMap(nil), Flags: Layer{Mode: sp("read-only")}})
	if len(p.WritableRoots) != 0 {
		t.Errorf("read-only roots = %q", p.WritableRoots)
	}
}

func TestDefaultHiddenPaths(t *testing.T) {
	got := DefaultHiddenPaths(envMap(map[string]string{
		"XDG_RUNTIME_DIR":          "/run/user/1000",
		"DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/dbus-x,guid=1",
		"SSH_AUTH_SOCK":            "/tmp/ssh-a/agent.1",
		"AIRLOCK_HOME":             "/srv/al",
	}))
	for _, want := range []string{"/run/docker.sock", "/run/user/1000/docker.sock", "/run/user/1000/airlock", "/run/user/1000/bus", "/run/user/1000/keyring", "/tmp/dbus-x", "/tmp/ssh-a/agent.1", "/srv/al/run"} {
		if !slices.Contains(got, want) {
			t.Errorf("hidden %q lacks %s", got, want)
		}
	}
}

// resolveCase resolves a table case's inputs in dir, with an empty environment unless the
// case gives one (filled into in, for the case's further checks).
func resolveCase(t *testing.T, dir string, in *Inputs) Policy {
	t.Helper()
	in.Cwd = dir
	if in.Env == nil {
		in.Env = envMap(nil)
	}
	p, err := Resolve(*in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
