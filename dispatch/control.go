package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	if note := d.endingNote(id); note != "" {
		return invalidf("cancel run #%d: nothing to cancel, it %s", id, note)
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
		evidence, gone := d.ownerGone(&r)
		if !gone {
			return invalidf("cancel run #%d: it is running under another dispatcher (%s): cancel it there", id, r.Owner)
		}
		// Nothing runs it: it ended when its dispatcher did.
		d.endOrphan(&r, "cancelled by "+by+"; found running with no dispatcher", evidence)
		return nil
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

// WaitForPerson marks a running run as waiting for a person's answer to requestID, a
// question its command raised mid-run (reason says what is asked), and gives back its
// concurrency slot meanwhile, as a held run does. The run shows as waiting (Runs with
// Waiting, the inbox) while its process keeps its place. resume ends the wait: it clears
// the mark and takes a concurrency slot again, waiting for a free one, so a resumed run
// never exceeds the limit; it returns ctx's error when ctx ends first (the run then
// goes on without a slot, whatever it was about to do refused). Overlapping waits of
// one run give the slot back with the first and take it again after the last. Unknown
// or finished runs wait without any of this.
func (d *Dispatcher) WaitForPerson(id uint, requestID, reason string) (resume func(ctx context.Context) error) {
	d.mu.Lock()
	ar := d.active[id]
	d.mu.Unlock()
	if ar == nil {
		return func(context.Context) error { return nil }
	}
	ar.mu.Lock()
	ar.personWaits++
	first := ar.personWaits == 1 && !ar.ended
	ar.mu.Unlock()
	if first {
		d.releaseSlot(ar)
		res := d.db.Model(&Run{}).Where("id = ? AND status = ?", id, StatusRunning).
			Updates(map[string]any{"waiting_for": requestID, "reason": reason})
		if res.Error == nil && res.RowsAffected > 0 {
			d.publishRun(id)
			d.publishState()
			d.inboxChanged()
			var r Run
			if d.db.Select("task_name").Take(&r, id).Error == nil {
				d.notice(api.DispatchNotice{Kind: api.NoticeNeedsYou, RunID: id, Task: r.TaskName, Message: reason})
			}
		}
	}
	var once sync.Once
	return func(ctx context.Context) (err error) {
		once.Do(func() { err = d.endPersonWait(ctx, id, ar) })
		return err
	}
}

// endPersonWait ends one WaitForPerson wait of ar; the last one takes a slot again.
func (d *Dispatcher) endPersonWait(ctx context.Context, id uint, ar *activeRun) error {
	ar.mu.Lock()
	ar.personWaits--
	last := ar.personWaits == 0 && !ar.ended
	lg := ar.log
	ar.mu.Unlock()
	if !last {
		return nil
	}
	if lg != nil {
		_, _ = lg.Write(nil) // restart the no-progress clock: the silence was the wait
	}
	d.db.Model(&Run{}).Where("id = ? AND status = ?", id, StatusRunning).Updates(map[string]any{"waiting_for": "", "reason": ""})
	d.publishRun(id)
	d.inboxChanged()
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("run #%d waiting for a concurrency slot: %w", id, ctx.Err())
	}
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.ended || ar.holdsSlot || ar.paused || ar.personWaits > 0 {
		<-d.slots // over, resumed or waiting again meanwhile: the slot is not its to keep
		return nil
	}
	ar.holdsSlot = true
	d.publishState()
	return nil
}

// endSlot gives back a run's slot when its execution is over, for good.
func (d *Dispatcher) endSlot(ar *activeRun) {
	ar.mu.Lock()
	ar.ended = true
	ar.mu.Unlock()
	d.releaseSlot(ar)
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
	if note := d.endingNote(id); note != "" {
		r.Reason = note
	}
	return r, nil
}

// RunFilter selects runs for Runs.
type RunFilter struct {
	// Task is a task name or id ("" for all).
	Task string
	// Waiting selects held runs only (waiting_directory, waiting_approval, paused, and
	// running ones waiting for a person's answer).
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
	for i := range out {
		if note := d.endingNote(out[i].ID); note != "" {
			out[i].Reason = note
		}
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
