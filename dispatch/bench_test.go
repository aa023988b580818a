package dispatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/testdb"
)

// nopExecutor returns at once; it records when each run reached it.
type nopExecutor struct {
	mu      sync.Mutex
	reached map[uint]time.Time
	done    chan uint
}

func (n *nopExecutor) Exec(_ context.Context, spec ExecSpec) (ExecResult, error) {
	n.mu.Lock()
	if n.reached != nil {
		n.reached[spec.RunID] = time.Now()
	}
	n.mu.Unlock()
	if n.done != nil {
		n.done <- spec.RunID
	}
	return ExecResult{}, nil
}

func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScheduler10kTasks loads 10,000 enabled tasks and measures what the scheduler
// holds (heap), the process's resident memory, and CPU used while idle for 3 s.
func BenchmarkScheduler10kTasks(b *testing.B) {
	schedules := []string{"*/5 * * * *", "0 2 * * 1-5", "@hourly", "@every 10m", "30 6 * * *", "0 */6 * * *"}
	for i := 0; i < b.N; i++ {
		h := newHarness(b, withOptions(func(o *Options) { o.Executor = &nopExecutor{} }))
		now := time.Now().UTC()
		tasks := make([]Task, 10000)
		for j := range tasks {
			tasks[j] = Task{Name: fmt.Sprintf("t%05d", j), Argv: []string{"true"}, Cwd: h.ws, Schedule: schedules[j%len(schedules)],
				TimeZone: "Europe/Madrid", Overlap: OverlapSkip, Missed: MissedSkip, Enabled: true, HoldDeadline: DefaultHoldDeadline, LastScheduledAt: &now}
		}
		if err := h.db.CreateInBatches(tasks, 500).Error; err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.ResetTimer()
		start := time.Now()
		h.start()
		loadTime := time.Since(start)
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if n := h.d.sched.len(); n != 10000 {
			b.Fatalf("%d tasks scheduled", n)
		}
		c0, w0 := cpuTime(), time.Now()
		time.Sleep(3 * time.Second)
		idle := float64(cpuTime()-c0) / float64(time.Since(w0)) * 100
		b.ReportMetric(float64(loadTime.Milliseconds()), "start-ms")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "sched-heap-MiB")
		b.ReportMetric(float64(rssKiB())/1024, "rss-MiB")
		b.ReportMetric(idle, "idle-cpu-%")
		h.closeAll()
	}
}

// BenchmarkRelease1000 measures Authorize → all 1,000 waiting runs queued, in an empty
// database and in one of 10,000 tasks and 1,000,000 runs.
func BenchmarkRelease1000(b *testing.B) {
	b.Run("empty", func(b *testing.B) { benchRelease(b, false) })
	b.Run("at-1M-runs", func(b *testing.B) { benchRelease(b, true) })
}

func benchRelease(b *testing.B, big bool) {
	h := newHarness(b, withOptions(func(o *Options) { o.Executor = &nopExecutor{} }))
	if big {
		testdb.SeedScale(b, h.db, 10000, 1000000, h.ws, int64(DefaultHoldDeadline))
	}
	h.start()
	ctx := context.Background()
	dir := h.mkdir("home/outside/release")
	tk := h.task(TaskSpec{Name: "rel", Cwd: dir, Overlap: OverlapAllow})
	base := time.Now().UTC()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		h.d.Revoke(ctx, dir, "bench")
		runs := make([]Run, 1000)
		for j := range runs {
			sub := filepath.Join(dir, fmt.Sprintf("s%d", j%10))
			runs[j] = Run{TaskID: tk.ID, TaskName: tk.Name, ScheduledAt: base.Add(time.Duration(i*1000+j) * time.Second), Trigger: TriggerSchedule,
				Status: StatusWaitingDirectory, WaitingDir: sub, Cwd: dir}
		}
		if err := h.db.CreateInBatches(runs, 200).Error; err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := h.d.Authorize(ctx, dir, "bench", false)
		b.StopTimer()
		if err != nil || len(res.Released) != 1000 {
			b.Fatalf("released %d: %v", len(res.Released), err)
		}
		// Let the released runs finish before the next round.
		for {
			var n int64
			h.db.Model(&Run{}).Where("task_id = ? AND status IN ?", tk.ID, activeStatuses).Count(&n)
			if n == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.StartTimer()
	}
}

// BenchmarkQueriesAt1MRuns measures what `airlock inbox` and `airlock runs list` ask of
// dispatch with 10,000 tasks and 1,000,000 runs, beside the reference: the inbox's query
// as it was before the index of held runs (a scan of the whole table).
func BenchmarkQueriesAt1MRuns(b *testing.B) {
	h := newHarness(b)
	testdb.SeedScale(b, h.db, 10000, 1000000, h.ws, int64(DefaultHoldDeadline))
	ctx := context.Background()
	for _, c := range []struct {
		name string
		f    func() error
	}{
		{"inbox", func() error { _, err := h.d.Inbox(ctx); return err }},
		{"runs-list", func() error { _, err := h.d.Runs(ctx, RunFilter{Limit: 101}); return err }},
		{"runs-list-waiting", func() error { _, err := h.d.Runs(ctx, RunFilter{Waiting: true, Limit: 101}); return err }},
		{"runs-list-task", func() error { _, err := h.d.Runs(ctx, RunFilter{Task: "t05000", Limit: 101}); return err }},
		{"reference-scan", func() error {
			var held []Run
			return h.db.WithContext(ctx).Where("status IN ? OR paused = ?", []string{StatusWaitingDirectory, StatusWaitingApproval}, true).
				Order("id").Find(&held).Error
		}},
		{"prune-nothing-due", func() error { _, err := h.d.PruneRuns(ctx); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := c.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFireToExec measures one scheduled occurrence from the scheduler firing to the
// executor being called (gate, approval, claim, log file, environment included; the
// sandbox's own start is not).
func BenchmarkFireToExec(b *testing.B) {
	nop := &nopExecutor{reached: map[uint]time.Time{}, done: make(chan uint, 1)}
	h := newHarness(b, withClock(t0), withOptions(func(o *Options) { o.Executor = nop }))
	h.start()
	tk := h.task(TaskSpec{Name: "lat", Cwd: h.ws, Schedule: "* * * * *", Overlap: OverlapAllow})
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.clock.Advance(time.Minute)
		start := time.Now()
		h.d.FireDue(context.Background())
		id := <-nop.done
		nop.mu.Lock()
		total += nop.reached[id].Sub(start)
		nop.mu.Unlock()
		b.StopTimer()
		h.wait(id, StatusSucceeded)
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "fire-to-exec-ms")
	_ = tk
}

const benchDowntimeTasks = 10000

// BenchmarkDowntime10kTasksWeek starts after a week closed with 10,000 every-minute
// tasks (100.8 M occurrences): each task's downtime is counted and recorded as one row
// before the scheduler starts. The grace period is tiny so that no latest occurrence runs:
// what is measured is the recording.
func BenchmarkDowntime10kTasksWeek(b *testing.B) {
	zones := []string{"", "Europe/Madrid", "America/New_York"}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		h := newHarness(b, withOptions(func(o *Options) { o.Executor, o.MissedGrace = &nopExecutor{}, time.Nanosecond }))
		week := time.Now().UTC().Add(-7 * 24 * time.Hour)
		tasks := make([]Task, benchDowntimeTasks)
		for j := range tasks {
			tasks[j] = Task{Name: fmt.Sprintf("t%05d", j), Argv: []string{"true"}, Cwd: h.ws, Schedule: "* * * * *",
				TimeZone: zones[j%len(zones)], Overlap: OverlapSkip, Missed: MissedSkip, Enabled: true, HoldDeadline: DefaultHoldDeadline, LastScheduledAt: &week}
		}
		if err := h.db.CreateInBatches(tasks, 500).Error; err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		h.start()
		elapsed := time.Since(start)
		b.StopTimer()
		var rows, occurrences int64
		h.db.Model(&Run{}).Where("status = ?", StatusSkipped).Count(&rows)
		h.db.Model(&Run{}).Where("status = ?", StatusSkipped).Select("COALESCE(SUM(missed_count), 0)").Scan(&occurrences)
		if rows != benchDowntimeTasks || occurrences < benchDowntimeTasks*(7*24*60-2) {
			b.Fatalf("%d rows for %d occurrences, want %d rows for about %d", rows, occurrences, benchDowntimeTasks, benchDowntimeTasks*7*24*60)
		}
		b.ReportMetric(float64(elapsed.Milliseconds()), "start-ms")
		b.ReportMetric(float64(occurrences), "occurrences")
		h.closeAll()
	}
}

// BenchmarkCountSpanWeekEveryMinute counts a week of every-minute occurrences.
func BenchmarkCountSpanWeekEveryMinute(b *testing.B) {
	sched, _, err := ParseSchedule("* * * * *", "Europe/Madrid")
	if err != nil {
		b.Fatal(err)
	}
	from := time.Date(2026, 6, 1, 0, 0, 30, 0, time.UTC)
	for i := 0; i < b.N; i++ {
		if sp := countSpan(sched, from, from.Add(7*24*time.Hour)); sp.count != 7*24*60 {
			b.Fatalf("%d", sp.count)
		}
	}
}
