package dispatch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceRootReplacedByLinkHoldsHome: the workspace root replaced by a symlink to
// the home directory, then a config reload: a run in the home directory is held, and
// its command (which appends to ~/.profile) does not run.
func TestWorkspaceRootReplacedByLinkHoldsHome(t *testing.T) {
	h := newHarness(t)
	h.start()
	if err := os.Rename(h.ws, h.ws+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.home, h.ws); err != nil {
		t.Fatal(err)
	}
	if err := h.depts.SetWorkspaceRoots([]string{"~/Airlock"}); err != nil { // the reload
		t.Fatal(err)
	}
	profile := filepath.Join(h.home, ".profile")
	tk := h.task(TaskSpec{Name: "profile", Cwd: h.home, Argv: []string{"sh", "-c", "echo pwned >> " + profile}})
	r := h.wait(h.runNow(tk.Name).ID, StatusSucceeded, StatusWaitingDirectory, StatusFailed)
	if r.Status != StatusWaitingDirectory || !strings.Contains(r.Reason, "not a known place") {
		t.Fatalf("run in the home directory: %s (%s), want it held as not known", r.Status, r.Reason)
	}
	if _, err := os.Stat(profile); err == nil {
		t.Fatal("the run wrote ~/.profile")
	}
}
