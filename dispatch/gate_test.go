package dispatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/departments"
)

func TestGate(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	dept := h.mkdir("home/depts/web")
	if _, err := h.depts.Add(ctx, "web", dept, departments.Defaults{}); err != nil {
		t.Fatal(err)
	}
	auth := h.mkdir("home/authorized/place")
	if _, err := h.d.Authorize(ctx, filepath.Dir(auth), "tester", false); err != nil {
		t.Fatal(err)
	}
	outside := h.mkdir("home/outside/proj")
	inWS := h.mkdir("home/Airlock/proj")
	// A symlink inside the workspace pointing outside, and one outside pointing in.
	escape := filepath.Join(inWS, "escape")
	if err := os.Symlink(outside, escape); err != nil {
		t.Fatal(err)
	}
	into := filepath.Join(outside, "into-dept")
	if err := os.Symlink(dept, into); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cwd  string
		want string
	}{
		{"inside a workspace root", inWS, StatusSucceeded},
		{"inside a department", dept, StatusSucceeded},
		{"inside an authorized place", auth, StatusSucceeded},
		{"outside", outside, StatusWaitingDirectory},
		{"the home directory", h.home, StatusWaitingDirectory},
		{"symlink in the workspace pointing out", escape, StatusWaitingDirectory},
		{"dotdot out of the workspace", inWS + "/../../outside/proj", StatusWaitingDirectory},
		{"symlink outside pointing into a department", into, StatusSucceeded},
		{"missing directory", filepath.Join(h.home, "nope"), StatusWaitingDirectory},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := h.task(TaskSpec{Name: fmt.Sprintf("gate%d", i), Cwd: tc.cwd, Argv: []string{"pwd"}})
			r := h.wait(h.runNow(tk.Name).ID, StatusSucceeded, StatusWaitingDirectory, StatusFailed)
			if r.Status != tc.want {
				t.Fatalf("run in %s: %s (%s), want %s", tc.cwd, r.Status, r.Reason, tc.want)
			}
			if r.Status == StatusWaitingDirectory {
				if r.HoldUntil == nil || r.WaitingDir == "" || r.Reason == "" {
					t.Fatalf("held run lacks deadline, directory or reason: %+v", r)
				}
				if r.StartedAt != nil {
					t.Fatal("a held run started")
				}
			}
			if r.Status == StatusSucceeded {
				// The command ran in the resolved directory.
				real, _, _ := departments.Resolve(tc.cwd)
				if log := readFile(t, r.LogPath); !strings.Contains(log, real+"\n") {
					t.Fatalf("pwd not %s in log:\n%s", real, log)
				}
			}
		})
	}
}

func TestTaskCreatedBeforeItsDepartment(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	dir := h.mkdir("home/projects/reports")
	tk := h.task(TaskSpec{Name: "old", Cwd: dir})
	held := h.wait(h.runNow(tk.Name).ID, StatusWaitingDirectory)
	if !strings.Contains(held.Reason, "not a known place") {
		t.Fatalf("reason: %s", held.Reason)
	}
	// Creating the department makes the place known: the held run goes, and so do the next.
	if _, err := h.depts.Add(ctx, "reports", dir, departments.Defaults{}); err != nil {
		t.Fatal(err)
	}
	h.wait(held.ID, StatusSucceeded)
	h.wait(h.runNow(tk.Name).ID, StatusSucceeded)
}

func TestDepartmentDeletedAfterTaskCreation(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	dir := h.mkdir("home/depts/billing")
	if _, err := h.depts.Add(ctx, "billing", dir, departments.Defaults{}); err != nil {
		t.Fatal(err)
	}
	tk := h.task(TaskSpec{Name: "invoice", Cwd: dir, Department: "billing"})
	h.wait(h.runNow(tk.Name).ID, StatusSucceeded)
	if err := h.depts.Remove(ctx, "billing"); err != nil {
		t.Fatal(err)
	}
	r := h.wait(h.runNow(tk.Name).ID, StatusWaitingDirectory)
	if !strings.Contains(r.Reason, "billing no longer exists") {
		t.Fatalf("reason: %s", r.Reason)
	}
	// A task without the department, in the same directory, is held too: it is no longer known.
	other := h.task(TaskSpec{Name: "plain", Cwd: dir})
	h.wait(h.runNow(other.Name).ID, StatusWaitingDirectory)
	// Re-creating the department releases both.
	if _, err := h.depts.Add(ctx, "billing", dir, departments.Defaults{}); err != nil {
		t.Fatal(err)
	}
	h.wait(r.ID, StatusSucceeded)
}

func TestDepartmentDirectoryRemovedOnDisk(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := h.mkdir("home/depts/etl")
	if _, err := h.depts.Add(ctx, "etl", dir, departments.Defaults{}); err != nil {
		t.Fatal(err)
	}
	go h.depts.Watch(ctx, time.Hour) // fsnotify only
	tk := h.task(TaskSpec{Name: "etl", Cwd: dir, Department: "etl"})
	h.wait(h.runNow(tk.Name).ID, StatusSucceeded)
	time.Sleep(100 * time.Millisecond)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitDept(t, h, "etl", departments.StatusMissing)
	r := h.wait(h.runNow(tk.Name).ID, StatusWaitingDirectory)
	if !strings.Contains(r.Reason, "missing its directory") || r.WaitingDept != "etl" {
		t.Fatalf("held with the wrong reason: %q (dept %q)", r.Reason, r.WaitingDept)
	}
	// The directory comes back: the department is ok again and its held run goes.
	h.mkdir("home/depts/etl")
	waitDept(t, h, "etl", departments.StatusOK)
	h.wait(r.ID, StatusSucceeded)
}

func waitDept(t *testing.T, h *harness, name, status string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		d, err := h.depts.Get(context.Background(), name)
		if err == nil && d.Status == status {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("department %s never became %s", name, status)
}

func TestAuthorizeReleasesAllWaitingAtOrBelowAndOnlyThose(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	const n = 100
	base := h.mkdir("home/data")
	var below []uint
	for i := 0; i < n; i++ {
		dir := base
		if i%2 == 1 {
			dir = h.mkdir(fmt.Sprintf("home/data/sub%d/deeper", i))
		}
		tk := h.task(TaskSpec{Name: fmt.Sprintf("in%d", i), Cwd: dir})
		below = append(below, h.runNow(tk.Name).ID)
	}
	// Not below: a sibling with the same prefix, and the parent.
	var others []uint
	for i, dir := range []string{h.mkdir("home/data2"), h.mkdir("home/database/x"), h.home} {
		tk := h.task(TaskSpec{Name: fmt.Sprintf("out%d", i), Cwd: dir})
		others = append(others, h.runNow(tk.Name).ID)
	}
	for _, id := range append(append([]uint{}, below...), others...) {
		h.wait(id, StatusWaitingDirectory)
	}
	// About one notification per held place (51 directories below base, 3 others; two
	// runs held at the same instant may both notify), not one per run: at least one each.
	if n := strings.Count(h.ev.text(), `dispatch.notify {"kind":"needs_you"`); n < 54 || n >= 100 {
		t.Fatalf("%d needs-you notifications for 54 held places and 103 held runs", n)
	}
	res, err := h.d.Authorize(ctx, base, "tester", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Released) != n {
		t.Fatalf("released %d runs, want %d", len(res.Released), n)
	}
	for _, id := range below {
		h.wait(id, StatusSucceeded)
	}
	for _, id := range others {
		if r, _ := h.d.Run(ctx, id); r.Status != StatusWaitingDirectory {
			t.Fatalf("run #%d outside the authorized directory left the hold: %s", id, r.Status)
		}
	}
	if pl, _ := h.depts.Places(ctx, false); len(pl) != 1 || pl[0].By != "tester" {
		t.Fatalf("place not recorded with who: %+v", pl)
	}
}

func TestAuthorizeHomeNeedsSecondConfirmation(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	tk := h.task(TaskSpec{Name: "homejob", Cwd: h.home})
	r := h.wait(h.runNow(tk.Name).ID, StatusWaitingDirectory)
	_, err := h.d.Authorize(ctx, h.home, "tester", false)
	var ce *departments.ConfirmationRequiredError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "confirm-home") {
		t.Fatalf("authorize home without confirmation: %v", err)
	}
	if got, _ := h.d.Run(ctx, r.ID); got.Status != StatusWaitingDirectory {
		t.Fatalf("run released without confirmation: %s", got.Status)
	}
	if _, err := h.d.Authorize(ctx, h.home, "tester", true); err != nil {
		t.Fatal(err)
	}
	h.wait(r.ID, StatusSucceeded)
}

func TestRevokeHoldsFutureRunsAgain(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	dir := h.mkdir("home/outside/p")
	if _, err := h.d.Authorize(ctx, dir, "tester", false); err != nil {
		t.Fatal(err)
	}
	tk := h.task(TaskSpec{Name: "p", Cwd: dir})
	h.wait(h.runNow(tk.Name).ID, StatusSucceeded)
	if _, err := h.d.Revoke(ctx, dir, "tester"); err != nil {
		t.Fatal(err)
	}
	h.wait(h.runNow(tk.Name).ID, StatusWaitingDirectory)
}

func TestApprovalPolicyNeverHoldsNothing(t *testing.T) {
	p := DefaultPolicy()
	p.ApprovalPolicy = "never"
	h := newHarness(t, withPolicy(p))
	h.start()
	ctx := context.Background()
	tk := h.task(TaskSpec{Name: "free", Cwd: h.mkdir("home/outside/free")})
	h.wait(h.runNow(tk.Name).ID, StatusSucceeded)
	// A missing department does not hold either.
	dir := h.mkdir("home/d")
	if _, err := h.depts.Add(ctx, "d", dir, departments.Defaults{}); err != nil {
		t.Fatal(err)
	}
	tk2 := h.task(TaskSpec{Name: "free2", Cwd: dir, Department: "d"})
	if err := h.depts.Remove(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	h.wait(h.runNow(tk2.Name).ID, StatusSucceeded)
	// A command that needs a person is denied at once, not held.
	tk3 := h.task(TaskSpec{Name: "p2", Cwd: h.ws, Argv: []string{"needs-person"}})
	r := h.wait(h.runNow(tk3.Name).ID, StatusDenied, StatusWaitingApproval)
	if r.Status != StatusDenied {
		t.Fatalf("P2 under never: %s", r.Status)
	}
	// Only "never" from the department layer counts the same way.
	var held int64
	h.db.Model(&Run{}).Where("status IN ?", []string{StatusWaitingDirectory, StatusWaitingApproval}).Count(&held)
	if held != 0 {
		t.Fatalf("%d runs held under never", held)
	}
}

func TestDepartmentDefaultsAndOverridesRecordedOnRun(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	dir := h.mkdir("home/ops")
	on := api.NetworkOn
	if _, err := h.depts.Add(ctx, "ops", dir, departments.Defaults{Posture: "cloudops", SandboxMode: "read-only", ApprovalPolicy: "on-failure"}); err != nil {
		t.Fatal(err)
	}
	tk := h.task(TaskSpec{Name: "o", Cwd: dir, Department: "ops", Overrides: departments.Defaults{SandboxMode: "workspace-write", Network: &on}})
	r := h.wait(h.runNow(tk.Name).ID, StatusSucceeded)
	want := Policy{Posture: "cloudops", SandboxMode: "workspace-write", Network: api.NetworkOn, ApprovalPolicy: "on-failure", Backend: "auto", ExecutionMode: "local"}
	if r.Policy != want {
		t.Fatalf("recorded policy %+v, want %+v", r.Policy, want)
	}
	// A later change of the department applies to the next run only.
	if _, err := h.depts.SetDefaults(ctx, "ops", departments.Defaults{ApprovalPolicy: "untrusted"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.d.Run(ctx, r.ID); got.Policy != want {
		t.Fatalf("finished run's policy changed: %+v", got.Policy)
	}
	r2 := h.wait(h.runNow(tk.Name).ID, StatusSucceeded)
	if r2.Policy.ApprovalPolicy != "untrusted" {
		t.Fatalf("next run did not take the new default: %+v", r2.Policy)
	}
}

func TestRemoveTaskCancelsItsOpenRuns(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	held := h.task(TaskSpec{Name: "gone", Cwd: h.mkdir("home/outside/g"), Overlap: OverlapAllow})
	r1 := h.wait(h.runNow(held.Name).ID, StatusWaitingDirectory)
	p2 := h.task(TaskSpec{Name: "gone2", Cwd: h.ws, Argv: []string{"needs-person"}})
	r2 := h.wait(h.runNow(p2.Name).ID, StatusWaitingApproval)
	for _, name := range []string{"gone", "gone2"} {
		if err := h.d.RemoveTask(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	h.wait(r1.ID, StatusCancelled)
	h.wait(r2.ID, StatusCancelled)
	if items, _ := h.d.Inbox(ctx); len(items) != 0 {
		t.Fatalf("inbox still lists removed tasks' runs: %+v", items)
	}
}

// heldWatched waits until the held-directory watcher has seen dir missing (so that what
// follows is seen by its fsnotify watch, not by a look it was about to take anyway).
func heldWatched(t *testing.T, h *harness, runID uint) {
	t.Helper()
	r := h.wait(runID, StatusWaitingDirectory)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if missing, _ := h.d.heldDirsSeen(r.WaitingDir); missing {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the watcher never saw %s missing", r.WaitingDir)
}

// A run held because its working directory did not exist is released when the directory
// appears (even several levels below what existed), and runs; one whose directory appears
// as a symlink out of every known place is held again, for that reason, and does not run.
func TestHeldMissingDirectoryReleasedWhenItAppears(t *testing.T) {
	h := newHarness(t)
	h.start()
	t.Run("appears", func(t *testing.T) {
		dir := filepath.Join(h.ws, "later", "deep", "er")
		tk := h.task(TaskSpec{Name: "later", Cwd: dir, Argv: []string{"pwd"}})
		r := h.runNow(tk.Name)
		heldWatched(t, h, r.ID)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		got := h.wait(r.ID, StatusSucceeded, StatusFailed)
		if got.Status != StatusSucceeded || !strings.Contains(readFile(t, got.LogPath), dir+"\n") {
			t.Fatalf("released run: %s (%s)", got.Status, got.Reason)
		}
	})
	t.Run("appears as a symlink out", func(t *testing.T) {
		dir := filepath.Join(h.ws, "trap")
		tk := h.task(TaskSpec{Name: "trap", Cwd: dir, Argv: []string{"pwd"}})
		r := h.runNow(tk.Name)
		heldWatched(t, h, r.ID)
		outside := h.mkdir("home/outside/secret")
		if err := os.Symlink(outside, dir); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := h.wait(r.ID, StatusWaitingDirectory, StatusSucceeded, StatusFailed)
			if got.Status != StatusWaitingDirectory {
				t.Fatalf("a run whose directory became a symlink out ran: %s", got.Status)
			}
			if got.WaitingDir == outside && strings.Contains(got.Reason, "not a known place") {
				if got.StartedAt != nil {
					t.Fatal("it started")
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("still held as %q on %s, want held as not a known place on %s", got.Reason, got.WaitingDir, outside)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}
