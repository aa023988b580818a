package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

var activeStatuses = []string{StatusQueued, StatusWaitingDirectory, StatusWaitingApproval, StatusRunning}

// claim records the occurrence (task, at, trigger) with the given status. It returns
// created=false when another dispatcher (or an earlier pass) already claimed it: a unique
// index on (task_id, scheduled_at, trigger) makes the claim atomic.
func (d *Dispatcher) claim(ctx context.Context, t Task, at time.Time, trigger, status, skipReason, reason string) (Run, bool, error) {
	r := Run{
		TaskID: t.ID, TaskName: t.Name, ScheduledAt: at.UTC(), Trigger: trigger, Status: status,
		SkipReason: skipReason, Reason: reason, Cwd: t.Cwd, Department: t.Department,
	}
	if Finished(status) {
		now := d.now().UTC()
		r.FinishedAt = &now
	}
	res := d.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r)
	if res.Error != nil {
		return Run{}, false, fmt.Errorf("claim %s at %s: %w", t.Name, at.Format(time.RFC3339), res.Error)
	}
	if res.RowsAffected == 0 {
		return Run{}, false, nil
	}
	d.runUpdated(r)
	return r, true, nil
}

// fire claims one occurrence and starts it, or records why it did not run.
func (d *Dispatcher) fire(ctx context.Context, t Task, at time.Time, trigger string, catchUp bool) error {
	if trigger == TriggerSchedule {
		if st := d.State(); st.Paused {
			_, _, err := d.claim(ctx, t, at, trigger, StatusSkipped, SkipPaused, skipReason(st))
			return err
		}
	}
	if t.Paused && trigger == TriggerSchedule {
		_, _, err := d.claim(ctx, t, at, trigger, StatusSkipped, SkipPaused, "task paused: "+t.PauseReason+" (enable it again with `airlock task enable "+t.Name+"`)")
		return err
	}
	if t.Overlap == OverlapSkip {
		var prev Run
		err := d.db.WithContext(ctx).Where("task_id = ? AND status IN ?", t.ID, activeStatuses).Order("id").Take(&prev).Error
		if err == nil {
			skip, reason := SkipOverlap, fmt.Sprintf("overlap: run #%d of this task is still %s (overlap policy: skip)", prev.ID, prev.Status)
			if prev.Status == StatusQueued {
				skip, reason = SkipSlotBusy, fmt.Sprintf("slot busy: run #%d of this task is still waiting for a concurrency slot (overlap policy: skip)", prev.ID)
			}
			_, _, err := d.claim(ctx, t, at, trigger, StatusSkipped, skip, reason)
			return err
		}
	}
	if full, why, err := d.backlogFull(ctx, t); err != nil || full {
		if err == nil {
			_, _, err = d.claim(ctx, t, at, trigger, StatusSkipped, SkipBacklog, why)
		}
		return err
	}
	reason := ""
	if catchUp {
		reason = "missed while the app was closed; running once (missed-run policy: run_once)"
	}
	r, created, err := d.claim(ctx, t, at, trigger, StatusQueued, "", reason)
	if err != nil || !created {
		return err
	}
	d.launch(r.ID)
	return nil
}

// ErrOverlap is returned by RunNow when a run of the task is active and its overlap
// policy is skip.
var ErrOverlap = errors.New("a run of this task is still active")

// RunNow starts a run of the task now, with exactly the context of a scheduled run
// (same gate, policy, environment and approvals).
func (d *Dispatcher) RunNow(ctx context.Context, name string) (Run, error) {
	t, err := d.Task(ctx, name)
	if err != nil {
		return Run{}, err
	}
	if t.Overlap == OverlapSkip {
		var prev Run
		if err := d.db.WithContext(ctx).Where("task_id = ? AND status IN ?", t.ID, activeStatuses).Take(&prev).Error; err == nil {
			return Run{}, fmt.Errorf("run %s now: %w (run #%d is %s; cancel it or set overlap to queue or allow)", t.Name, ErrOverlap, prev.ID, prev.Status)
		}
	}
	at := d.now()
	for i := 0; i < 100; i++ {
		r, created, err := d.claim(ctx, t, at, TriggerManual, StatusQueued, "", "run now")
		if err != nil {
			return Run{}, err
		}
		if created {
			d.launch(r.ID)
			return r, nil
		}
		at = at.Add(time.Microsecond)
	}
	return Run{}, fmt.Errorf("run %s now: could not claim an occurrence", t.Name)
}
