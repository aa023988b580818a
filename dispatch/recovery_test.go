package dispatch

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/internal/deadowner/deadownertest"
)

// TestRestartRecovery abandons a dispatcher while a run is running (as a crash would),
// then opens the database again: the run is interrupted, held runs still wait, the log
// is intact.
func TestRestartRecovery(t *testing.T) {
	h := newHarness(t)
	h.start()
	long := h.task(TaskSpec{Name: "long", Cwd: h.ws, Argv: []string{"sh", "-c", "echo before-crash; sleep 1000"}})
	running := h.wait(h.runNow(long.Name).ID, StatusRunning)
	waitLog(t, running.LogPath, "before-crash")
	held := h.task(TaskSpec{Name: "held", Cwd: h.mkdir("home/outside/held")})
	waiting := h.wait(h.runNow(held.Name).ID, StatusWaitingDirectory)

	old := h.d
	h.open() // a new dispatcher over a new connection; the old one is "dead"
	dg := h.start()
	r := h.wait(running.ID, StatusInterrupted)
	if !strings.Contains(r.Reason, "found running") {
		t.Fatalf("reason: %s", r.Reason)
	}
	if got, _ := h.d.Run(context.Background(), waiting.ID); got.Status != StatusWaitingDirectory {
		t.Fatalf("held run is %s after restart", got.Status)
	}
	log := readFile(t, r.LogPath)
	if !strings.Contains(log, "before-crash") || !strings.Contains(log, "interrupted") {
		t.Fatalf("log not intact:\n%s", log)
	}
	if len(dg.Held) != 1 || len(dg.Failed) != 1 {
		t.Fatalf("digest: %+v", dg)
	}
	old.Close() // kills the orphaned process; must not overwrite the recorded state
	if got, _ := h.d.Run(context.Background(), running.ID); got.Status != StatusInterrupted {
		t.Fatalf("status overwritten: %s", got.Status)
	}
	// Authorizing after the restart releases the held run.
	if _, err := h.d.Authorize(context.Background(), filepath.Join(h.home, "outside/held"), "tester", false); err != nil {
		t.Fatal(err)
	}
	h.wait(waiting.ID, StatusSucceeded)
}

func waitLog(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%q never appeared in %s", want, path)
}

const childEnv = "AIRLOCK_DISPATCH_TEST_CHILD"

// TestKill9DuringRun runs a dispatcher in a child process (this test binary), kills it
// with SIGKILL while a run is running and another is held, and recovers.
func TestKill9DuringRun(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("child")
	}
	root, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(root, "home")
	os.MkdirAll(filepath.Join(home, "Airlock"), 0o755)
	os.MkdirAll(filepath.Join(home, "outside"), 0o755)
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildDispatcher$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var runID, heldID uint
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "READY %d %d", &runID, &heldID); err == nil {
			break
		}
	}
	if runID == 0 {
		cmd.Process.Kill()
		t.Fatal("child dispatcher never reported READY")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	db := openTestDB(t, filepath.Join(root, "airlock.db"))
	depts, _ := departments.New(db, departments.Options{WorkspaceRoots: []string{"~/Airlock"}, HomeDir: home})
	d, err := New(Options{DB: db, Departments: depts, Executor: &procExecutor{}, Approvals: newApprovals(), LogDir: filepath.Join(root, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r, _ := d.Run(context.Background(), runID)
	if r.Status != StatusInterrupted {
		t.Fatalf("run after kill -9: %s (%s)", r.Status, r.Reason)
	}
	if log := readFile(t, r.LogPath); !strings.Contains(log, "child-output") {
		t.Fatalf("log lost:\n%s", log)
	}
	if h, _ := d.Run(context.Background(), heldID); h.Status != StatusWaitingDirectory {
		t.Fatalf("held run after kill -9: %s", h.Status)
	}
	// The run's process died with the dispatcher (as sandboxed runs do with --die-with-parent).
	if r.PID > 0 {
		deadline := time.Now().Add(5 * time.Second)
		for !processGone(r.PID) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !processGone(r.PID) {
			t.Fatalf("run process %d outlived its dispatcher", r.PID)
		}
	}
}

// TestChildDispatcher is the child side of TestKill9DuringRun.
func TestChildDispatcher(t *testing.T) {
	root := os.Getenv(childEnv)
	if root == "" {
		t.Skip("only runs as TestKill9DuringRun's child")
	}
	home := filepath.Join(root, "home")
	db := openTestDB(t, filepath.Join(root, "airlock.db"))
	depts, _ := departments.New(db, departments.Options{WorkspaceRoots: []string{"~/Airlock"}, HomeDir: home})
	d, err := New(Options{DB: db, Departments: depts, Executor: &procExecutor{}, Approvals: newApprovals(), LogDir: filepath.Join(root, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d.Start(ctx)
	tk, err := d.CreateTask(ctx, TaskSpec{Name: "long", Cwd: filepath.Join(home, "Airlock"), Argv: []string{"sh", "-c", "echo child-output; exec sleep 1000"}})
	if err != nil {
		t.Fatal(err)
	}
	held, err := d.CreateTask(ctx, TaskSpec{Name: "held", Cwd: filepath.Join(home, "outside"), Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.RunNow(ctx, tk.Name)
	if err != nil {
		t.Fatal(err)
	}
	hr, err := d.RunNow(ctx, held.Name)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		a, _ := d.Run(ctx, r.ID)
		b, _ := d.Run(ctx, hr.ID)
		if a.Status == StatusRunning && a.PID > 0 && b.Status == StatusWaitingDirectory {
			if log, err := os.ReadFile(a.LogPath); err == nil && strings.Contains(string(log), "child-output") {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if time.Now().After(deadline) {
		t.Fatal("child: runs never reached running and waiting_directory")
	}
	fmt.Printf("READY %d %d\n", r.ID, hr.ID)
	time.Sleep(time.Hour)
}

func TestOnFailureEscalation(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	p := DefaultPolicy()
	p.ApprovalPolicy = "on-failure"
	h := newHarness(t, withPolicy(p))
	h.exec.bwrap = true
	h.start()
	ctx := context.Background()
	target := h.mkdir("home/outside/target")
	tk := h.task(TaskSpec{Name: "writer", Cwd: h.ws, Argv: []string{"sh", "-c", "echo hi > " + target + "/out.txt"}})
	r := h.wait(h.runNow(tk.Name).ID, StatusFailed)
	if !strings.Contains(r.Reason, "sandbox denied") || !strings.Contains(r.Reason, "asked you to re-run it with "+target+" writable") {
		t.Fatalf("reason: %s", r.Reason)
	}
	if _, err := os.Stat(filepath.Join(target, "out.txt")); err == nil {
		t.Fatal("the sandbox let the write through")
	}
	var esc Run
	if err := h.db.Where("parent_run_id = ?", r.ID).Take(&esc).Error; err != nil {
		t.Fatal(err)
	}
	esc = h.wait(esc.ID, StatusWaitingApproval)
	var req ApprovalRequest
	for _, q := range h.appr.requests {
		if q.Kind == ApprovalEscalation {
			req = q
		}
	}
	// Exactly the access the denial needs, for that re-run: never full-access.
	if req.Grant == nil || len(req.Grant.Writable) != 1 || req.Grant.Writable[0] != target || req.Grant.Network || req.Denial == "" || req.Policy.SandboxMode != "workspace-write" {
		t.Fatalf("escalation request: %+v", req)
	}
	h.appr.answer(esc.ApprovalID, true)
	got := h.wait(esc.ID, StatusSucceeded)
	if got.Policy.SandboxMode != "workspace-write" || !got.ScheduledAt.Equal(r.ScheduledAt) {
		t.Fatalf("escalated run: policy %+v scheduled %s", got.Policy, got.ScheduledAt)
	}
	if readFile(t, filepath.Join(target, "out.txt")) != "hi\n" {
		t.Fatal("escalated run did not write")
	}
	// Under on-request, a sandbox denial is just a failure.
	p.ApprovalPolicy = "on-request"
	h2 := newHarness(t, withPolicy(p))
	h2.exec.bwrap = true
	h2.start()
	tk2 := h2.task(TaskSpec{Name: "writer", Cwd: h2.ws, Argv: []string{"sh", "-c", "echo hi > " + h2.mkdir("home/outside/t") + "/out.txt"}})
	r2 := h2.wait(h2.runNow(tk2.Name).ID, StatusFailed)
	var n int64
	h2.db.Model(&Run{}).Where("parent_run_id = ?", r2.ID).Count(&n)
	if n != 0 {
		t.Fatal("escalation outside on-failure")
	}
	_ = ctx
}

// foreignOwners are the pids a dead dispatcher may leave behind, as found at the next
// start: reused by a live unrelated process (after a reboot), or a zombie not yet reaped.
func foreignOwners(t *testing.T) []struct{ name, owner, want string } {
	t.Helper()
	host, _ := os.Hostname()
	live, zombie := deadownertest.StandIns(t)
	return []struct{ name, owner, want string }{
		{"a live process reused the pid", fmt.Sprintf("%s/%d", host, live), "another process (sleep)"},
		{"the pid is a zombie", fmt.Sprintf("%s/%d", host, zombie), "zombie"},
	}
}

// plantRunning records a run of tk as running under owner, as a dispatcher that died
// leaves it, with a log.
func (h *harness) plantRunning(tk Task, at time.Time, owner string) Run {
	h.t.Helper()
	log := filepath.Join(h.logDir, fmt.Sprintf("planted-%d.log", at.Unix()))
	if err := os.WriteFile(log, []byte("before the crash\n"), 0o600); err != nil {
		h.t.Fatal(err)
	}
	started := at.Add(time.Second)
	r := Run{TaskID: tk.ID, TaskName: tk.Name, ScheduledAt: at, Trigger: TriggerSchedule, Status: StatusRunning,
		Owner: owner, PID: 1, StartedAt: &started, LogPath: log, Cwd: tk.Cwd}
	if err := h.db.Create(&r).Error; err != nil {
		h.t.Fatal(err)
	}
	if err := h.db.Model(&Task{}).Where("id = ?", tk.ID).Update("last_scheduled_at", at).Error; err != nil {
		h.t.Fatal(err)
	}
	return r
}

// With the database held exclusively, a run recorded as running by another owner is
// dead whatever its pid is now: Start ends it as interrupted with the evidence (in its
// record and its log), and the task's next occurrence runs.
func TestStartEndsRunsOfAGoneOwner(t *testing.T) {
	for _, tt := range foreignOwners(t) {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, withClock(t0), withOptions(func(o *Options) { o.Exclusive = true }))
			tk := h.task(TaskSpec{Name: "every-minute", Cwd: h.ws, Schedule: "* * * * *", Argv: []string{"echo", "next"}})
			stuck := h.plantRunning(tk, t0, tt.owner)
			h.start()
			r := h.wait(stuck.ID, StatusInterrupted)
			for _, want := range []string{"found running", "exclusive lock", tt.want} {
				if !strings.Contains(r.Reason, want) {
					t.Errorf("reason %q does not say %q", r.Reason, want)
				}
			}
			if log := readFile(t, r.LogPath); !strings.Contains(log, "before the crash") || !strings.Contains(log, tt.want) {
				t.Errorf("log:\n%s", log)
			}
			h.fireAt(t0.Add(time.Minute))
			rs := h.runsOf(tk.ID)
			if len(rs) != 2 {
				t.Fatalf("%d runs after the next occurrence, want 2", len(rs))
			}
			h.wait(rs[1].ID, StatusSucceeded)
		})
	}
}

// Cancelling a run recorded as running by an owner that is gone ends it, with the
// evidence, rather than sending the person to a dispatcher that does not exist.
func TestCancelEndsARunOfAGoneOwner(t *testing.T) {
	for _, tt := range foreignOwners(t) {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, withClock(t0), withOptions(func(o *Options) { o.Exclusive = true }))
			tk := h.task(TaskSpec{Name: "stuck", Cwd: h.ws})
			h.start()
			stuck := h.plantRunning(tk, t0, tt.owner)
			if err := h.d.Cancel(context.Background(), stuck.ID, "cli"); err != nil {
				t.Fatalf("cancel: %v", err)
			}
			r := h.wait(stuck.ID, StatusInterrupted)
			if !strings.Contains(r.Reason, "cancelled by cli") || !strings.Contains(r.Reason, tt.want) {
				t.Errorf("reason: %s", r.Reason)
			}
		})
	}
}

// A new database starts its run ids at 1 again (the old one moved aside, as the error
// for a damaged one advises, or a zero-length file): its run #1 has its own log, and
// the old run #1's file is neither appended to nor read.
func TestNewDatabaseNeverReusesAnOldRunsLog(t *testing.T) {
	for _, fresh := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"moved aside", func(t *testing.T, path string) {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				if err := os.Rename(path+suffix, path+".old"+suffix); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
		}},
		{"a zero-length file", func(t *testing.T, path string) {
			for _, suffix := range []string{"-wal", "-shm"} {
				os.Remove(path + suffix)
			}
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(fresh.name, func(t *testing.T) {
			h := newHarness(t)
			h.start()
			old := h.task(TaskSpec{Name: "old", Cwd: h.ws, Argv: []string{"echo", "old-task-output"}})
			first := h.wait(h.runNow(old.Name).ID, StatusSucceeded)
			h.closeAll()
			fresh.make(t, h.dbPath)

			h.open()
			h.start()
			tk := h.task(TaskSpec{Name: "new", Cwd: h.ws, Argv: []string{"echo", "new-task-output"}})
			r := h.wait(h.runNow(tk.Name).ID, StatusSucceeded)
			if r.ID != first.ID {
				t.Fatalf("the new database's first run is #%d, want #%d (ids start again)", r.ID, first.ID)
			}
			piece, err := h.d.Log(context.Background(), r.ID, LogQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(piece.Data, "old-task-output") || !strings.Contains(piece.Data, "new-task-output") {
				t.Fatalf("run #%d's log in the new database:\n%s", r.ID, piece.Data)
			}
			if got := readFile(t, first.LogPath); strings.Contains(got, "new-task-output") {
				t.Fatalf("the old run's log was appended to:\n%s", got)
			}
		})
	}
}
