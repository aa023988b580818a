package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRevealInsideAHiddenDirectory: a directory revealed inside a hidden one (an agent
// task's run directory inside the hidden agent runs) is readable, read-only except its
// writable root, and protected paths in that root stay protected; everything else the
// hidden directory holds — a sibling there before, one made while the command runs, the
// listing (under bubblewrap; Landlock lists every hidden directory) — stays hidden.
// Without the reveal the whole directory is hidden. Both OS backends.
func TestRevealInsideAHiddenDirectory(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		f := newFixture(t, "workspace-write", false)
		runs := filepath.Join(f.base, "agent-runs")
		own, sibling, later := filepath.Join(runs, "run-1"), filepath.Join(runs, "run-2"), filepath.Join(runs, "run-3")
		home := filepath.Join(own, "home")
		for _, d := range []string{filepath.Join(home, "work"), filepath.Join(home, ".git"), sibling} {
			must(t, os.MkdirAll(d, 0o755))
		}
		must(t, os.WriteFile(filepath.Join(own, "settings.json"), []byte("own settings\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(sibling, "transcript"), []byte("SIBLING SECRET\n"), 0o644))
		pol := f.policy
		pol.Hidden = append(pol.Hidden, runs)
		pol.WritableRoots = append(pol.WritableRoots, home)
		pol.Protected = append(pol.Protected, filepath.Join(home, ".git"))
		go func() {
			// A run that starts while the command runs.
			time.Sleep(300 * time.Millisecond)
			os.MkdirAll(later, 0o755)
			os.WriteFile(filepath.Join(later, "transcript"), []byte("LATER SECRET\n"), 0o644)
			os.WriteFile(filepath.Join(f.ws, "go"), nil, 0o644)
		}()
		script := `R=` + runs + `
cat $R/run-1/settings.json
echo x > $R/run-1/home/work/notes && echo "home written"
echo x > $R/run-1/settings.json 2>/dev/null && echo "ESCAPE settings written" || echo "settings read-only"
echo x > $R/run-1/home/.git/config 2>/dev/null && echo "ESCAPE protected written" || echo "protected refused"
cat $R/run-2/transcript 2>/dev/null || echo "sibling hidden"
ls $R 2>/dev/null | grep -q run-2 && echo "ESCAPE sibling listed" || echo "listing hidden"
while [ ! -e $WS/go ]; do sleep 0.05; done
cat $R/run-3/transcript 2>/dev/null || echo "later sibling hidden"`
		unhidden, err := pol.WithUnhidden(own)
		must(t, err)
		out, res := f.run(t, script, func(r *ExecRequest) { r.Policy = unhidden })
		t.Logf("%s:\n%s", backend, out)
		if res.ExitCode != 0 {
			t.Fatalf("exit %d", res.ExitCode)
		}
		wants := []string{"own settings", "home written", "settings read-only", "protected refused", "sibling hidden", "later sibling hidden"}
		if backend == BackendNameBwrap {
			// Under Landlock every hidden directory can be listed (a right on its parent
			// is inherited), though nothing in it can be read.
			wants = append(wants, "listing hidden")
		} else {
			out = strings.ReplaceAll(out, "ESCAPE sibling listed", "")
		}
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("the output lacks %q", want)
			}
		}
		if strings.Contains(out, "ESCAPE") || strings.Contains(out, "SECRET") {
			t.Errorf("ESCAPE: the hidden directory showed more than the revealed one")
		}
		if b, err := os.ReadFile(filepath.Join(own, "settings.json")); err != nil || string(b) != "own settings\n" {
			t.Errorf("the revealed settings changed: %q %v", b, err)
		}
		// Without it nothing of the run directory is there.
		out, _ = f.run(t, `cat `+own+`/settings.json 2>/dev/null || echo "own hidden"`, func(r *ExecRequest) { r.Policy = pol })
		if !strings.Contains(out, "own hidden") {
			t.Errorf("ESCAPE: without a reveal the run directory is readable: %s", out)
		}
	})
}
