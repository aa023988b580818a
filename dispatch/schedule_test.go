package dispatch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseScheduleRejectsInvalidLines(t *testing.T) {
	tests := []struct {
		line, tz, want string
	}{
		{"", "", "empty schedule"},
		{"* * * *", "", "expected exactly 5 fields"},
		{"0 0 * * * *", "", "expected exactly 5 fields"},
		{"61 * * * *", "", "above maximum"},
		{"0 25 * * *", "", "above maximum"},
		{"0 2 * * funday", "", "failed to parse"},
		{"@fortnightly", "", "unrecognized descriptor"},
		{"@every", "", "@every needs a duration"},
		{"@every 10ms", "", "@every needs a duration"},
		{"@every soon", "", "@every needs a duration"},
		{"CRON_TZ=Europe/Madrid 0 2 * * *", "", "give the time zone separately"},
		{"0 2 * * *", "Mars/Olympus", "unknown time zone"},
		{"0 2 * * *", "Local", "IANA name"},
	}
	for _, tc := range tests {
		_, _, err := ParseSchedule(tc.line, tc.tz)
		if err == nil {
			t.Errorf("ParseSchedule(%q, %q) accepted", tc.line, tc.tz)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSchedule(%q, %q) = %v, want it to mention %q", tc.line, tc.tz, err, tc.want)
		}
		if tc.tz == "" && !strings.Contains(err.Error(), "@every") && !strings.Contains(err.Error(), "separately") {
			t.Errorf("error gives no hint: %v", err)
		}
	}
	for _, ok := range []string{"0 2 * * 1-5", "*/15 * * * *", "@daily", "@every 90s", "@hourly", "0 0 1 * *", "30 6 * * MON,WED"} {
		if _, _, err := ParseSchedule(ok, "Europe/Madrid"); err != nil {
			t.Errorf("ParseSchedule(%q) rejected: %v", ok, err)
		}
	}
}

func TestNextTimesUseTheTimeZone(t *testing.T) {
	from := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC) // winter: Madrid is UTC+1
	got, err := NextTimes("0 2 * * *", "Europe/Madrid", from, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 16, 1, 0, 0, 0, time.UTC); !got[0].Equal(want) {
		t.Fatalf("next = %s, want %s", got[0].UTC(), want)
	}
	if got[0].Location().String() != "Europe/Madrid" {
		t.Fatalf("next run not shown in the task's zone: %s", got[0].Location())
	}
	summer := time.Date(2026, 7, 15, 12, 0, 0, 0, time.UTC) // UTC+2
	got, _ = NextTimes("0 2 * * *", "Europe/Madrid", summer, 1)
	if want := time.Date(2026, 7, 16, 0, 0, 0, 0, time.UTC); !got[0].Equal(want) {
		t.Fatalf("summer next = %s, want %s", got[0].UTC(), want)
	}
	// Spring forward: 02:30 does not exist in Madrid on 29 March 2026. The daily run is not
	// skipped: it runs once, just after the jump.
	got, _ = NextTimes("30 2 * * *", "Europe/Madrid", time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC), 3)
	if want := time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC); !got[0].Equal(want) {
		t.Fatalf("spring-forward day: %v, want a run at %s", got, want)
	}
	if got[1].Day() != 30 {
		t.Fatalf("spring-forward day ran twice: %v", got)
	}
	// Fall back: 02:30 happens twice on 25 October 2026. It runs once.
	got, _ = NextTimes("30 2 * * *", "Europe/Madrid", time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC), 3)
	days := map[int]int{}
	for _, g := range got {
		days[g.Day()]++
	}
	if days[25] != 1 || days[26] != 1 || days[27] != 1 {
		t.Fatalf("fall-back day: %v", got)
	}
	// Asked from inside the repeated hour (after the first 02:30 ran), the next is tomorrow.
	second := time.Date(2026, 10, 25, 1, 15, 0, 0, time.UTC) // 02:15 CET, the second pass
	got, _ = NextTimes("30 2 * * *", "Europe/Madrid", second, 1)
	if got[0].Day() != 26 {
		t.Fatalf("repeated hour ran again: %v", got)
	}
	got, _ = NextTimes("@every 15m", "", from, 3)
	if len(got) != 3 || got[1].Sub(got[0]) != 15*time.Minute {
		t.Fatalf("@every: %v", got)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct{ line, tz, want string }{
		{"0 2 * * 1-5", "Europe/Madrid", "every weekday at 02:00, Europe/Madrid"},
		{"30 6 * * *", "", "every day at 06:30, UTC"},
		{"0 9 * * 1", "UTC", "every Monday at 09:00, UTC"},
		{"0 9 * * 1,3,5", "UTC", "every Monday, Wednesday and Friday at 09:00, UTC"},
		{"0 10 * * 0,6", "UTC", "every Saturday and Sunday at 10:00, UTC"},
		{"*/15 * * * *", "UTC", "every 15 minutes, UTC"},
		{"5 * * * *", "UTC", "every hour at minute 5, UTC"},
		{"0 */6 * * *", "UTC", "every 6 hours at minute 0, UTC"},
		{"0 3 1 * *", "UTC", "on day 1 of every month at 03:00, UTC"},
		{"@daily", "UTC", "every day at 00:00, UTC"},
		{"@every 90m", "UTC", "every 90 minutes, UTC"},
		{"@every 1h", "UTC", "every hour, UTC"},
		{"0 2 1-7 * 1", "UTC", "0 2 1-7 * 1, UTC"},   // falls back to the line
		{"0 2 * 1,7 *", "UTC", "0 2 * 1,7 *, UTC"},   // months: fall back
		{"0 2,14 * * *", "UTC", "0 2,14 * * *, UTC"}, // two hours: fall back
	}
	for _, tc := range tests {
		if got := Describe(tc.line, tc.tz); got != tc.want {
			t.Errorf("Describe(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"0 2 * * 1-5", "@every 1m", "*/5 * * * *", "@daily", "a b c d e", "0 0 31 2 *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		desc := Describe(line, "UTC") // never panics
		if desc == "" {
			t.Fatal("empty description")
		}
		sched, _, err := ParseSchedule(line, "Europe/Madrid")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if n := sched.Next(from); !n.IsZero() && !n.After(from) {
			t.Fatalf("next %s not after %s", n, from)
		}
	})
}

// A schedule the parser accepts but that never fires is refused where a person gives it
// (task add, task edit, the window's preview), with the reason and an example that fires.
func TestScheduleThatNeverFiresIsRefused(t *testing.T) {
	never := []string{"0 0 31 2 *", "0 0 30 2 *", "0 12 31 4,6,9,11 *"}
	h := newHarness(t, withClock(t0))
	h.start()
	ok := h.task(TaskSpec{Name: "fine", Cwd: h.ws, Schedule: "0 0 29 2 *"}) // every 4 years
	for _, line := range never {
		t.Run(line, func(t *testing.T) {
			_, err := h.d.CreateTask(context.Background(), TaskSpec{Name: "feb", Cwd: h.ws, Schedule: line, Argv: []string{"true"}})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "never fires") || !strings.Contains(err.Error(), `"0 0 28 2 *"`) {
				t.Fatalf("task add %q: %v, want ErrInvalid saying it never fires with an example", line, err)
			}
			_, err = h.d.EditTask(context.Background(), ok.Name, TaskPatch{Schedule: &line})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "never fires") {
				t.Fatalf("task edit %q: %v, want ErrInvalid saying it never fires", line, err)
			}
			p := Preview(line, "Europe/Madrid", t0)
			if p.Valid || !strings.Contains(p.Error, "never fires") {
				t.Fatalf("preview %q: %+v, want invalid with the reason", line, p)
			}
		})
	}
}

// countSpan's arithmetic agrees with stepping through every occurrence, across
// daylight-saving changes, month ends and descriptors.
func TestCountSpanMatchesStepping(t *testing.T) {
	lines := []string{"* * * * *", "*/7 * * * *", "30 2 * * *", "0 0 29 2 *", "15 */6 * * 1-5", "0 9 1,15 * MON",
		"@hourly", "@every 37m", "@every 90s", "0 0 31 * *", "59 23 * * 0", "*/5 1-3 * 3,10 *"}
	zones := []string{"", "Europe/Madrid", "America/New_York", "Australia/Lord_Howe"}
	intervals := []struct{ after, upTo time.Time }{
		{time.Date(2026, 3, 28, 23, 59, 30, 0, time.UTC), time.Date(2026, 3, 30, 4, 0, 0, 0, time.UTC)},  // Madrid springs forward
		{time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC), time.Date(2026, 10, 26, 3, 30, 0, 0, time.UTC)}, // and falls back
		{time.Date(2026, 2, 27, 8, 0, 0, 0, time.UTC), time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)},      // month end
		{time.Date(2026, 11, 1, 5, 17, 42, 5, time.UTC), time.Date(2026, 11, 1, 6, 17, 42, 5, time.UTC)}, // New York falls back
		{time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC), time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)},     // empty
		{time.Date(2027, 12, 30, 0, 0, 0, 0, time.UTC), time.Date(2028, 3, 2, 0, 0, 0, 0, time.UTC)},     // leap day
		{time.Date(2026, 4, 4, 14, 0, 0, 0, time.UTC), time.Date(2026, 4, 5, 16, 0, 0, 0, time.UTC)},     // Lord Howe's half hour
	}
	for _, line := range lines {
		for _, tz := range zones {
			sched, _, err := ParseSchedule(line, tz)
			if err != nil {
				t.Fatal(err)
			}
			for _, iv := range intervals {
				want := stepSpan(sched, sched.Next(iv.after), iv.upTo, time.Time{})
				got := countSpan(sched, iv.after, iv.upTo)
				if got.count != want.count || !got.first.Equal(want.first) || !got.last.Equal(want.last) {
					t.Errorf("%q %s (%s, %s]: got %d %s..%s, want %d %s..%s", line, tz, iv.after, iv.upTo,
						got.count, got.first, got.last, want.count, want.first, want.last)
				}
			}
		}
	}
}
