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

			// The app is closed for an hour and five minutes: six occurrences fall.
			h.clock.Advance(65 * time.Minute)
			h.open()
			dg := h.start()
			rs := h.runsOf(tk.ID)
			if len(rs) != 1+6 {
				t.Fatalf("%d rows, want 7: every occurrence leaves a row", len(rs))
			}
			ran := 0
			for _, r := range rs[1:] {
				if r.Status == StatusSkipped {
					if r.SkipReason != SkipMissed || !strings.Contains(r.Reason, "app was closed") {
						t.Fatalf("skipped without the reason: %+v", r)
					}
					continue
				}
				ran++
				h.wait(r.ID, StatusSucceeded)
				if !r.ScheduledAt.Equal(t0.Add(70 * time.Minute)) {
					t.Fatalf("run_once ran %s, want the latest occurrence", r.ScheduledAt)
				}
			}
			want := 0
			if policy == MissedRunOnce {
				want = 1
			}
			if ran != want {
				t.Fatalf("%d missed occurrences ran, want %d", ran, want)
			}
			if len(dg.Missed) < 5 {
				t.Fatalf("digest lists %d missed occurrences, want at least 5: %s", len(dg.Missed), dg.Text)
			}
			// Restarting again does not record them twice.
			h.closeAll()
			h.open()
			h.start()
			if n := len(h.runsOf(tk.ID)); n != 7 {
				t.Fatalf("after a second restart: %d rows, want 7", n)
			}
		})
	}
}

func TestMachineAsleepRecordsMissed(t *testing.T) {
	h := newHarness(t, withClock(t0))
	h.start()
	tk := h.task(TaskSpec{Name: "sleepy", Cwd: h.ws, Schedule: "0 * * * *"})
	// The timer fires three hours late (the machine slept): two missed, the due one runs.
	h.fireAt(t0.Add(3*time.Hour + 30*time.Second))
	rs := h.runsOf(tk.ID)
	if len(rs) != 3 {
		t.Fatalf("%d rows, want 3", len(rs))
	}
	for _, r := range rs[:2] {
		if r.Status != StatusSkipped || !strings.Contains(r.Reason, "asleep") {
			t.Fatalf("missed occurrence: %+v", r)
		}
	}
	h.wait(rs[2].ID, StatusSucceeded)
}

func TestConcurrentClaimRunsOnce(t *testing.T) {
	h := newHarness(t, withClock(t0))
	h.start()
	marker := filepath.Join(h.root, "ran")
	tk := h.task(TaskSpec{Name: "once", Cwd: h.ws, Schedule: "* * * * *", Overlap: OverlapAllow,
		Argv: []string{"sh", "-c", "echo $AIRLOCK_SCHEDULED_AT >> " + marker}})
	// A second dispatcher on its own connection to the same database file.
	db2 := openTestDB(t, h.dbPath)
	d2, err := New(Options{DB: db2, Departments: h.depts, Executor: h.exec, Approvals: h.appr, LogDir: h.logDir,
		Now: h.clock.Now, NewTimer: newIdleTimer, Owner: "other/1"})
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
