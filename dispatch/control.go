package dispatch

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/redact"
)

// Cancel cancels a run: a running one is killed with its whole process tree; a queued or
// held one is recorded cancelled.
func (d *Dispatcher) Cancel(ctx context.Context, id uint, by string) error {
	if by == "" {
		by = "the person"
	}
	r, err := d.Run(ctx, id)
	if err != nil {
		return err
	}
	if Finished(r.Status) {
		return invalidf("cancel run #%d: it already ended (%s)", id, r.Status)
	}
	d.mu.Lock()
	ar := d.active[id]
	d.mu.Unlock()
	if ar != nil {
		ar.mu.Lock()
		ar.cancelledBy = by
		pid, paused := ar.pid, ar.paused
		ar.mu.Unlock()
		ar.cancel(errCancelled)
		if paused {
			_ = signalGroup(pid, syscall.SIGCONT) // let a stopped tree see its SIGKILL promptly
		}
		return nil
	}
	if r.Status == StatusRunning {
		return invalidf("cancel run #%d: it is running under another dispatcher (%s)", id, r.Owner)
	}
	d.finish(&r, StatusCancelled, "cancelled by "+by, nil)
	return nil
}

// RecordDenial counts a denied request (subject: the tool and its parameters) made during
// a run. The same request denied MaxSameDenials times pauses the run (its process tree is
// stopped and its concurrency slot given back) and tells the person; it returns true then.
func (d *Dispatcher) RecordDenial(ctx context.Context, id uint, subject string) (bool, error) {
	// Counted, stored and shown in its redacted form (the run record keeps no credential).
	subject = redact.String(subject)
	r, err := d.Run(ctx, id)
	if err != nil {
		return false, err
	}
	if r.Denials == nil {
		r.Denials = map[string]int{}
	}
	r.Denials[subject]++
	n := r.Denials[subject]
	if err := d.db.WithContext(ctx).Model(&Run{ID: id}).Select("denials").Updates(&Run{Denials: r.Denials}).Error; err != nil {
		return false, fmt.Errorf("record denial for run #%d: %w", id, err)
	}
	if n < MaxSameDenials || r.Status != StatusRunning {
		return false, nil
	}
	d.mu.Lock()
	ar := d.active[id]
	d.mu.Unlock()
	if ar == nil {
		return false, nil
	}
	ar.mu.Lock()
	if ar.paused {
		ar.mu.Unlock()
		return true, nil
	}
	ar.paused = true
	pid := ar.pid
	ar.mu.Unlock()
	_ = signalGroup(pid, syscall.SIGSTOP)
	d.releaseSlot(ar)
	reason := fmt.Sprintf("paused: the same request was denied %d times (%s); resume or cancel the run", n, subject)
	d.db.WithContext(ctx).Model(&Run{}).Where("id = ?", id).Updates(map[string]any{"paused": true, "reason": reason})
	d.publishRun(id)
	d.inboxChanged()
	d.notice(api.DispatchNotice{Kind: api.NoticeNeedsYou, RunID: id, Task: r.TaskName, Message: reason})
	return true, nil
}

// Resume continues a run paused after repeated denials, once a concurrency slot is free.
func (d *Dispatcher) Resume(ctx context.Context, id uint) error {
	d.mu.Lock()
	ar := d.active[id]
	d.mu.Unlock()
	if ar == nil {
		return invalidf("resume run #%d: it is not paused here", id)
	}
	ar.mu.Lock()
	paused := ar.paused
	ar.mu.Unlock()
	if !paused {
		return invalidf("resume run #%d: it is not paused", id)
	}
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	ar.mu.Lock()
	ar.paused, ar.holdsSlot = false, true
	pid, lg := ar.pid, ar.log
	ar.mu.Unlock()
	if lg != nil {
		_, _ = lg.Write(nil) // restart the no-progress clock
	}
	_ = signalGroup(pid, syscall.SIGCONT)
	d.db.WithContext(ctx).Model(&Run{}).Where("id = ?", id).Updates(map[string]any{"paused": false, "reason": ""})
	d.publishRun(id)
	d.inboxChanged()
	return nil
}

// Run returns a run by id.
func (d *Dispatcher) Run(ctx context.Context, id uint) (Run, error) {
	var r Run
	err := d.db.WithContext(ctx).Take(&r, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Run{}, fmt.Errorf("run #%d: %w (see `airlock runs list`)", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run #%d: %w", id, err)
	}
	return r, nil
}

// RunFilter selects runs for Runs.
type RunFilter struct {
	// Task is a task name or id ("" for all).
	Task string
	// Waiting selects held runs only (waiting_directory, waiting_approval, paused).
	Waiting bool
	// Statuses selects these states ("" for all).
	Statuses []string
	// Limit caps the result (default 100), newest first.
	Limit int
	// Offset skips that many of the newest first (a page further back).
	Offset int
}

// Runs lists runs, newest first.
func (d *Dispatcher) Runs(ctx context.Context, f RunFilter) ([]Run, error) {
	q := d.db.WithContext(ctx).Order("id DESC")
	if f.Task != "" {
		t, err := d.Task(ctx, f.Task)
		if err != nil {
			return nil, err
		}
		q = q.Where("task_id = ?", t.ID)
	}
	if f.Waiting {
		q = q.Where(heldRuns)
	}
	if len(f.Statuses) > 0 {
		q = q.Where("status IN ?", f.Statuses)
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	var out []Run
	if f.Offset > 0 {
		q = q.Offset(f.Offset)
	}
	if err := q.Limit(f.Limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// LogPath returns the path of a run's log file ("" when it has none or it was pruned).
// The app serves it for `airlock runs logs ID [-f]`; live chunks come as run.log events.
func (d *Dispatcher) LogPath(ctx context.Context, id uint) (string, error) {
	r, err := d.Run(ctx, id)
	if err != nil {
		return "", err
	}
	if r.LogPruned {
		return "", fmt.Errorf("run #%d: its log was pruned (logs are kept 30 days / 1 GiB)", id)
	}
	return r.LogPath, nil
}
