package dispatch

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestPauseSkipsScheduledRunsUntilResumed(t *testing.T) {
	h := newHarness(t, withClock(t0))
	h.start()
	ctx := context.Background()
	tk := h.task(TaskSpec{Name: "nightly", Cwd: h.ws, Schedule: "* * * * *", Argv: []string{"true"}})

	st, err := h.d.SetPaused(ctx, true, "tray")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Paused || st.PausedBy != "tray" || st.PausedAt == nil || st.Tasks != 1 {
		t.Fatalf("state after pause = %+v, want paused by tray with 1 task", st)
	}
	if !strings.Contains(h.ev.text(), `dispatch.state {"paused":true`) {
		t.Fatalf("no dispatch.state event for the pause:\n%s", h.ev.text())
	}
	// Pausing again keeps who paused first.
	if st, _ := h.d.SetPaused(ctx, true, "cli"); st.PausedBy != "tray" {
		t.Fatalf("second pause replaced the author: %+v", st)
	}

	h.fireAt(t0.Add(time.Minute))
	rs := h.runsOf(tk.ID)
	if len(rs) != 1 || rs[0].Status != StatusSkipped || rs[0].SkipReason != SkipPaused ||
		!strings.Contains(rs[0].Reason, "dispatch paused by tray") || !strings.Contains(rs[0].Reason, "airlock dispatch resume") {
		t.Fatalf("scheduled occurrence while paused = %+v, want skipped with the reason and the way out", rs)
	}

	// A person's run-now still runs while dispatch is paused.
	r := h.runNow("nightly")
	h.wait(r.ID, StatusSucceeded)

	// The pause survives a restart of the app.
	h.closeAll()
	h.open()
	h.start()
	if st := h.d.State(); !st.Paused || st.PausedBy != "tray" {
		t.Fatalf("after restart state = %+v, want still paused by tray", st)
	}
	h.fireAt(t0.Add(2 * time.Minute))
	if rs := h.runsOf(tk.ID); rs[len(rs)-1].Status != StatusSkipped {
		t.Fatalf("after restart the occurrence ran while paused: %+v", rs[len(rs)-1])
	}

	st, err = h.d.SetPaused(ctx, false, "window")
	if err != nil || st.Paused {
		t.Fatalf("resume = %+v, %v", st, err)
	}
	h.fireAt(t0.Add(3 * time.Minute))
	rs = h.runsOf(tk.ID)
	last := rs[len(rs)-1]
	if last.Status == StatusSkipped {
		t.Fatalf("after resume the occurrence was skipped: %+v", last)
	}
	h.wait(last.ID, StatusSucceeded)
	// Skipped occurrences during the pause are not run afterwards.
	ran := 0
	for _, r := range rs {
		if r.Trigger == TriggerSchedule && r.Status != StatusSkipped {
			ran++
		}
	}
	if ran != 1 {
		t.Fatalf("%d scheduled runs ran, want 1 (only the one after resume)", ran)
	}
}

func TestStateCountsTasksAndRunning(t *testing.T) {
	h := newHarness(t, withClock(t0))
	h.start()
	gate := h.mkdir("gate-dir") + "/open"
	h.task(TaskSpec{Name: "a", Cwd: h.ws, Schedule: "0 2 * * *", Argv: []string{"sh", "-c", "while [ ! -e " + gate + " ]; do sleep 0.01; done"}})
	h.task(TaskSpec{Name: "manual", Cwd: h.ws, Argv: []string{"true"}})
	if st := h.d.State(); st.Tasks != 1 || st.Running != 0 || st.Paused {
		t.Fatalf("state = %+v, want 1 scheduled task, nothing running", st)
	}
	r := h.runNow("a")
	h.wait(r.ID, StatusRunning)
	if st := h.d.State(); st.Running != 1 {
		t.Fatalf("state = %+v, want 1 running", st)
	}
	// The event follows the database update: wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(h.ev.text(), `"running":1`) {
		if time.Now().After(deadline) {
			t.Fatalf("no dispatch.state event when the run started:\n%s", h.ev.text())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h.wait(r.ID, StatusSucceeded)
}
