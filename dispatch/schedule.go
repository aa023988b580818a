package dispatch

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/airlock-app/airlock/api"
)

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

const scheduleHint = `use five fields "minute hour day-of-month month day-of-week" (for example "0 2 * * 1-5" for 02:00 on weekdays) or a descriptor: @yearly, @monthly, @weekly, @daily, @hourly, @every 15m`

// maxEvery bounds @every: a longer interval is a mistake (and near the limit of a
// duration, its next time overflows).
const maxEvery = 366 * 24 * time.Hour

// ParseSchedule validates a cron line and an IANA time zone ("" means UTC) and returns
// the schedule. Errors carry the parser's reason and a hint.
func ParseSchedule(line, tz string) (cron.Schedule, *time.Location, error) {
	line = strings.TrimSpace(line)
	loc, err := LoadZone(tz)
	if err != nil {
		return nil, nil, err
	}
	if line == "" {
		return nil, nil, invalidf("empty schedule: %s", scheduleHint)
	}
	if strings.HasPrefix(line, "TZ=") || strings.HasPrefix(line, "CRON_TZ=") {
		return nil, nil, invalidf("invalid schedule %q: give the time zone separately (--tz Europe/Madrid), not in the line", line)
	}
	if strings.HasPrefix(line, "@every") {
		d, err := time.ParseDuration(strings.TrimSpace(strings.TrimPrefix(line, "@every")))
		if err != nil || d < time.Second {
			return nil, nil, invalidf("invalid schedule %q: @every needs a duration of at least 1s such as 30s, 15m or 2h", line)
		}
		if d > maxEvery {
			return nil, nil, invalidf("invalid schedule %q: @every takes at most 8784h (a year); for a yearly run write @yearly or a cron line such as \"0 3 1 1 *\"", line)
		}
	}
	sched, err := cronParser.Parse(line)
	if err != nil {
		return nil, nil, invalidf("invalid schedule %q: %v; %s", line, err, scheduleHint)
	}
	// Evaluate calendar schedules on the zone's wall clock (see wallSchedule). Setting the
	// zone here rather than with a CRON_TZ= prefix also avoids loading the zone file again
	// for every task.
	if spec, ok := sched.(*cron.SpecSchedule); ok {
		spec.Location = time.UTC
		sched = wallSchedule{spec: spec, loc: loc}
	}
	return sched, loc, nil
}

// wallSchedule evaluates a cron line on the wall clock of its zone, so daylight-saving
// changes neither skip nor repeat an occurrence: a time that does not exist (clocks jump
// forward over 02:30) runs once, just after the jump (03:30); a time that happens twice
// (clocks go back over 02:30) runs once. robfig/cron on its own skips the first and runs
// the second twice.
type wallSchedule struct {
	spec *cron.SpecSchedule // Location UTC: the wall clock
	loc  *time.Location
}

// Next returns the first occurrence strictly after t.
func (w wallSchedule) Next(t time.Time) time.Time {
	lt := t.In(w.loc)
	wall := time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), lt.Minute(), lt.Second(), lt.Nanosecond(), time.UTC)
	for i := 0; i < 8; i++ {
		nw := w.spec.Next(wall)
		if nw.IsZero() {
			return nw
		}
		n := firstInstance(time.Date(nw.Year(), nw.Month(), nw.Day(), nw.Hour(), nw.Minute(), nw.Second(), 0, w.loc), w.loc)
		if n.After(t) {
			return n
		}
		wall = nw
	}
	return time.Time{}
}

// firstInstance returns the earlier of the two instants that show the same wall clock
// when clocks go back (the repeated hour); any other time is returned as is.
func firstInstance(n time.Time, loc *time.Location) time.Time {
	l := n.In(loc)
	for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		e := n.Add(-back).In(loc)
		if e.Year() == l.Year() && e.YearDay() == l.YearDay() && e.Hour() == l.Hour() && e.Minute() == l.Minute() && e.Second() == l.Second() {
			return n.Add(-back)
		}
	}
	return n
}

// LoadZone loads an IANA time zone; "" is UTC.
func LoadZone(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(tz, "local") {
		return nil, invalidf("time zone %q: give an IANA name such as Europe/Madrid so the schedule does not move with the machine", tz)
	}
	if loc, ok := zoneCache.Load(tz); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, invalidf("unknown time zone %q: give an IANA name such as Europe/Madrid, America/New_York or UTC", tz)
	}
	// One *time.Location per zone: loading reads the zone file and each copy holds every
	// transition, which adds up over thousands of tasks.
	actual, _ := zoneCache.LoadOrStore(tz, loc)
	return actual.(*time.Location), nil
}

var zoneCache sync.Map // IANA name → *time.Location

// ValidateSchedule is ParseSchedule for a schedule a person gives (task add and edit, the
// window's editor): it also refuses one that never fires, such as "0 0 31 2 *" (31
// February), which the parser accepts. robfig/cron looks 5 years ahead of from.
func ValidateSchedule(line, tz string, from time.Time) (cron.Schedule, *time.Location, error) {
	sched, loc, err := ParseSchedule(line, tz)
	if err != nil {
		return nil, nil, err
	}
	if sched.Next(from).IsZero() {
		return nil, nil, invalidf("schedule %q never fires: no time in the next 5 years matches it (its day of the month does not exist in the months it names, such as 31 February); "+
			"pick a day those months have, for example \"0 0 28 2 *\" for 28 February or \"0 0 1 3 *\" for 1 March", strings.TrimSpace(line))
	}
	return sched, loc, nil
}

// NextTimes returns the next n fire times of a schedule after from, in its time zone. A
// schedule that never fires is an error (ValidateSchedule).
func NextTimes(line, tz string, from time.Time, n int) ([]time.Time, error) {
	sched, loc, err := ValidateSchedule(line, tz, from)
	if err != nil {
		return nil, err
	}
	out := make([]time.Time, 0, n)
	t := from
	for i := 0; i < n; i++ {
		t = sched.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t.In(loc))
	}
	return out, nil
}

var weekdays = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// Describe turns a cron line into words for common shapes ("every weekday at 02:00,
// Europe/Madrid") and falls back to the line itself.
func Describe(line, tz string) string {
	if tz == "" {
		tz = "UTC"
	}
	d := describe(strings.TrimSpace(line))
	if d == "" {
		d = strings.TrimSpace(line)
	}
	return d + ", " + tz
}

func describe(line string) string {
	switch line {
	case "@yearly", "@annually":
		return "every year on 1 January at 00:00"
	case "@monthly":
		return "on day 1 of every month at 00:00"
	case "@weekly":
		return "every Sunday at 00:00"
	case "@daily", "@midnight":
		return "every day at 00:00"
	case "@hourly":
		return "every hour at minute 0"
	}
	if strings.HasPrefix(line, "@every") {
		d, err := time.ParseDuration(strings.TrimSpace(strings.TrimPrefix(line, "@every")))
		if err != nil {
			return ""
		}
		return "every " + humanDuration(d)
	}
	f := strings.Fields(line)
	if len(f) != 5 {
		return ""
	}
	min, hour, dom, mon, dow := f[0], f[1], f[2], f[3], f[4]
	if mon != "*" {
		return ""
	}
	m, mOK := atoi(min, 59)
	h, hOK := atoi(hour, 23)
	switch {
	case min == "*" && hour == "*" && dom == "*" && dow == "*":
		return "every minute"
	case strings.HasPrefix(min, "*/") && hour == "*" && dom == "*" && dow == "*":
		if n, ok := atoi(min[2:], 59); ok && n > 0 {
			return fmt.Sprintf("every %d minutes", n)
		}
		return ""
	case mOK && hour == "*" && dom == "*" && dow == "*":
		return fmt.Sprintf("every hour at minute %d", m)
	case mOK && strings.HasPrefix(hour, "*/") && dom == "*" && dow == "*":
		if n, ok := atoi(hour[2:], 23); ok && n > 0 {
			return fmt.Sprintf("every %d hours at minute %d", n, m)
		}
		return ""
	}
	if !mOK || !hOK {
		return ""
	}
	at := fmt.Sprintf("at %02d:%02d", h, m)
	switch {
	case dom == "*" && dow == "*":
		return "every day " + at
	case dom == "*":
		days := describeDow(dow)
		if days == "" {
			return ""
		}
		return days + " " + at
	case dow == "*":
		if d, ok := atoi(dom, 31); ok && d > 0 {
			return fmt.Sprintf("on day %d of every month %s", d, at)
		}
	}
	return ""
}

func describeDow(dow string) string {
	switch dow {
	case "1-5", "MON-FRI", "mon-fri":
		return "every weekday"
	case "0,6", "6,0", "SAT,SUN", "sat,sun":
		return "every Saturday and Sunday"
	}
	var names []string
	for _, p := range strings.Split(dow, ",") {
		n, ok := atoi(p, 7)
		if !ok {
			return ""
		}
		names = append(names, weekdays[n%7])
	}
	if len(names) == 1 {
		return "every " + names[0]
	}
	return "every " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func atoi(s string, max int) (int, bool) {
	if s == "" || len(s) > 2 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= max
}

func humanDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0 && d >= time.Hour:
		return plural(int(d/time.Hour), "hour")
	case d%time.Minute == 0 && d >= time.Minute:
		return plural(int(d/time.Minute), "minute")
	case d%time.Second == 0:
		return plural(int(d/time.Second), "second")
	}
	return d.String()
}

func plural(n int, unit string) string {
	if n == 1 {
		return unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// SchedulePreview is a schedule line in words with its next fire times (the wire's type).
type SchedulePreview = api.SchedulePreview

// Preview validates a schedule line and a time zone as a person types them: the
// schedule in words and its next five fire times after now (RFC 3339), or what is wrong
// and what to write. An empty line is a task that runs only when a person starts it.
func Preview(line, tz string, now time.Time) SchedulePreview {
	if strings.TrimSpace(line) == "" {
		if _, err := LoadZone(tz); err != nil {
			return SchedulePreview{Error: err.Error(), Next: []string{}}
		}
		return SchedulePreview{Valid: true, Description: "manual only: runs when you press Run now", Next: []string{}}
	}
	next, err := NextTimes(line, tz, now, 5)
	if err != nil {
		return SchedulePreview{Error: err.Error(), Next: []string{}}
	}
	out := SchedulePreview{Valid: true, Description: Describe(line, tz), Next: make([]string, 0, len(next))}
	for _, at := range next {
		out.Next = append(out.Next, at.Format(time.RFC3339))
	}
	return out
}

// span is what a schedule fires in an interval: how many times, the first and the last.
type span struct {
	first, last time.Time
	count       int
}

// countSpan counts a schedule's occurrences in (after, upTo] without stepping through each
// one where it can: arithmetic for @every, and for calendar schedules one table of the
// minutes a matching day fires at, applied day by day (stepping only through a day the
// zone changes its offset). A week of every-minute occurrences costs seven look-ups, not
// 10,080 calls of Next.
func countSpan(s cron.Schedule, after, upTo time.Time) span {
	first := s.Next(after)
	if first.IsZero() || first.After(upTo) {
		return span{}
	}
	switch s := s.(type) {
	case cron.ConstantDelaySchedule:
		n := int(upTo.Sub(first)/s.Delay) + 1
		return span{first: first, last: first.Add(time.Duration(n-1) * s.Delay), count: n}
	case wallSchedule:
		if s.spec.Second == 1 { // the five-field parser fires on second 0 only
			return s.countFrom(first, upTo)
		}
	}
	return stepSpan(s, first, upTo, time.Time{})
}

// stepSpan counts by stepping from first (an occurrence) while at or before upTo and, when
// before is set, strictly before it.
func stepSpan(s cron.Schedule, first, upTo, before time.Time) span {
	sp := span{}
	for t := first; !t.IsZero() && !t.After(upTo) && (before.IsZero() || t.Before(before)); t = s.Next(t) {
		if sp.count == 0 {
			sp.first = t
		}
		sp.last = t
		sp.count++
	}
	return sp
}

const starBit = 1 << 63 // robfig/cron marks a field given as "*" with it

// countFrom counts the occurrences in [first, upTo], first being one.
func (w wallSchedule) countFrom(first, upTo time.Time) span {
	var fires [24 * 60]bool
	for h := 0; h < 24; h++ {
		if w.spec.Hour&(1<<uint(h)) == 0 {
			continue
		}
		for m := 0; m < 60; m++ {
			if w.spec.Minute&(1<<uint(m)) != 0 {
				fires[h*60+m] = true
			}
		}
	}
	// before[i] is how many minutes of a matching day fire before minute i.
	var before [24*60 + 1]int
	for i, f := range fires {
		before[i+1] = before[i]
		if f {
			before[i+1]++
		}
	}
	lastMinute := func(hi int) int { // the last firing minute at or before hi
		for m := hi; m >= 0; m-- {
			if fires[m] {
				return m
			}
		}
		return -1
	}
	fw, uw := wallClock(first, w.loc), wallClock(upTo, w.loc)
	firstDay, lastDay := midnight(fw), midnight(uw)
	sp := span{first: first}
	for day := firstDay; !day.After(lastDay); day = day.AddDate(0, 0, 1) {
		if !w.dayMatches(day) {
			continue
		}
		if w.shifts(day) {
			start := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, w.loc)
			// From first itself on its day: Next from just before an occurrence that a
			// skipped hour moved (02:30 → 03:30) would not find it again.
			from := first
			if !day.Equal(firstDay) {
				from = w.Next(start.Add(-time.Nanosecond))
			}
			if part := stepSpan(w, from, upTo, start.AddDate(0, 0, 1)); part.count > 0 {
				sp.count += part.count
				sp.last = part.last
			}
			continue
		}
		lo, hi := 0, 24*60-1
		if day.Equal(firstDay) {
			lo = fw.Hour()*60 + fw.Minute()
		}
		if day.Equal(lastDay) {
			hi = uw.Hour()*60 + uw.Minute()
		}
		if lo > hi {
			continue
		}
		if n := before[hi+1] - before[lo]; n > 0 {
			sp.count += n
			m := lastMinute(hi)
			sp.last = firstInstance(time.Date(day.Year(), day.Month(), day.Day(), m/60, m%60, 0, 0, w.loc), w.loc)
		}
	}
	if sp.count == 0 {
		return span{}
	}
	return sp
}

// dayMatches is robfig/cron's rule: with day of month or day of week given as "*", both
// must match; with both restricted, either does.
func (w wallSchedule) dayMatches(day time.Time) bool {
	s := w.spec
	if s.Month&(1<<uint(day.Month())) == 0 {
		return false
	}
	dom := s.Dom&(1<<uint(day.Day())) != 0
	dow := s.Dow&(1<<uint(day.Weekday())) != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// shifts reports whether the zone changes its offset during the wall-clock day.
func (w wallSchedule) shifts(day time.Time) bool {
	if w.loc == time.UTC {
		return false
	}
	_, a := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, w.loc).Zone()
	_, b := time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, w.loc).Zone()
	return a != b
}

// wallClock is t's wall clock in loc, written as a UTC time.
func wallClock(t time.Time, loc *time.Location) time.Time {
	lt := t.In(loc)
	return time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), lt.Minute(), lt.Second(), lt.Nanosecond(), time.UTC)
}

func midnight(w time.Time) time.Time {
	return time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC)
}
