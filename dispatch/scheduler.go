package dispatch

import (
	"container/heap"
	"context"
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
	// gaps are the latest spans in which timers did not fire (sleep, clock jumps), to say
	// why an occurrence was missed; woke is a sleep logind reported, not yet handled;
	// sleepAt is when logind said the machine is going to sleep; lastWall is the wall
	// clock at the scheduler's latest turn.
	gaps     []gap
	woke     *gap
	sleepAt  time.Time
	lastWall time.Time
	// first is the clock reading when the heap was loaded: the first turn compares with it.
	first ClockReading
}

type entry struct {
	taskID uint
	// after is the time next was computed from: the span due at a time t is (after, t].
	after time.Time
	next  time.Time
	sched cron.Schedule
	line  string
	tz    string
	index int
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
	e := &entry{taskID: t.ID, sched: sched, line: t.Schedule, tz: t.TimeZone, after: from, next: sched.Next(from)}
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
	s.first = s.d.opts.ReadClock()
}

// len returns the number of scheduled tasks.
func (s *scheduler) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.h)
}

// run sleeps until the earliest fire time and fires what is due, until ctx ends. It never
// sleeps longer than clockCheckInterval: at every turn it compares the wall clock with
// the monotonic one (and hears logind's PrepareForSleep where there is one), so after a
// sleep or a clock set forward the timer is re-planned from the wall clock at once, the
// occurrences that fell in the gap are recorded with its cause, and one digest tells
// the person.
func (s *scheduler) run(ctx context.Context) {
	if s.d.opts.SleepBus != SleepBusOff {
		s.d.spawn(func() {
			if err := watchSleep(ctx, s.d.opts.SleepBus, s.prepareForSleep); err != nil {
				slog.Info("dispatch: no sleep signal from logind; wakes are noticed by the clock check", "err", err)
			}
		})
	}
	s.mu.Lock()
	prev := s.first
	s.mu.Unlock()
	for {
		s.mu.Lock()
		s.lastWall = prev.Wall
		wait := clockCheckInterval
		if len(s.h) > 0 {
			wait = min(max(s.h[0].next.Sub(s.d.now()), 0), wait)
		}
		s.mu.Unlock()
		timer := s.d.opts.NewTimer(wait)
		fired := false
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-s.wake:
			timer.Stop()
		case <-timer.C():
			fired = true
		}
		cur := s.d.opts.ReadClock()
		g, jumped := s.noticeGap(prev, cur)
		prev = cur
		if fired || jumped {
			s.d.FireDue(ctx)
		}
		if jumped {
			s.d.afterGap(ctx, g)
		}
	}
}

// due pops every entry due at now and returns, per task, the span of occurrences that fell
// in (after, now], counted rather than listed; each entry is pushed back with its next time
// after now.
func (s *scheduler) due(now time.Time) []dueSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []dueSpan
	for len(s.h) > 0 && !s.h[0].next.After(now) {
		e := heap.Pop(&s.h).(*entry)
		out = append(out, dueSpan{taskID: e.taskID, sched: e.sched, after: e.after, span: countSpan(e.sched, e.after, now)})
		e.after, e.next = now, e.sched.Next(now)
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
	if err := d.dispatchSpans(ctx, d.sched.due(now), nil, now, d.sched.causeOf); err != nil {
		slog.Error("dispatch occurrences", "err", err)
	}
}
