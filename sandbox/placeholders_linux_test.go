package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// probeProtected tries every way to create or change .git and .airlock (both missing on
// the host) and prints what worked; it checks twice, the second time after the other
// sandboxes around it had time to end and clean up.
const probeProtected = `probe() {
  for d in .git .airlock; do
    mkdir "$d" 2>/dev/null && echo "ESCAPE: created $d"
    touch "$d/x" 2>/dev/null && echo "ESCAPE: wrote $d/x"
    mkdir "$d/y" 2>/dev/null && echo "ESCAPE: made $d/y"
    rmdir "$d" 2>/dev/null && echo "ESCAPE: removed $d"
    mv "$d" moved 2>/dev/null && echo "ESCAPE: renamed $d"
  done
}
probe; exit 0`

// TestConcurrentSandboxesShareProtection starts many bubblewrap sandboxes at once in one
// working directory where .git and .airlock do not exist. Every one must start (none may
// fail on a placeholder another one removed), none may create or write either name, and
// nothing may be left in the workspace afterwards. The rounds make a rare interleaving
// show up reliably (bounded: a few hundred sandboxes per round).
func TestConcurrentSandboxesShareProtection(t *testing.T) {
	if bwrapPath() == "" {
		t.Fatal("bubblewrap is not installed (apt install bubblewrap)")
	}
	forcedBackend = BackendNameBwrap
	defer func() { forcedBackend = "" }()
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	ws := filepath.Join(base, "ws")
	must(t, os.Mkdir(ws, 0o755))
	// Configured extras protected like .git and .airlock: every one is another placeholder
	// to create, hold and remove, which gives the interleavings more room.
	var extra []string
	for i := range 48 {
		extra = append(extra, fmt.Sprintf(".protected-%02d", i))
	}
	p, err := Resolve(Inputs{Cwd: ws, Env: envMap(nil), Flags: Layer{Protected: extra}})
	must(t, err)

	// Two at a time is how overlapping runs of one task meet (starts and ends interleave
	// all the time: the old placeholders failed about one run in a hundred or two here); then two
	// hundred at once.
	rounds := []struct{ runs, atOnce int }{{1000, 2}, {200, 200}}
	for round, r := range rounds {
		perRound, atOnce := r.runs, r.atOnce
		var wg sync.WaitGroup
		errs := make(chan string, perRound)
		slots := make(chan struct{}, atOnce)
		for i := range perRound {
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer func() { <-slots; wg.Done() }()
				var out bytes.Buffer
				res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"/bin/sh", "-c", probeProtected},
					Stdout: &out, Stderr: &out, Timeout: 2 * time.Minute})
				switch {
				case err != nil:
					errs <- fmt.Sprintf("round %d sandbox %d did not run: %v\n%s", round, i, err, out.String())
				case res.ExitCode != 0 || out.Len() > 0:
					errs <- fmt.Sprintf("round %d sandbox %d: exit %d:\n%s", round, i, res.ExitCode, out.String())
				}
			}()
		}
		wg.Wait()
		close(errs)
		var failed []string
		for e := range errs {
			failed = append(failed, e)
		}
		if len(failed) > 0 {
			t.Fatalf("%d of %d concurrent sandboxes failed; first ones:\n%s", len(failed), perRound, strings.Join(failed[:min(len(failed), 5)], "\n"))
		}
		left, err := os.ReadDir(ws)
		must(t, err)
		if len(left) > 0 {
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			t.Fatalf("round %d left %v in the workspace", round, names)
		}
	}
}

// TestReadBufferedNeverWaits: bwrap's status lines are read from the pipe without a
// deadline that a loaded machine could miss, and without waiting for a writer that
// is still there.
func TestReadBufferedNeverWaits(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		closeW     bool
	}{
		{"buffered, writer open", `{"child-pid": 7}`, false},
		{"buffered, writer gone", `{"child-pid": 7}`, true},
		{"empty, writer open", "", false},
		{"empty, writer gone", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			must(t, err)
			defer r.Close()
			defer w.Close()
			_, err = w.WriteString(tc.data)
			must(t, err)
			if tc.closeW {
				w.Close()
			}
			if got := string(readBuffered(r, 1<<16)); got != tc.data {
				t.Errorf("readBuffered = %q, want %q", got, tc.data)
			}
		})
	}
}

// TestPlaceholderHolding: the last holder removes a placeholder, an earlier one leaves
// it; a directory someone made for real is bound as it is and never removed; a symlink
// in its place fails closed.
func TestPlaceholderHolding(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	git := filepath.Join(ws, ".git")

	a, planA, err := holdPlaceholders(ctx, mountPlan{protectedMissing: []string{git}})
	must(t, err)
	if len(planA.protectedMissing) != 1 {
		t.Fatalf("plan = %+v, want .git as a held placeholder", planA)
	}
	// The second sandbox planned while the first one's placeholder existed.
	b, planB, err := holdPlaceholders(ctx, mountPlan{protectedExisting: []string{git}})
	must(t, err)
	if len(planB.protectedMissing) != 1 || len(planB.protectedExisting) != 0 {
		t.Fatalf("plan = %+v, want the existing placeholder held (an empty read-only tmpfs on it)", planB)
	}
	a.release()
	if _, err := os.Stat(git); err != nil {
		t.Fatalf("the first sandbox to end removed the placeholder the other one uses: %v", err)
	}
	b.release()
	absent(t, git)

	// Planned as missing, but made for real before the sandbox started.
	must(t, os.Mkdir(git, 0o755))
	c, planC, err := holdPlaceholders(ctx, mountPlan{protectedMissing: []string{git}})
	must(t, err)
	if len(planC.protectedExisting) != 1 || len(planC.protectedMissing) != 0 {
		t.Fatalf("plan = %+v, want the real .git bound read-only", planC)
	}
	c.release()
	if _, err := os.Stat(git); err != nil {
		t.Fatalf("a real .git was removed: %v", err)
	}

	airlock := filepath.Join(ws, ".airlock")
	must(t, os.Symlink(t.TempDir(), airlock))
	_, _, err = holdPlaceholders(ctx, mountPlan{protectedMissing: []string{airlock}})
	var pse *ProtectedSymlinkError
	if !errors.As(err, &pse) {
		t.Fatalf("a symlink in place of .airlock = %v, want a ProtectedSymlinkError", err)
	}
}
