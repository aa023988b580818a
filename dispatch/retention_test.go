package dispatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Retention removes run records by age and by count per task, with their logs, and never
// a run still queued, held, running or paused, nor the last run of a task.
func TestPruneRunRecords(t *testing.T) {
	h := newHarness(t, withClock(t0), withOptions(func(o *Options) { o.RunMaxAge = 48 * time.Hour; o.RunMaxCount = 4 }))
	ctx := context.Background()
	ago := func(d time.Duration) *time.Time { x := t0.Add(-d).UTC(); return &x }
	day := 24 * time.Hour
	type row struct {
		name     string
		status   string
		finished *time.Time
		paused   bool
		kept     bool
	}
	tasks := []struct {
		task string
		rows []row
	}{
		{"age", []row{
			{"old, succeeded", StatusSucceeded, ago(10 * day), false, false},
			{"old, waiting for a directory", StatusWaitingDirectory, nil, false, true},
			{"old, running and paused", StatusRunning, nil, true, true},
			{"old, queued", StatusQueued, nil, false, true},
			{"old, failed", StatusFailed, ago(9 * day), false, false},
			{"old, skipped", StatusSkipped, ago(3 * day), false, false},
			{"recent, succeeded", StatusSucceeded, ago(time.Hour), false, true},
		}},
		{"last", []row{
			{"old, but the task's last run", StatusFailed, ago(30 * day), false, true},
		}},
		{"count", []row{
			{"1st, waiting for approval", StatusWaitingApproval, nil, false, true},
			{"2nd", StatusSucceeded, ago(6 * time.Hour), false, false},
			{"3rd", StatusSkipped, ago(5 * time.Hour), false, false},
			{"4th", StatusSucceeded, ago(4 * time.Hour), false, false},
			{"5th", StatusCancelled, ago(3 * time.Hour), false, true},
			{"6th", StatusSucceeded, ago(2 * time.Hour), false, true},
			{"7th", StatusInterrupted, ago(time.Hour), false, true},
			{"8th", StatusSucceeded, ago(time.Minute), false, true},
		}},
	}
	type made struct {
		id   uint
		what string
		kept bool
		log  string
	}
	var all []made
	for _, tc := range tasks {
		tk := h.task(TaskSpec{Name: tc.task, Cwd: h.ws, Overlap: OverlapAllow})
		for i, r := range tc.rows {
			run := Run{TaskID: tk.ID, TaskName: tk.Name, ScheduledAt: t0.Add(-time.Duration(len(tc.rows)-i) * day), Trigger: TriggerSchedule,
				Status: r.status, FinishedAt: r.finished, Paused: r.paused, Cwd: h.ws}
			if err := h.db.Create(&run).Error; err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(h.logDir, fmt.Sprintf("%d.log", run.ID))
			if err := os.WriteFile(log, []byte("output\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			h.db.Model(&Run{}).Where("id = ?", run.ID).Update("log_path", log)
			all = append(all, made{run.ID, tc.task + ": " + r.name, r.kept, log})
		}
	}

	res, err := h.d.PruneLogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var left []uint
	h.db.Model(&Run{}).Order("id").Pluck("id", &left)
	removed := 0
	for _, m := range all {
		_, statErr := os.Stat(m.log)
		switch have := slices.Contains(left, m.id); {
		case have != m.kept:
			t.Errorf("run #%d (%s): kept = %v, want %v", m.id, m.what, have, m.kept)
		case !m.kept && !os.IsNotExist(statErr):
			t.Errorf("run #%d (%s): record pruned but its log is still on disk", m.id, m.what)
		}
		if !m.kept {
			removed++
		}
	}
	if res.RunsRemoved != removed {
		t.Errorf("RunsRemoved = %d, want %d", res.RunsRemoved, removed)
	}
	// Pruning again removes nothing more.
	if res, err := h.d.PruneLogs(ctx); err != nil || res.RunsRemoved != 0 {
		t.Fatalf("second prune removed %d: %v", res.RunsRemoved, err)
	}
}

// Under overlap queue and allow, a task's backlog is capped: the occurrence beyond
// MaxBacklog leaves a skipped row that says the backlog was full, and runs again once
// the backlog drains.
func TestOverlapBacklogIsCapped(t *testing.T) {
	for _, policy := range []string{OverlapQueue, OverlapAllow} {
		t.Run(policy, func(t *testing.T) {
			h := newHarness(t, withClock(t0), withOptions(func(o *Options) { o.MaxBacklog = 2 }))
			h.start()
			gate := filepath.Join(h.root, "gate")
			tk := h.task(TaskSpec{Name: "b", Cwd: h.ws, Schedule: "* * * * *", Overlap: policy,
				Argv: []string{"sh", "-c", "while [ ! -e " + gate + " ]; do sleep 0.01; done"}})
			for i := 1; i <= 4; i++ {
				h.fireAt(t0.Add(time.Duration(i) * time.Minute))
			}
			rs := h.runsOf(tk.ID)
			if len(rs) != 4 {
				t.Fatalf("%d rows, want 4 (every occurrence leaves a row)", len(rs))
			}
			for _, r := range rs[2:] {
				if r.Status != StatusSkipped || r.SkipReason != SkipBacklog || !strings.Contains(r.Reason, "skipped: backlog full (2 queued") {
					t.Fatalf("occurrence beyond the cap: %s/%s %q", r.Status, r.SkipReason, r.Reason)
				}
			}
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, r := range rs[:2] {
				h.wait(r.ID, StatusSucceeded)
			}
			h.fireAt(t0.Add(5 * time.Minute))
			rs = h.runsOf(tk.ID)
			h.wait(rs[len(rs)-1].ID, StatusSucceeded)
		})
	}
}

// Run now is capped as the schedule is: under overlap queue and allow, a Run now beyond
// MaxBacklog is refused with ErrBacklogFull and the ways out, records no run, and
// concurrent calls cannot pass the cap together; once the backlog drains it runs again.
func TestRunNowBacklogIsCapped(t *testing.T) {
	for _, policy := range []string{OverlapQueue, OverlapAllow} {
		t.Run(policy, func(t *testing.T) {
			h := newHarness(t, withClock(t0), withOptions(func(o *Options) { o.MaxBacklog = 2 }))
			h.start()
			gate := filepath.Join(h.root, "gate")
			tk := h.task(TaskSpec{Name: "b", Cwd: h.ws, Overlap: policy,
				Argv: []string{"sh", "-c", "while [ ! -e " + gate + " ]; do sleep 0.01; done"}})
			ctx := context.Background()
			errs := make(chan error, 6)
			var wg sync.WaitGroup
			for i := 0; i < 6; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := h.d.RunNow(ctx, "b")
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			started := 0
			for err := range errs {
				switch {
				case err == nil:
					started++
				case !errors.Is(err, ErrBacklogFull) || !strings.Contains(err.Error(), "dispatch.max_backlog = 2") ||
					!strings.Contains(err.Error(), "airlock runs cancel ID"):
					t.Errorf("a refused Run now: %v, want ErrBacklogFull naming the cap and the ways out", err)
				}
			}
			rs := h.runsOf(tk.ID)
			if started != 2 || len(rs) != 2 {
				t.Fatalf("%d Run nows started, %d rows; want exactly the cap, 2", started, len(rs))
			}
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				h.wait(r.ID, StatusSucceeded)
			}
			r, err := h.d.RunNow(ctx, "b")
			if err != nil {
				t.Fatalf("Run now once the backlog drained: %v", err)
			}
			h.wait(r.ID, StatusSucceeded)
		})
	}
}
