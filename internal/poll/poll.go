// Package poll checks a condition at an interval until it holds or the caller stops,
// for what no event announces (a request becoming pending, a run falling silent).
package poll

import "time"

// Until calls cond every interval until it returns true, and then returns true; it
// returns false as soon as done is closed.
func Until(done <-chan struct{}, every time.Duration, cond func() bool) bool {
	tk := time.NewTicker(every)
	defer tk.Stop()
	for {
		select {
		case <-done:
			return false
		case <-tk.C:
			if cond() {
				return true
			}
		}
	}
}
