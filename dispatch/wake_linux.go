package dispatch

import (
	"time"

	"golang.org/x/sys/unix"
)

// systemClock reads the wall clock, CLOCK_MONOTONIC (stops in suspend) and CLOCK_BOOTTIME
// (counts it), which tells a sleep from a clock set forward.
func systemClock(now func() time.Time) func() ClockReading {
	return func() ClockReading {
		var mono, boot unix.Timespec
		r := ClockReading{Wall: now().Round(0)}
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono) == nil && unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) == nil {
			r.Monotonic, r.Boot = time.Duration(mono.Nano()), time.Duration(boot.Nano())
			return r
		}
		r.Monotonic = time.Since(processStart)
		return r
	}
}
