package preflight

import (
	"bufio"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func loadCorpus(b *testing.B) []string {
	f, err := os.Open("../testdata/corpus.txt")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if l := strings.TrimSpace(s.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// BenchmarkClassify measures classifier throughput on the real-world corpus; the
// commands/s metric is per core (run with -cpu 1).
func BenchmarkClassify(b *testing.B) {
	cmds := loadCorpus(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Analyze(cmds[i%len(cmds)], Options{Home: "/home/u"})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commands/s")
}

// BenchmarkClassifyCPU reports throughput per CPU-second of the benchmark's thread, which
// is what "per core" means on a machine shared with other work.
func BenchmarkClassifyCPU(b *testing.B) {
	cmds := loadCorpus(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ts0, ts1 unix.Timespec
	b.ResetTimer()
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts0)
	for i := 0; i < b.N; i++ {
		Analyze(cmds[i%len(cmds)], Options{Home: "/home/u"})
	}
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts1)
	cpu := time.Duration(ts1.Nano() - ts0.Nano())
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "commands/cpu-s")
}
