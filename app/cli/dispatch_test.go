package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
)

// runs list shows a span of missed occurrences as its first and last with the count, and
// a late run's catch-up reason once its reason moved on.
func TestPrintRunsShowsSpansAndCatchUp(t *testing.T) {
	first := time.Date(2026, 3, 2, 8, 20, 0, 0, time.UTC)
	until := first.Add(50 * time.Minute)
	rs := []api.Run{
		{ID: 2, TaskName: "m", Status: "skipped", ScheduledAt: first, MissedCount: 6, MissedUntil: &until,
			Reason: "missed: 6 occurrences between 2026-03-02T08:20:00Z and 2026-03-02T09:10:00Z: the app was closed (missed-run policy: skip)"},
		{ID: 3, TaskName: "m", Status: "succeeded", ScheduledAt: until, CatchUp: "late: the app was closed; running the latest occurrence once"},
	}
	var b bytes.Buffer
	printRuns(&b, rs)
	out := b.String()
	for _, want := range []string{"2026-03-02T08:20:00Z … 2026-03-02T09:10:00Z (6)", "6 occurrences between", "late: the app was closed"} {
		if !strings.Contains(out, want) {
			t.Errorf("runs list lacks %q:\n%s", want, out)
		}
	}
}
