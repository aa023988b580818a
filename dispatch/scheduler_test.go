package dispatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC) // a Monday

// fireAt moves the clock to at and fires what is due.
func (h *harness) fireAt(at time.Time) {
	h.clock.mu.Lock()
	h.clock.t = at
	h.clock.mu.Unlock()
	h.d.FireDue(context.Background())
}

func TestScheduledRunPassesScheduledAndStartedAt(t *testing.T) {
	h := newHarness(t, withClock(t0))
	h.start()
	tk := h.task(TaskSpec{Name: "env", Cwd: h.ws, Schedule: "0 2 * * *", TimeZone: "Europe/Madrid",
		Argv: []string{"sh", "-c", "echo sched=$AIRLOCK_SCHEDULED_AT start=$AIRLOCK_STARTED_AT"}})
	next, _ := h.d.NextRuns(tk, 1)
	h.fireAt(next[0].Add(3 * time.Second))
	rs := h.runsOf(tk.ID)
	if len(rs) != 1 {
		t.Fatalf("%d runs, want 1", len(rs))
	}
	r := h.wait(rs[0].ID, StatusSucceeded)
	log := readFile(t, r.LogPath)
	if !strings.Contains(log, "sched=2026-03-03T01:00:00Z") || !strings.Contains(log, "start=2026-03-03T01:00:03Z") {
		t.Fatalf("AIRLOCK_SCHEDULED_AT/STARTED_AT wrong:\n%s", log)
	}
}

func TestOverlapPolicies(t *testing.T) {
	for _, policy := range []string{OverlapSkip, OverlapQueue, OverlapAllow} {
		t.Run(policy, func(t *testing.T) {
			h := newHarness(t, withClock(t0))
			h.start()
			gate := filepath.Join(h.root, "gate")
			// Each run waits until the gate file exists.
			tk := h.task(TaskSpec{Name: "o", Cwd: h.ws, Schedule: "* * * * *", Overlap: policy,
				Argv: []string{"sh", "-c", "while [ ! -e " + gate + " ]; do sleep 0.01; done"}})
			h.fireAt(t0.Add(time.Minute))
			first := h.runsOf(tk.ID)[0]
			h.wait(first.ID, StatusRunning)
			h.fireAt(t0.Add(2 * time.Minute))
			rs := h.runsOf(tk.ID)
			if len(rs) != 2 {
				t.Fatalf("%d rows, want 2 (every occurrence leaves a row)", len(rs))
			}
			second := rs[1]
			switch policy {
			case OverlapSkip:
				if second.Status != StatusSkipped || second.SkipReason != SkipOverlap || !strings.Contains(second.Reason, fmt.Sprintf("#%d", first.ID)) {
					t.Fatalf("second occurrence: %s/%s %q", second.Status, second.SkipReason, second.Reason)
				}
			case OverlapQueue:
				// It waits for the first one: it must not be running while the first runs.
				time.Sleep(100 * time.Millisecond)
				if r, _ := h.d.Run(context.Background(), second.ID); r.Status != StatusQueued {
					t.Fatalf("queued occurrence is %s while the first runs", r.Status)
				}
			case OverlapAllow:
				h.wait(second.ID, StatusRunning)
			}
			os.WriteFile(gate, nil, 0o644)
			h.wait(first.ID, StatusSucceeded)
			if policy != OverlapSkip {
				h.wait(second.ID, StatusSucceeded)
			}
		})
	}
}

func TestMissedRunsWhileClosed(t *testing.T) {
	for _, policy := range []string{MissedSkip, MissedRunOnce} {
		t.Run(policy, func(t *testing.T) {
			h := newHarness(t, withClock(t0))
			h.start()
			tk := h.task(TaskSpec{Name: "m", Cwd: h.ws, Schedule: "*/10 * * * *", Missed: policy})
			h.fireAt(t0.Add(10 * time.Minute))
			h.wait(h.runsOf(tk.ID)[0].ID, StatusSucceeded)
			h.closeAll()

			// The app is closed for an hour and five minutes: six occurrences fall, from
			// 08:20 to 09:10; they leave one row for the span (run_once runs the latest).
			h.clock.Advance(65 * time.Minute)
			h.open()
			dg := h.start()
			rs := h.runsOf(tk.ID)
			missed, want := 6, 2
			if policy == MissedRunOnce {
				missed, want = 5, 3
			}
			if len(rs) != want {
				t.Fatalf("%d rows, want %d: one for the span of missed occurrences", len(rs), want)
			}
			sp := rs[1]
			until := t0.Add(time.Duration(10+10*missed) * time.Minute)
			if sp.Status != StatusSkipped || sp.SkipReason != SkipMissed || sp.MissedCount != missed ||
				!sp.ScheduledAt.Equal(t0.Add(20*time.Minute)) || sp.MissedUntil == nil || !sp.MissedUntil.Equal(until) ||
				!strings.Contains(sp.Reason, fmt.Sprintf("%d occurrences between 2026-03-02T08:20:00Z and %s: the app was closed", missed, until.Format(time.RFC3339))) {
				t.Fatalf("span row: %+v", sp)
			}
			if policy == MissedRunOnce {
				r := h.wait(rs[2].ID, StatusSucceeded)
				if !r.ScheduledAt.Equal(t0.Add(70*time.Minute)) || !strings.Contains(r.CatchUp, "late: the app was closed") {
					t.Fatalf("run_once ran %s (catch-up %q), want the latest occurrence, late", r.ScheduledAt, r.CatchUp)
				}
			}
			if len(dg.Missed) != 1 || !strings.Contains(dg.Text, fmt.Sprintf("%d occurrences did not run", missed)) {
				t.Fatalf("digest: %d missed rows, %q", len(dg.Missed), dg.Text)
			}
			// Restarting again does not record them twice.
			h.closeAll()
			h.open()
			h.start()
			if n := len(h.runsOf(tk.ID)); n != want {
				t.Fatalf("after a second restart: %d rows, want %d", n, want)
			}
		})
	}
}

// A year closed with an every-minute task leaves one row that counts every occurrence
// (none vanish), and a late run keeps why it is late once it started and ended.
func TestLongDowntimeIsOneSpan(t *testing.T) {
	h := newHarness(t, withClock(t0), withOptions(func(o *Options) { o.MissedGrace = 10 * time.Second }))
	h.start()
	tk := h.task(TaskSpec{Name: "often", Cwd: h.ws, Schedule: "* * * * *", Missed: MissedRunOnce})
	h.closeAll()
	h.clock.Advance(365*24*time.Hour + 30*time.Second)
	h.open()
	h.start()
	rs := h.runsOf(tk.ID)
	if len(rs) != 2 {
		t.Fatalf("%d rows, want 2 (the span and the catch-up run)", len(rs))
	}
	want := 365*24*60 - 1 // every minute of the year but the one that runs
	if sp := rs[0]; sp.MissedCount != want || !sp.ScheduledAt.Equal(t0.Add(time.Minute)) ||
		!strings.Contains(sp.Reason, fmt.Sprintf("%d occurrences between 2026-03-02T08:01:00Z and 2027-03-02T07:59:00Z: the app was closed (run_once", want)) {
		t.Fatalf("span: %d occurrences from %s: %q, want %d from %s", sp.MissedCount, sp.ScheduledAt, sp.Reason, want, t0.Add(time.Minute))
	}
	r := h.wait(rs[1].ID, StatusSucceeded)
	if !strings.Contains(r.CatchUp, "late: the app was closed") {
		t.Fatalf("the finished catch-up run lost why it ran late: catch-up %q, reason %q", r.CatchUp, r.Reason)
	}
}

// watchRows polls until task id has n rows and returns them.
func (h *harness) watchRows(id uint, n int) []Run {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if rs := h.runsOf(id); len(rs) >= n {
			return rs
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("task %d: %d rows, want %d", id, len(h.runsOf(id)), n)
	return nil
}

// The scheduler notices the wall clock moving ahead of the monotonic one on its own (no
// FireDue from the test): the occurrences in the gap are recorded with the right cause,
// the one due runs, and one digest goes out.
func TestClockGapReplansWithTheCause(t *testing.T) {
	tests := []struct {
		name  string
		move  func(c *fakeClock, d time.Duration)
		cause string
	}{
		{"clock set forward", (*fakeClock).Jump, "the clock jumped forward"},
		{"machine asleep", (*fakeClock).Sleep, "the machine was asleep"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, withClock(t0))
			h.start()
			tk := h.task(TaskSpec{Name: "tick", Cwd: h.ws, Schedule: "*/10 * * * *"})
			tc.move(h.clock, 3*time.Hour+30*time.Second)
			h.d.sched.poke() // the scheduler's turn: its check interval or logind's wake
			rs := h.watchRows(tk.ID, 2)
			sp := rs[0]
			if sp.Status != StatusSkipped || sp.MissedCount != 17 || !strings.Contains(sp.Reason, "17 occurrences between") ||
				!strings.Contains(sp.Reason, ": "+tc.cause+" (a later occurrence ran instead)") {
				t.Fatalf("span row: %d, %q; want 17 occurrences, %s", sp.MissedCount, sp.Reason, tc.cause)
			}
			r := h.wait(rs[1].ID, StatusSucceeded)
			if !r.ScheduledAt.Equal(t0.Add(3*time.Hour)) || r.CatchUp != "" {
				t.Fatalf("the due occurrence: %s, catch-up %q", r.ScheduledAt, r.CatchUp)
			}
			if n := strings.Count(h.ev.text(), "dispatch.digest "); n != 1 {
				t.Fatalf("%d digests after the gap, want 1:\n%s", n, h.ev.text())
			}
		})
	}
}

// A timer that fires late with neither a sleep nor a jump (the process was stopped) does
// not blame the machine's sleep.
func TestLateTimerNamesNoSleep(t *testing.T) {
	h := newHarness(t, withClock(t0))
	h.start()
	tk := h.task(TaskSpec{Name: "sleepy", Cwd: h.ws, Schedule: "0 * * * *"})
	h.fireAt(t0.Add(3*time.Hour + 30*time.Second))
	rs := h.runsOf(tk.ID)
	if len(rs) != 2 {
		t.Fatalf("%d rows, want 2", len(rs))
	}
	if r := rs[0]; r.Status != StatusSkipped || r.MissedCount != 2 || strings.Contains(r.Reason, "asleep") || !strings.Contains(r.Reason, "late") {
		t.Fatalf("missed occurrences: %+v", r)
	}
	h.wait(rs[1].ID, StatusSucceeded)
}

func TestConcurrentClaimRunsOnce(t *testing.T) {
	// Every occurrence must run: no backlog cap gets in the way of counting them (under
	// load more than the default ten may be active at once).
	h := newHarness(t, withClock(t0), withOptions(func(o *Options) { o.MaxBacklog = 1000 }))
	h.start()
	marker := filepath.Join(h.root, "ran")
	tk := h.task(TaskSpec{Name: "once", Cwd: h.ws, Schedule: "* * * * *", Overlap: OverlapAllow,
		Argv: []string{"sh", "-c", "echo $AIRLOCK_SCHEDULED_AT >> " + marker}})
	// A second dispatcher on its own connection to the same database file.
	db2 := openTestDB(t, h.dbPath)
	d2, err := New(Options{DB: db2, Departments: h.depts, Executor: h.exec, Approvals: h.appr, LogDir: h.logDir,
		Now: h.clock.Now, NewTimer: newIdleTimer, Owner: "other/1", MaxBacklog: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	const occurrences = 20
	for i := 1; i <= occurrences; i++ {
		h.clock.Advance(time.Minute)
		var wg sync.WaitGroup
		for _, d := range []*Dispatcher{h.d, d2} {
			wg.Add(1)
			go func(d *Dispatcher) { defer wg.Done(); d.FireDue(context.Background()) }(d)
		}
		wg.Wait()
	}
	rs := h.runsOf(tk.ID)
	if len(rs) != occurrences {
		t.Fatalf("%d runs for %d occurrences", len(rs), occurrences)
	}
	for _, r := range rs {
		h.wait(r.ID, StatusSucceeded)
	}
	lines := strings.Fields(readFile(t, marker))
	if len(lines) != occurrences {
		t.Fatalf("the command ran %d times for %d occurrences", len(lines), occurrences)
	}
}

func TestDisabledAndPausedTasks(t *testing.T) {
	h := newHarness(t, withClock(t0))
	h.start()
	ctx := context.Background()
	tk := h.task(TaskSpec{Name: "flaky", Cwd: h.ws, Schedule: "* * * * *", Argv: []string{"false"}})
	for i := 1; i <= MaxConsecutiveFailures; i++ {
		h.fireAt(t0.Add(time.Duration(i) * time.Minute))
		rs := h.runsOf(tk.ID)
		h.wait(rs[len(rs)-1].ID, StatusFailed)
	}
	got, _ := h.d.Task(ctx, "flaky")
	if !got.Paused || !strings.Contains(got.PauseReason, "5 times in a row") {
		t.Fatalf("task not paused after %d failures: %+v", MaxConsecutiveFailures, got)
	}
	items, _ := h.d.Inbox(ctx)
	if len(items) != 1 || items[0].Kind != InboxPausedTask || items[0].Answer != "airlock task enable flaky" {
		t.Fatalf("inbox: %+v", items)
	}
	h.fireAt(t0.Add(6 * time.Minute))
	rs := h.runsOf(tk.ID)
	if last := rs[len(rs)-1]; last.Status != StatusSkipped || last.SkipReason != SkipPaused {
		t.Fatalf("occurrence of a paused task: %s/%s", last.Status, last.SkipReason)
	}
	// Disabling: no rows at all; enabling clears the pause, and what fell meanwhile is not "missed".
	if _, err := h.d.SetEnabled(ctx, "flaky", false); err != nil {
		t.Fatal(err)
	}
	h.fireAt(t0.Add(10 * time.Minute))
	if n := len(h.runsOf(tk.ID)); n != 6 {
		t.Fatalf("disabled task got rows: %d", n)
	}
	got, err := h.d.SetEnabled(ctx, "flaky", true)
	if err != nil || got.Paused || got.ConsecutiveFailures != 0 {
		t.Fatalf("enable: %+v %v", got, err)
	}
	h.fireAt(t0.Add(11 * time.Minute))
	if n := len(h.runsOf(tk.ID)); n != 7 {
		t.Fatalf("after enable: %d rows, want 7", n)
	}
}
