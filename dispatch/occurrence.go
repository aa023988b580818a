package dispatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

var activeStatuses = []string{StatusQueued, StatusWaitingDirectory, StatusWaitingApproval, StatusRunning}

// occurrenceRow is the record of task t's occurrence at (not yet claimed).
func occurrenceRow(t Task, at time.Time, trigger, status string) Run {
	return Run{TaskID: t.ID, TaskName: t.Name, ScheduledAt: at.UTC(), Trigger: trigger, Status: status, Cwd: t.Cwd, Department: t.Department}
}

// claimRow records r through db (the dispatcher's database or a transaction on it). It
// returns created=false when another dispatcher (or an earlier pass) already claimed the
// occurrence: a unique index on (task_id, scheduled_at, trigger) makes the claim atomic.
// The caller publishes it.
func (d *Dispatcher) claimRow(ctx context.Context, db *gorm.DB, r Run) (Run, bool, error) {
	if Finished(r.Status) && r.FinishedAt == nil {
		now := d.now().UTC()
		r.FinishedAt = &now
	}
	res := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r)
	if res.Error != nil {
		return Run{}, false, fmt.Errorf("claim %s at %s: %w", r.TaskName, r.ScheduledAt.Format(time.RFC3339), res.Error)
	}
	if res.RowsAffected == 0 {
		return Run{}, false, nil
	}
	return r, true, nil
}

// claimScheduled claims a scheduled occurrence through db (a transaction: the caller
// publishes and launches after it commits) and returns the row it recorded, with launch
// set when it is queued to run; otherwise the row says why it did not run. catchUp, when
// set, says why it starts late (kept on the run as CatchUp). created is false when the
// occurrence was claimed already.
func (d *Dispatcher) claimScheduled(ctx context.Context, db *gorm.DB, st State, t Task, at time.Time, catchUp string) (r Run, created, launch bool, err error) {
	r = occurrenceRow(t, at, TriggerSchedule, StatusSkipped)
	switch {
	case st.Paused:
		r.SkipReason, r.Reason = SkipPaused, skipReason(st)
	case t.Paused:
		r.SkipReason, r.Reason = SkipPaused, "task paused: "+t.PauseReason+" (enable it again with `airlock task enable "+t.Name+"`)"
	default:
		var prev Run
		if t.Overlap == OverlapSkip {
			err = db.WithContext(ctx).Where("task_id = ? AND status IN ?", t.ID, activeStatuses).Order("id").Take(&prev).Error
		}
		switch {
		case t.Overlap == OverlapSkip && err == nil && prev.Status == StatusQueued:
			r.SkipReason, r.Reason = SkipSlotBusy, fmt.Sprintf("slot busy: run #%d of this task is still waiting for a concurrency slot (overlap policy: skip)", prev.ID)
		case t.Overlap == OverlapSkip && err == nil:
			r.SkipReason, r.Reason = SkipOverlap, fmt.Sprintf("overlap: run #%d of this task is still %s (overlap policy: skip)", prev.ID, prev.Status)
		case t.Overlap == OverlapSkip && !errors.Is(err, gorm.ErrRecordNotFound):
			return Run{}, false, false, fmt.Errorf("overlap check of %s: %w", t.Name, err)
		default:
			full, why, ferr := d.backlogFull(ctx, db, t)
			if ferr != nil {
				return Run{}, false, false, ferr
			}
			if full {
				r.SkipReason, r.Reason = SkipBacklog, "skipped: backlog full "+why
				break
			}
			r.Status, r.Reason, r.CatchUp = StatusQueued, catchUp, catchUp
			launch = true
		}
	}
	r, created, err = d.claimRow(ctx, db, r)
	return r, created, launch && created, err
}

// ErrOverlap is returned by RunNow when a run of the task is active and its overlap
// policy is skip.
var ErrOverlap = errors.New("a run of this task is still active")

// ErrBacklogFull is returned by RunNow when the task, under overlap queue or allow,
// already has dispatch.max_backlog runs queued, held or running: Run now is capped as
// its schedule is, so that no button or script piles up runs without end.
var ErrBacklogFull = errors.New("the task's backlog is full")

// RunNow starts a run of the task now, with exactly the context of a scheduled run
// (same gate, policy, environment and approvals). The overlap policy and the backlog cap
// are checked in the transaction that records the run, so concurrent calls cannot pass
// them together.
func (d *Dispatcher) RunNow(ctx context.Context, name string) (Run, error) {
	t, err := d.Task(ctx, name)
	if err != nil {
		return Run{}, err
	}
	at := d.now()
	for i := 0; i < 100; i++ {
		var r Run
		var created bool
		err := d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if t.Overlap == OverlapSkip {
				var prev Run
				if err := tx.Where("task_id = ? AND status IN ?", t.ID, activeStatuses).Take(&prev).Error; err == nil {
					return fmt.Errorf("run %s now: %w (run #%d is %s; cancel it or set overlap to queue or allow)", t.Name, ErrOverlap, prev.ID, prev.Status)
				} else if !errors.Is(err, gorm.ErrRecordNotFound) {
					return fmt.Errorf("overlap check of %s: %w", t.Name, err)
				}
			}
			full, why, err := d.backlogFull(ctx, tx, t)
			if err != nil {
				return err
			}
			if full {
				return fmt.Errorf("run %s now: %w %s; wait for them, cancel one (`airlock runs cancel ID`), or raise dispatch.max_backlog in config.toml",
					t.Name, ErrBacklogFull, why)
			}
			row := occurrenceRow(t, at, TriggerManual, StatusQueued)
			row.Reason = "run now"
			r, created, err = d.claimRow(ctx, tx, row)
			return err
		})
		if err != nil {
			return Run{}, err
		}
		if created {
			d.runUpdated(r)
			d.launch(r.ID)
			return r, nil
		}
		at = at.Add(time.Microsecond)
	}
	return Run{}, fmt.Errorf("run %s now: could not claim an occurrence", t.Name)
}

// Why occurrences did not run at their time.
const (
	causeAppClosed = "the app was closed"
	causeAsleep    = "the machine was asleep"
	causeClockJump = "the clock jumped forward"
	// causeWallAhead is a wall clock that moved ahead of the monotonic one where the
	// system cannot tell a sleep from a clock set forward.
	causeWallAhead = "the clock moved ahead (the machine slept or the clock was set forward)"
	// causeLate is a timer that fired late with neither: the process was stopped or busy.
	causeLate = "dispatch reached them late (the app was stopped or too busy)"
)

// missedBatch is how many rows one statement writes (SQLite allows 32,766 variables; a
// run row has about 40 columns).
const missedBatch = 500

// dueSpan is a task's occurrences found due at once: span of them in (after, …].
type dueSpan struct {
	taskID uint
	sched  cron.Schedule
	after  time.Time
	span
}

// dispatchSpans handles what fell due for many tasks at once. Per task, the latest
// occurrence runs when it is within the grace period (or, late, under run_once); the others
// are recorded as one skipped row for the span ("412 occurrences between A and B: the app
// was closed"), whatever its length, with cause(first occurrence). The rows are written
// in one transaction, so thousands of tasks coming back from a long downtime do not stall
// the scheduler. tasks holds the task rows when the caller has them (nil: loaded here).
func (d *Dispatcher) dispatchSpans(ctx context.Context, due []dueSpan, tasks map[uint]*Task, now time.Time, cause func(time.Time) string) error {
	due = slices.DeleteFunc(due, func(s dueSpan) bool { return s.count == 0 })
	if len(due) == 0 {
		return nil
	}
	if tasks == nil {
		var err error
		if tasks, err = d.loadTasks(ctx, due); err != nil {
			return err
		}
	}
	type start struct {
		t       *Task
		at      time.Time
		catchUp string
	}
	var (
		skipped []Run
		starts  []start
		claimed []*Task
	)
	for _, ds := range due {
		t := tasks[ds.taskID]
		if t == nil || !t.Enabled {
			continue
		}
		claimed = append(claimed, t)
		last := ds.last
		late := now.Sub(last) > d.opts.MissedGrace
		runLast := !late || t.Missed == MissedRunOnce
		missed := ds.span
		if runLast {
			missed = countSpan(ds.sched, ds.after, last.Add(-time.Nanosecond))
			catchUp := ""
			if late {
				catchUp = "late: " + cause(last) + "; running the latest occurrence once (missed-run policy: run_once)"
			}
			starts = append(starts, start{t, last, catchUp})
		}
		if missed.count == 0 {
			continue
		}
		note := " (missed-run policy: skip)"
		switch {
		case runLast && late:
			note = fmt.Sprintf(" (run_once: the occurrence of %s ran instead)", last.Format(time.RFC3339))
		case runLast:
			note = " (a later occurrence ran instead)"
		}
		skipped = append(skipped, missedRow(*t, missed, cause(missed.first), note, now))
	}
	lastOf := make(map[uint]time.Time, len(due))
	for _, ds := range due {
		lastOf[ds.taskID] = ds.last.UTC()
	}
	st := d.State()
	var created []Run
	var launch []uint
	// One transaction: the records, the claims of the runs and each task's last
	// occurrence are written together (a crash leaves all or none), and thousands of
	// tasks cost one commit. Runs start once it committed.
	err := d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for start := 0; start < len(skipped); start += missedBatch {
			batch := skipped[start:min(start+missedBatch, len(skipped))]
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&batch)
			if res.Error != nil {
				return fmt.Errorf("record missed occurrences: %w", res.Error)
			}
			// The ids are known when every row went in; rows another dispatcher
			// claimed first (a race) leave the ids of the batch unknown: not published.
			if res.RowsAffected == int64(len(batch)) {
				created = append(created, batch...)
			}
		}
		for _, s := range starts {
			r, ok, run, err := d.claimScheduled(ctx, tx, st, *s.t, s.at, s.catchUp)
			if err != nil {
				return err
			}
			if ok {
				created = append(created, r)
			}
			if run {
				launch = append(launch, r.ID)
			}
		}
		// Tasks on the same schedule share their last occurrence: one update per time.
		byLast := map[time.Time][]uint{}
		for _, t := range claimed {
			byLast[lastOf[t.ID]] = append(byLast[lastOf[t.ID]], t.ID)
		}
		for last, ids := range byLast {
			for start := 0; start < len(ids); start += missedBatch {
				if err := tx.Model(&Task{}).Where("id IN ? AND (last_scheduled_at IS NULL OR last_scheduled_at < ?)", ids[start:min(start+missedBatch, len(ids))], last).
					Update("last_scheduled_at", last).Error; err != nil {
					return fmt.Errorf("record the last occurrence of %d tasks: %w", len(ids), err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range claimed {
		last := lastOf[t.ID]
		t.LastScheduledAt = &last
	}
	for _, r := range created {
		d.runUpdated(r)
	}
	for _, id := range launch {
		d.launch(id)
	}
	return nil
}

// loadTasks loads the tasks of due by id.
func (d *Dispatcher) loadTasks(ctx context.Context, due []dueSpan) (map[uint]*Task, error) {
	ids := make([]uint, len(due))
	for i, ds := range due {
		ids[i] = ds.taskID
	}
	out := make(map[uint]*Task, len(ids))
	for start := 0; start < len(ids); start += 500 {
		var ts []Task
		if err := d.db.WithContext(ctx).Where("id IN ?", ids[start:min(start+500, len(ids))]).Find(&ts).Error; err != nil {
			return nil, fmt.Errorf("load due tasks: %w", err)
		}
		for i := range ts {
			out[ts[i].ID] = &ts[i]
		}
	}
	return out, nil
}

// missedRow is the skipped record of a span of t's missed occurrences: a row of its own
// for one, a span row (MissedCount, MissedUntil) for more.
func missedRow(t Task, sp span, cause, note string, now time.Time) Run {
	r := occurrenceRow(t, sp.first, TriggerSchedule, StatusSkipped)
	fin := now.UTC()
	r.SkipReason, r.FinishedAt = SkipMissed, &fin
	r.Reason = "missed: " + cause + note
	if sp.count > 1 {
		loc, err := LoadZone(t.TimeZone)
		if err != nil {
			loc = time.UTC
		}
		until := sp.last.UTC()
		r.MissedCount, r.MissedUntil = sp.count, &until
		r.Reason = fmt.Sprintf("missed: %d occurrences between %s and %s: %s%s", sp.count,
			sp.first.In(loc).Format(time.RFC3339), sp.last.In(loc).Format(time.RFC3339), cause, note)
	}
	return r
}

// recordDowntime records, at start, what fell due for each task while the app was
// closed (after its last claimed occurrence), and moves the tasks' last occurrence on.
func (d *Dispatcher) recordDowntime(ctx context.Context, tasks []Task, now time.Time) error {
	byID := make(map[uint]*Task, len(tasks))
	var due []dueSpan
	for i := range tasks {
		t := &tasks[i]
		if t.LastScheduledAt == nil {
			continue
		}
		sched, _, err := ParseSchedule(t.Schedule, t.TimeZone)
		if err != nil {
			continue // addLocked reports it
		}
		byID[t.ID] = t
		due = append(due, dueSpan{taskID: t.ID, sched: sched, after: *t.LastScheduledAt, span: countSpan(sched, *t.LastScheduledAt, now)})
	}
	return d.dispatchSpans(ctx, due, byID, now, func(time.Time) string { return causeAppClosed })
}
