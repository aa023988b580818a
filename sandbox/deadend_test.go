package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoGrantOfferedForHiddenWrites: a write into a hidden path (Airlock's state, a
// credential directory), in workspace-write and read-only alike, through a symlink or
// `..` too, is denied with no grant, saying that no escalation can give it; a write
// outside the roots elsewhere still offers the grant, which Escalate then gives.
func TestNoGrantOfferedForHiddenWrites(t *testing.T) {
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	base := t.TempDir()
	ws, home, state := filepath.Join(base, "ws"), filepath.Join(base, "home"), filepath.Join(base, "state")
	for _, d := range []string{ws, filepath.Join(home, ".ssh"), filepath.Join(state, "config"), filepath.Join(base, "outside")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(state, "config", "config.toml"), nil, 0o644))
	must(t, os.Symlink(filepath.Join(state, "config"), filepath.Join(ws, "cfg")))
	for _, mode := range []string{"workspace-write", "read-only"} {
		pol, err := Resolve(Inputs{Cwd: ws, Home: home, Env: envMap(nil), Flags: Layer{Mode: &mode}, State: []string{state}})
		must(t, err)
		for _, p := range []string{
			filepath.Join(state, "config", "config.toml"), filepath.Join(state, "config", "new", "file"),
			filepath.Join(ws, "cfg", "config.toml"), filepath.Join(ws, "..", "state", "config", "config.toml"),
			filepath.Join(home, ".ssh", "authorized_keys"),
		} {
			d, ok := IsDenied(pol.CheckWrite(p))
			if !ok || d.Grant != nil || !strings.Contains(d.Error(), "no escalation can give it") {
				t.Errorf("%s: CheckWrite(%s) = %v (grant %v): want a denial with no grant", mode, p, d, d != nil && d.Grant != nil)
			}
		}
		d, ok := IsDenied(pol.CheckWrite(filepath.Join(base, "outside", "x")))
		if !ok || d.Grant == nil {
			t.Fatalf("%s: a write outside the roots offers no grant: %v", mode, d)
		}
		if _, err := pol.Escalate(*d.Grant); err != nil {
			t.Errorf("%s: the grant offered cannot be given: %v", mode, err)
		}
	}
}
