package desktop

import (
	"fmt"
	"strings"

	"github.com/airlock-app/airlock/api"
)

// NavigateEvent is the window event that opens one place of the window (a route such
// as "#/dispatch/runs/12"): a click on a notification or a tray line. Its payload is the
// route. It is not a core topic.
const NavigateEvent = "window.navigate"

// Routes of the window that notifications and the tray open (frontend/src/lib/nav.ts
// reads them).
const (
	routeWaiting    = "#/waiting"
	routeFailedRuns = "#/dispatch/runs?status=failed"
)

// routeRun is the route of one run's page.
func routeRun(id uint) string { return fmt.Sprintf("#/dispatch/runs/%d", id) }

// failureRecent is how many failures a notification's body names.
const failureRecent = 3

// failureLog counts the failures (dispatch.notify of kind failure) the person has not
// looked at yet, so that a burst is told as one: "100 runs failed", not 100 times.
type failureLog struct {
	count  int
	recent []api.DispatchNotice // the newest last, at most failureRecent
}

func (f *failureLog) add(n api.DispatchNotice) {
	f.count++
	f.recent = append(f.recent, n)
	if len(f.recent) > failureRecent {
		f.recent = f.recent[len(f.recent)-failureRecent:]
	}
}

func (f *failureLog) reset() { *f = failureLog{} }

// failedWords says how a run ended, after "Run 12 of backup".
func failedWords(status string) string {
	switch status {
	case "timed_out":
		return "timed out"
	case "expired":
		return "expired before anyone answered"
	case "denied":
		return "was denied"
	}
	return "failed"
}

// summary is the notification's title: the one failure in words, or how many.
func (f failureLog) summary() string {
	if f.count == 1 && len(f.recent) == 1 {
		n := f.recent[0]
		if n.RunID == 0 {
			return cutLabel(n.Message, 80)
		}
		return fmt.Sprintf("Run %d of %s %s", n.RunID, n.Task, failedWords(n.Status))
	}
	return fmt.Sprintf("%d runs failed", f.count)
}

// body names the latest failures with their reasons.
func (f failureLog) body() string {
	lines := make([]string, 0, len(f.recent)+1)
	for _, n := range f.recent {
		switch {
		case n.RunID == 0:
			lines = append(lines, cutLabel(n.Message, 100))
		case n.Message == "":
			lines = append(lines, fmt.Sprintf("%s (run %d): %s", n.Task, n.RunID, failedWords(n.Status)))
		default:
			lines = append(lines, fmt.Sprintf("%s (run %d): %s", n.Task, n.RunID, cutLabel(n.Message, 100)))
		}
	}
	if more := f.count - len(f.recent); more > 0 {
		lines = append(lines, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(lines, "\n")
}

// route opens the one failed run, or the failed runs.
func (f failureLog) route() string {
	if f.count == 1 && len(f.recent) == 1 && f.recent[0].RunID != 0 {
		return routeRun(f.recent[0].RunID)
	}
	return routeFailedRuns
}

// plural is "1 run" or "3 runs".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// digestWords is a digest's counts in words ("2 runs failed or were interrupted, 1 run
// is waiting for you"), the most pressing first; dispatch's own text when it counts
// nothing the card knows.
func digestWords(dg api.DigestCard) string {
	var parts []string
	if dg.FailedRuns > 0 {
		parts = append(parts, plural(dg.FailedRuns, "run failed or was interrupted", "runs failed or were interrupted"))
	}
	if dg.HeldRuns > 0 {
		parts = append(parts, plural(dg.HeldRuns, "run is waiting for you", "runs are waiting for you"))
	}
	if dg.MissedRuns > 0 {
		parts = append(parts, plural(dg.MissedRuns, "scheduled run did not run", "scheduled runs did not run"))
	}
	switch len(dg.PausedTasks) {
	case 0:
	case 1:
		parts = append(parts, "task "+dg.PausedTasks[0]+" paused itself")
	default:
		parts = append(parts, fmt.Sprintf("tasks %s paused themselves", strings.Join(dg.PausedTasks, ", ")))
	}
	if len(parts) == 0 {
		return dg.Text
	}
	return strings.Join(parts, ", ")
}
