package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/godbus/dbus/v5"
)

// ClockReading is one look at the clocks the scheduler compares to notice that the machine
// slept or the wall clock was set: a wall clock that jumps ahead of the monotonic one
// leaves a gap in which timers did not fire.
type ClockReading struct {
	// Wall is the wall clock (no monotonic reading).
	Wall time.Time
	// Monotonic stops while the machine is suspended and ignores settings of the clock.
	Monotonic time.Duration
	// Boot is like Monotonic but keeps counting while the machine is suspended (Linux's
	// CLOCK_BOOTTIME); zero where the system has no such clock.
	Boot time.Duration
}

const (
	// clockCheckInterval bounds the scheduler's sleep, so that a wall clock set forward
	// or a wake without logind's signal is noticed within it.
	clockCheckInterval = 15 * time.Second
	// clockGapThreshold is the skew between wall and monotonic time taken for a sleep or
	// a jump; NTP's slewing stays far below it.
	clockGapThreshold = 10 * time.Second
	maxGaps           = 16
	login1            = "org.freedesktop.login1"
	prepareForSleep   = "org.freedesktop.login1.Manager.PrepareForSleep"
)

// gap is a span of wall time in which the scheduler's timers did not fire, and why.
type gap struct {
	from, to time.Time
	cause    string
}

// clockFrom returns the readings of a clock given only as a wall clock (tests that inject
// Now): monotonic time follows it, so it never shows a gap.
func clockFrom(now func() time.Time) func() ClockReading {
	origin := now().Round(0)
	return func() ClockReading {
		w := now().Round(0)
		return ClockReading{Wall: w, Monotonic: w.Sub(origin), Boot: w.Sub(origin)}
	}
}

// noticeGap compares two readings and returns the gap between them, if the wall clock
// moved ahead of the monotonic one (or logind said the machine slept). A clock set back
// is only logged: the timers are recomputed from the wall clock at every turn of the
// scheduler, and occurrences already claimed are not claimed again.
func (s *scheduler) noticeGap(prev, cur ClockReading) (gap, bool) {
	s.mu.Lock()
	slept := s.woke
	s.woke = nil
	s.mu.Unlock()
	mono := cur.Monotonic - prev.Monotonic
	skew := cur.Wall.Sub(prev.Wall) - mono
	var g gap
	switch {
	case slept != nil:
		g = *slept
	case skew < -clockGapThreshold:
		slog.Info("dispatch: the wall clock was set back", "by", (-skew).Round(time.Second))
		return gap{}, false
	case skew <= clockGapThreshold:
		return gap{}, false
	case prev.Boot == 0 && cur.Boot == 0:
		g = gap{from: prev.Wall, to: cur.Wall, cause: causeWallAhead}
	case (cur.Boot-prev.Boot)-mono > clockGapThreshold:
		g = gap{from: prev.Wall, to: cur.Wall, cause: causeAsleep}
	default:
		g = gap{from: prev.Wall, to: cur.Wall, cause: causeClockJump}
	}
	s.mu.Lock()
	if g.cause == causeAsleep {
		s.sleepAt = time.Time{} // a wake logind did not report: its next sleep starts anew
	}
	s.gaps = append(s.gaps, g)
	if len(s.gaps) > maxGaps {
		s.gaps = s.gaps[len(s.gaps)-maxGaps:]
	}
	s.mu.Unlock()
	slog.Info("dispatch: timers re-planned", "cause", g.cause, "from", g.from, "to", g.to)
	return g, true
}

// causeOf says why an occurrence at did not run at its time: the gap it fell in, else the
// scheduler reached it late.
func (s *scheduler) causeOf(at time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.gaps) - 1; i >= 0; i-- {
		if g := s.gaps[i]; at.After(g.from) && !at.After(g.to) {
			return g.cause
		}
	}
	return causeLate
}

// prepareForSleep is logind's signal: sleeping is true just before the machine suspends
// and false once it woke.
func (s *scheduler) prepareForSleep(sleeping bool) {
	now := s.d.now().Round(0)
	s.mu.Lock()
	if sleeping {
		if s.sleepAt.IsZero() { // a repeated signal does not move the start
			s.sleepAt = now
		}
		s.mu.Unlock()
		return
	}
	from := s.sleepAt
	if from.IsZero() || from.After(now) {
		from = s.lastWall
	}
	s.sleepAt = time.Time{}
	s.woke = &gap{from: from, to: now, cause: causeAsleep}
	s.mu.Unlock()
	s.poke()
}

// afterGap tells the person, once, what the gap left: the occurrences it made miss were
// just recorded; one digest covers them with what was held or failed meanwhile.
func (d *Dispatcher) afterGap(ctx context.Context, g gap) {
	dg, err := d.Digest(ctx, g.from)
	if err != nil {
		slog.Warn("dispatch: digest after a gap", "err", err)
		return
	}
	if !dg.Empty() {
		d.digested(dg)
	}
}

// watchSleep follows logind's PrepareForSleep on the bus at addr ("" is the system bus)
// until ctx ends. Only logind (the owner of org.freedesktop.login1) is listened to.
func watchSleep(ctx context.Context, addr string, on func(sleeping bool)) error {
	var conn *dbus.Conn
	var err error
	if addr == "" {
		conn, err = dbus.ConnectSystemBus(dbus.WithContext(ctx))
	} else {
		conn, err = dbus.Connect(addr, dbus.WithContext(ctx))
	}
	if err != nil {
		return fmt.Errorf("connect to the bus for logind's sleep signal: %w", err)
	}
	defer conn.Close()
	if err := conn.AddMatchSignalContext(ctx, dbus.WithMatchSender(login1), dbus.WithMatchInterface(login1+".Manager"),
		dbus.WithMatchMember("PrepareForSleep")); err != nil {
		return fmt.Errorf("listen for logind's sleep signal: %w", err)
	}
	ch := make(chan *dbus.Signal, 8)
	conn.Signal(ch)
	for {
		select {
		case <-ctx.Done():
			return nil
		case sig, ok := <-ch:
			if !ok {
				return errors.New("the bus closed the connection that carried logind's sleep signal")
			}
			if sig.Name != prepareForSleep || len(sig.Body) != 1 {
				continue
			}
			if sleeping, ok := sig.Body[0].(bool); ok {
				on(sleeping)
			}
		}
	}
}

// processStart carries the monotonic reading systemClock falls back to.
var processStart = time.Now()
