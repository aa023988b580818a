package dispatch

import (
	"container/heap"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// scheduler keeps the next fire time of every enabled scheduled task in a min-heap and
// sleeps on one timer until the earliest.
type scheduler struct {
	d     *Dispatcher
	mu    sync.Mutex
	h     entryHeap
	byID  map[uint]*entry
	wake  chan struct{}
	ready bool
}

type entry struct {
	taskID uint
	next   time.Time
	sched  cron.Schedule
	line   string
	tz     string
	index  int
}

type entryHeap []*entry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return h[i].next.Before(h[j].next) }
func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *entryHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}

func newScheduler(d *Dispatcher) *scheduler {
	return &scheduler{d: d, byID: map[uint]*entry{}, wake: make(chan struct{}, 1)}
}

// update (re)computes a task's next fire time after a create, edit or enable.
func (s *scheduler) update(t Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready {
		return // Start loads every task
	}
	s.removeLocked(t.ID)
	s.addLocked(t, s.d.now())
	s.poke()
}

func (s *scheduler) remove(id uint) {
	s.mu.Lock()
	s.removeLocked(id)
	s.mu.Unlock()
	s.poke()
}

func (s *scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *scheduler) removeLocked(id uint) {
	if e, ok := s.byID[id]; ok {
		if e.index >= 0 {
			heap.Remove(&s.h, e.index)
		}
		delete(s.byID, id)
	}
}

// addLocked schedules t's first occurrence after from (or after its last claimed one,
// whichever is later: a restart must not fire one twice).
func (s *scheduler) addLocked(t Task, from time.Time) {
	if !t.Enabled || t.Schedule == "" {
		return
	}
	sched, _, err := ParseSchedule(t.Schedule, t.TimeZone)
	if err != nil {
		slog.Warn("task has an invalid schedule", "task", t.Name, "err", err)
		return
	}
	if t.LastScheduledAt != nil && t.LastScheduledAt.After(from) {
		from = *t.LastScheduledAt
	}
	e := &entry{taskID: t.ID, sched: sched, line: t.Schedule, tz: t.TimeZone, next: sched.Next(from)}
	if e.next.IsZero() {
		return
	}
	s.byID[t.ID] = e
	heap.Push(&s.h, e)
}

// load fills the heap from every enabled task (after missed occurrences were recorded).
func (s *scheduler) load(tasks []Task, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h = s.h[:0]
	s.byID = make(map[uint]*entry, len(tasks))
	for _, t := range tasks {
		s.addLocked(t, now)
	}
	s.ready = true
}

// len returns the number of scheduled tasks.
func (s *scheduler) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.h)
}

// run sleeps until the earliest fire time and fires what is due, until ctx ends.
func (s *scheduler) run(ctx context.Context) {
	for {
		s.mu.Lock()
		var wait time.Duration = -1
		if len(s.h) > 0 {
			wait = max(s.h[0].next.Sub(s.d.now()), 0)
		}
		s.mu.Unlock()
		var timer Timer
		var c <-chan time.Time
		if wait >= 0 {
			timer = s.d.opts.NewTimer(wait)
			c = timer.C()
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-s.wake:
			if timer != nil {
				timer.Stop()
			}
		case <-c:
			s.d.FireDue(ctx)
		}
	}
}

// due pops every entry due at now and returns, per task, the occurrences that fell in
// (previous, now]; each entry is pushed back with its next time after now.
func (s *scheduler) due(now time.Time, maxRows int) map[uint][]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[uint][]time.Time{}
	for len(s.h) > 0 && !s.h[0].next.After(now) {
		e := heap.Pop(&s.h).(*entry)
		var occ []time.Time
		for t := e.next; !t.IsZero() && !t.After(now); t = e.sched.Next(t) {
			occ = append(occ, t)
			if len(occ) > maxRows {
				occ = occ[1:]
			}
		}
		out[e.taskID] = occ
		e.next = e.sched.Next(now)
		if !e.next.IsZero() {
			heap.Push(&s.h, e)
		} else {
			delete(s.byID, e.taskID)
		}
	}
	return out
}

// FireDue records and starts every occurrence due now. The scheduler calls it when its
// timer fires; tests call it after moving an injected clock.
func (d *Dispatcher) FireDue(ctx context.Context) {
	now := d.now()
	for taskID, occ := range d.sched.due(now, defaultMaxMissedRows) {
		if err := d.occurrences(ctx, taskID, occ, now, "the machine was asleep or the app was suspended"); err != nil {
			slog.Error("dispatch occurrence", "task", taskID, "err", err)
		}
	}
}

// occurrences handles a task's occurrences found at now: the latest one within the grace
// period runs; earlier ones (and late ones) are recorded missed, except that run_once runs
// the latest missed one when nothing is due.
func (d *Dispatcher) occurrences(ctx context.Context, taskID uint, occ []time.Time, now time.Time, missedCause string) error {
	if len(occ) == 0 {
		return nil
	}
	var t Task
	if err := d.db.WithContext(ctx).Take(&t, taskID).Error; err != nil {
		return fmt.Errorf("load task %d: %w", taskID, err)
	}
	if !t.Enabled {
		return nil
	}
	last := occ[len(occ)-1]
	runIdx := -1
	if now.Sub(last) <= d.opts.MissedGrace {
		runIdx = len(occ) - 1
	} else if t.Missed == MissedRunOnce {
		runIdx = len(occ) - 1
	}
	for i, at := range occ {
		if i == runIdx {
			if err := d.fire(ctx, t, at, TriggerSchedule, i < len(occ)-1 || now.Sub(at) > d.opts.MissedGrace); err != nil {
				return err
			}
			continue
		}
		reason := "missed: " + missedCause
		if runIdx >= 0 && t.Missed == MissedRunOnce && now.Sub(last) > d.opts.MissedGrace {
			reason += fmt.Sprintf(" (run_once: the occurrence of %s ran instead)", last.Format(time.RFC3339))
		} else if runIdx >= 0 {
			reason += " (a later occurrence ran instead)"
		} else {
			reason += " (missed-run policy: skip)"
		}
		if _, _, err := d.claim(ctx, t, at, TriggerSchedule, StatusSkipped, SkipMissed, reason); err != nil {
			return err
		}
	}
	d.db.WithContext(ctx).Model(&Task{}).Where("id = ? AND (last_scheduled_at IS NULL OR last_scheduled_at < ?)", t.ID, last.UTC()).
		Update("last_scheduled_at", last.UTC())
	return nil
}
