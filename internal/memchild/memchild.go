// Package memchild runs a test's body in a child process with a memory ceiling and a
// deadline, so that a regression to unbounded work (an analysis gone exponential) fails
// the test instead of taking the machine down with it.
package memchild

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

const env = "AIRLOCK_MEMCHILD"

// Limits bound the child.
type Limits struct {
	// RSS is the most resident memory the child may use; the parent kills it past this.
	// Under the race detector it is four times as much (its shadow memory), and the Go
	// heap is still held to RSS.
	RSS int64
	// Timeout is how long the child may run; the parent kills it after. It is a ceiling
	// only runaway work reaches, not a timing assertion.
	Timeout time.Duration
}

// Run re-executes the test binary to run only t (a top-level test) under l, and fails t
// when the child fails, outgrows l.RSS or outlives l.Timeout. It returns true in the
// child, where the caller runs the test's body, and false in the parent, which has then
// already checked the child.
func Run(t *testing.T, l Limits) bool {
	t.Helper()
	if os.Getenv(env) == t.Name() {
		// Inside: the Go heap is held under the ceiling too, and a watchdog stops the child
		// before the parent has to.
		debug.SetMemoryLimit(l.RSS / 2)
		go watchHeap(l.RSS)
		return true
	}
	rss := l.RSS
	if Race {
		rss *= 4
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+t.Name(), "GOMEMLIMIT="+strconv.FormatInt(l.RSS/2, 10))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the child: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(l.Timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var peak int64
	for {
		select {
		case err := <-done:
			t.Logf("child: peak RSS %d MiB\n%s", peak>>20, out.String())
			if err != nil {
				t.Fatalf("the child failed: %v", err)
			}
			return false
		case <-deadline:
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("the child ran past %v (killed):\n%s", l.Timeout, out.String())
		case <-tick.C:
			now := residentBytes(cmd.Process.Pid)
			peak = max(peak, now)
			if now > rss {
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("the child used %d MiB, past %d MiB (killed):\n%s", now>>20, rss>>20, out.String())
			}
		}
	}
}

func watchHeap(ceiling int64) {
	var m runtime.MemStats
	for range time.Tick(5 * time.Millisecond) {
		runtime.ReadMemStats(&m)
		if int64(m.HeapAlloc) > ceiling {
			fmt.Printf("FAIL: the heap grew to %d MiB, past %d MiB\n", m.HeapAlloc>>20, ceiling>>20)
			os.Exit(3)
		}
	}
}

// residentBytes is a process's resident set size (0 where /proc is not there).
func residentBytes(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
