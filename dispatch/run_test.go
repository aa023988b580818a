package dispatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/atrest"
	"github.com/airlock-app/airlock/redact"
)

func TestTimeoutKillsTheWholeProcessTree(t *testing.T) {
	h := newHarness(t)
	h.start()
	pidFile := filepath.Join(h.root, "bg.pid")
	tk := h.task(TaskSpec{Name: "tree", Cwd: h.ws, Timeout: 500 * time.Millisecond,
		Argv: []string{"sh", "-c", "sleep 1000 & echo $! > " + pidFile + "; sleep 1000"}})
	r := h.wait(h.runNow(tk.Name).ID, StatusTimedOut)
	if !strings.Contains(r.Reason, "timeout") {
		t.Fatalf("reason: %s", r.Reason)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("background child %d survived the timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNoProgressWatchdog(t *testing.T) {
	h := newHarness(t)
	h.start()
	tk := h.task(TaskSpec{Name: "stuck", Cwd: h.ws, NoProgressTimeout: 300 * time.Millisecond,
		Argv: []string{"sh", "-c", "echo working; sleep 1000"}})
	r := h.wait(h.runNow(tk.Name).ID, StatusTimedOut)
	if !strings.Contains(r.Reason, "no output") {
		t.Fatalf("reason: %s", r.Reason)
	}
	// A run that keeps printing is not stuck.
	// (its total run time is several times the no-progress limit.)
	tk2 := h.task(TaskSpec{Name: "chatty", Cwd: h.ws, NoProgressTimeout: 8 * time.Second,
		Argv: []string{"sh", "-c", "for i in $(seq 1 100); do echo $i; sleep 0.2; done"}})
	h.wait(h.runNow(tk2.Name).ID, StatusSucceeded)
}

// Past the cap a run's log keeps its head and its tail, so the final error survives,
// and drops the middle with a marker saying how much; the live stream stops at the head.
func TestLogCapKeepsHeadAndTail(t *testing.T) {
	h := newHarness(t, withOptions(func(o *Options) { o.LogLimit = 1000 }))
	h.start()
	tk := h.task(TaskSpec{Name: "loud", Cwd: h.ws, Argv: []string{"sh", "-c", "echo first-line; yes airlock | head -c 100000; echo; echo the-final-error >&2; exit 3"}})
	r := h.wait(h.runNow(tk.Name).ID, StatusFailed)
	if !r.LogTruncated || r.LogBytes > 1000 || r.LogBytes < 500 {
		t.Fatalf("log_bytes=%d truncated=%v", r.LogBytes, r.LogTruncated)
	}
	log := readFile(t, r.LogPath)
	for _, want := range []string{"first-line", "bytes dropped …", "the-final-error", "failed: exit status 3"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the capped log has no %q:\n%s", want, log)
		}
	}
	if strings.Index(log, "bytes dropped") > strings.Index(log, "the-final-error") {
		t.Fatalf("the marker is not between the head and the tail:\n%s", log)
	}
	if len(log) > 1000+1024 {
		t.Fatalf("log is %d bytes, cap 1000", len(log))
	}
	if strings.Count(h.ev.text(), "airlock\\nairlock") > 200 {
		t.Fatal("live stream kept publishing past the cap")
	}
}

func TestSecretNeverInLogDatabaseOrEvents(t *testing.T) {
	const secret = "s3cr3t-V4LUE-9f8e7d"
	h := newHarness(t, withOptions(func(o *Options) { o.Secrets = secretMap{"API_TOKEN": secret} }))
	h.start()
	// Print it whole, split across writes one byte at a time, and inside a failure reason.
	script := `echo "token=$API_TOKEN"; printf '%s' "$API_TOKEN" | while IFS= read -r -n1 c; do printf '%s' "$c"; sleep 0.001; done; echo; exit 3`
	tk := h.task(TaskSpec{Name: "sec", Cwd: h.ws, Secrets: []string{"API_TOKEN"}, Argv: []string{"bash", "-c", script}})
	r := h.wait(h.runNow(tk.Name).ID, StatusFailed)
	log := readFile(t, r.LogPath)
	if strings.Contains(log, secret) {
		t.Fatalf("secret in the log:\n%s", log)
	}
	if strings.Count(log, redact.Marker) < 2 {
		t.Fatalf("secret not visibly redacted:\n%s", log)
	}
	if strings.Contains(h.ev.text(), secret) {
		t.Fatal("secret in the published events")
	}
	h.closeAll()
	atrest.Check(t, h.dbPath, "closed", secret)
	// A missing secret fails the run with the way out.
	h.open()
	h.start()
	tk2 := h.task(TaskSpec{Name: "nosec", Cwd: h.ws, Secrets: []string{"MISSING_TOKEN"}})
	r2 := h.wait(h.runNow(tk2.Name).ID, StatusFailed)
	if !strings.Contains(r2.Reason, "airlock secret set MISSING_TOKEN") {
		t.Fatalf("reason: %s", r2.Reason)
	}
}

func TestP2CommandWaitsAtEveryRunAndGivesBackItsSlot(t *testing.T) {
	h := newHarness(t, withOptions(func(o *Options) { o.Concurrency = 1 }))
	h.start()
	ctx := context.Background()
	bin := filepath.Join(h.root, "needs-person")
	os.WriteFile(bin, []byte("#!/bin/sh\necho approved run\n"), 0o755)
	p2 := h.task(TaskSpec{Name: "p2", Cwd: h.ws, Argv: []string{bin}})
	for round := 0; round < 2; round++ {
		r := h.wait(h.runNow(p2.Name).ID, StatusWaitingApproval)
		if r.ApprovalID == "" || r.HoldUntil == nil {
			t.Fatalf("waiting run without approval id or deadline: %+v", r)
		}
		// With one slot, another task still runs while this one waits.
		other := h.task(TaskSpec{Name: fmt.Sprintf("other%d", round), Cwd: h.ws})
		h.wait(h.runNow(other.Name).ID, StatusSucceeded)
		items, _ := h.d.Inbox(ctx)
		if len(items) != 1 || items[0].Kind != InboxApprovalKind || items[0].Runs[0] != r.ID {
			t.Fatalf("inbox: %+v", items)
		}
		h.appr.answer(r.ApprovalID, true)
		h.wait(r.ID, StatusSucceeded)
	}
	// Denied: recorded denied with the reason.
	r := h.wait(h.runNow(p2.Name).ID, StatusWaitingApproval)
	h.appr.answer(r.ApprovalID, false)
	if got := h.wait(r.ID, StatusDenied); !strings.Contains(got.Reason, "window") {
		t.Fatalf("reason: %s", got.Reason)
	}
	// The plain command was approved by creating the task: it never asks.
	for _, req := range h.appr.requests {
		if req.Kind != ApprovalCommand || strings.Join(req.TaskArgv, " ") != strings.Join(req.Argv, " ") {
			t.Fatalf("request: %+v", req)
		}
	}
}

func TestConcurrencyLimit(t *testing.T) {
	h := newHarness(t)
	h.start()
	var ids []uint
	for i := 0; i < 6; i++ {
		tk := h.task(TaskSpec{Name: fmt.Sprintf("c%d", i), Cwd: h.ws, Argv: []string{"sleep", "0.2"}})
		ids = append(ids, h.runNow(tk.Name).ID)
	}
	for _, id := range ids {
		h.wait(id, StatusSucceeded)
	}
	if h.exec.peak > DefaultConcurrency {
		t.Fatalf("%d runs at once, limit %d", h.exec.peak, DefaultConcurrency)
	}
}

func TestHeldRunExpires(t *testing.T) {
	h := newHarness(t, withClock(t0))
	h.start()
	ctx := context.Background()
	tk := h.task(TaskSpec{Name: "h", Cwd: h.mkdir("home/outside/h"), HoldDeadline: time.Hour})
	r := h.wait(h.runNow(tk.Name).ID, StatusWaitingDirectory)
	h.clock.Advance(59 * time.Minute)
	if n, _ := h.d.ExpireHeld(ctx); n != 0 {
		t.Fatal("expired before its deadline")
	}
	h.clock.Advance(2 * time.Minute)
	if n, _ := h.d.ExpireHeld(ctx); n != 1 {
		t.Fatal("not expired after its deadline")
	}
	got := h.wait(r.ID, StatusExpired)
	if !strings.Contains(got.Reason, "not a known place") {
		t.Fatalf("expired reason lost what it waited for: %s", got.Reason)
	}
}

func TestCancelHeldAndRunning(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	held := h.task(TaskSpec{Name: "held", Cwd: h.mkdir("home/outside/c")})
	r := h.wait(h.runNow(held.Name).ID, StatusWaitingDirectory)
	if err := h.d.Cancel(ctx, r.ID, "tester"); err != nil {
		t.Fatal(err)
	}
	h.wait(r.ID, StatusCancelled)
	long := h.task(TaskSpec{Name: "long", Cwd: h.ws, Argv: []string{"sleep", "1000"}})
	r2 := h.wait(h.runNow(long.Name).ID, StatusRunning)
	if err := h.d.Cancel(ctx, r2.ID, "tester"); err != nil {
		t.Fatal(err)
	}
	got := h.wait(r2.ID, StatusCancelled)
	if !strings.Contains(got.Reason, "tester") {
		t.Fatalf("reason: %s", got.Reason)
	}
	if err := h.d.Cancel(ctx, r2.ID, "tester"); err == nil {
		t.Fatal("cancelled a finished run")
	}
}

func TestSameDenialThreeTimesPausesTheRun(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := context.Background()
	tk := h.task(TaskSpec{Name: "agent", Cwd: h.ws, NoProgressTimeout: 200 * time.Millisecond,
		Argv: []string{"sh", "-c", "while true; do echo tick; sleep 0.05; done"}})
	r := h.wait(h.runNow(tk.Name).ID, StatusRunning)
	for i := 1; i <= MaxSameDenials; i++ {
		paused, err := h.d.RecordDenial(ctx, r.ID, "bash: rm -rf build")
		if err != nil {
			t.Fatal(err)
		}
		if paused != (i == MaxSameDenials) {
			t.Fatalf("denial %d: paused=%v", i, paused)
		}
	}
	got, _ := h.d.Run(ctx, r.ID)
	if !got.Paused || got.Status != StatusRunning {
		t.Fatalf("run not paused: %+v", got)
	}
	// Stopped, silent, and not mistaken for stuck by the watchdog.
	time.Sleep(500 * time.Millisecond)
	if got, _ := h.d.Run(ctx, r.ID); got.Status != StatusRunning {
		t.Fatalf("paused run ended: %s (%s)", got.Status, got.Reason)
	}
	items, _ := h.d.Inbox(ctx)
	if len(items) != 1 || items[0].Kind != InboxPausedRun {
		t.Fatalf("inbox: %+v", items)
	}
	// Its slot was given back: another run goes.
	h.wait(h.runNow(h.task(TaskSpec{Name: "x", Cwd: h.ws}).Name).ID, StatusSucceeded)
	if err := h.d.Resume(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.d.Cancel(ctx, r.ID, "tester"); err != nil {
		t.Fatal(err)
	}
	h.wait(r.ID, StatusCancelled)
}

func TestPruneLogs(t *testing.T) {
	h := newHarness(t, withClock(t0), withOptions(func(o *Options) { o.LogMaxTotal = 3000; o.LogMaxAge = 24 * time.Hour }))
	h.start()
	ctx := context.Background()
	tk := h.task(TaskSpec{Name: "p", Cwd: h.ws, Argv: []string{"sh", "-c", "head -c 1000 /dev/zero | tr '\\0' x"}})
	var ids []uint
	for i := 0; i < 6; i++ {
		ids = append(ids, h.wait(h.runNow(tk.Name).ID, StatusSucceeded).ID)
		h.clock.Advance(time.Minute)
	}
	res, err := h.d.PruneLogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed < 3 {
		t.Fatalf("removed %d logs, want at least 3 to get under 3000 bytes", res.Removed)
	}
	first, _ := h.d.Run(ctx, ids[0])
	last, _ := h.d.Run(ctx, ids[5])
	if !first.LogPruned || last.LogPruned {
		t.Fatal("pruned the wrong end: oldest must go first")
	}
	if _, err := os.Stat(first.LogPath); !os.IsNotExist(err) {
		t.Fatal("pruned log still on disk")
	}
	// Age: a day later everything goes; the run records stay.
	h.clock.Advance(25 * time.Hour)
	h.d.PruneLogs(ctx)
	var n int64
	h.db.Model(&Run{}).Where("task_id = ? AND log_pruned = ?", tk.ID, false).Count(&n)
	if n != 0 {
		t.Fatalf("%d old logs kept", n)
	}
	if rs := h.runsOf(tk.ID); len(rs) != 6 {
		t.Fatalf("run records lost: %d", len(rs))
	}
}

func TestInboxOrder(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(m int) *time.Time { x := now.Add(time.Duration(m) * time.Minute); return &x }
	held := []Run{
		{ID: 1, TaskName: "a", Status: StatusWaitingDirectory, WaitingDir: "/x", HoldUntil: at(600), HeldSince: at(0), Reason: "r"},
		{ID: 2, TaskName: "b", Status: StatusWaitingDirectory, WaitingDir: "/x", HoldUntil: at(300), HeldSince: at(5), Reason: "r"},
		{ID: 3, TaskName: "c", Status: StatusWaitingDirectory, WaitingDir: "/y", HoldUntil: at(400), HeldSince: at(1), Reason: "r"},
		{ID: 4, TaskName: "d", Status: StatusWaitingApproval, ApprovalID: "req-4", HoldUntil: at(900), HeldSince: at(2)},
		{ID: 5, TaskName: "e", Status: StatusRunning, Paused: true, Reason: "paused: ..."},
	}
	approvals := []InboxApproval{
		{ID: "req-4", Tool: "exec", Tier: "P2", Summary: "rm -rf build", RunID: 4, RequestedAt: now},
		{ID: "mcp-1", Tool: "bash", Tier: "P1", Summary: "git push", RequestedAt: now},
	}
	items := BuildInbox(held, []Task{{Name: "flaky", Paused: true, PauseReason: "failed 5 times"}}, approvals)
	var keys []string
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	want := []string{"req-4", "mcp-1", "run:5", "dir:/x", "dir:/y", "task:flaky"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Fatalf("order %v, want %v", keys, want)
	}
	if items[3].Answer != "airlock authorize /x" || len(items[3].Runs) != 2 {
		t.Fatalf("directory item: %+v", items[3])
	}
	for _, it := range items {
		if it.Asked == "" || it.Answer == "" || len(it.Actions) == 0 {
			t.Fatalf("item without question or answer: %+v", it)
		}
	}
}
