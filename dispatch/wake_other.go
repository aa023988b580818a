//go:build !linux

package dispatch

import "time"

// systemClock reads the wall clock and Go's monotonic clock; without a boot-time clock a
// sleep and a clock set forward look alike.
func systemClock(now func() time.Time) func() ClockReading {
	return func() ClockReading {
		return ClockReading{Wall: now().Round(0), Monotonic: time.Since(processStart)}
	}
}
