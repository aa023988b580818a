package preflight

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// memoryCeiling is what the analysis of one hostile command may make the process use.
const memoryCeiling = 200 << 20

// hostileCommands are single commands built to make analysis cost grow with the square
// of their length (58 KiB each, the size that took the daemon to 17 GB).
func hostileCommands() map[string]string {
	const size = 58 << 10
	nest := func(open, mid, close string) string {
		n := size / (len(open) + len(close))
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	chain := func(word, end string) string { return strings.Repeat(word, size/len(word)) + end }
	deep := nest("$(", "x", ")")
	return map[string]string{
		"nested $(":              deep,
		"nested quoted $(":       nest(`echo "$(`, "x", `)"`),
		"nested subshells":       nest("(", "x", ")"),
		"nested ifs":             nest("if true; then ", "x", "; fi"),
		"nested in sh -c":        "sh -c '" + deep + "'",
		"hidden in a subscript":  "x='a[" + deep + "]'; echo $((x))",
		"pkexec chain":           chain("pkexec ", "rm -rf ~"),
		"sudo assignment chain":  chain("sudo A=1 ", "rm -rf ~"),
		"find -exec chain":       chain("find . -exec ", "rm -rf ~ ;"),
		"alias chain":            chain("alias a=a; a; ", "true"),
		"script -c chain":        chain("script -qc ", "x"),
		"wide flat command list": chain("echo \"$(ls)\" $((1+x)) | sh; ", "true"),
	}
}

// TestHostileCommandsBoundedMemory analyses each hostile command in a child process that
// dies the moment it uses more than memoryCeiling, and asserts what each analysis
// allocated: memory, not time.
func TestHostileCommandsBoundedMemory(t *testing.T) {
	if os.Getenv("AIRLOCK_HOSTILE_CHILD") == "1" {
		hostileChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileCommandsBoundedMemory$", "-test.v")
	cmd.Env = append(os.Environ(), "AIRLOCK_HOSTILE_CHILD=1", "GOMEMLIMIT=150MiB")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("analysis of hostile commands failed (%v):\n%s", err, out)
	}
	t.Logf("%s", out)
}

func hostileChild(t *testing.T) {
	debug.SetMemoryLimit(150 << 20)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > memoryCeiling {
				fmt.Printf("FAIL: the analysis grew the heap to %d MiB, past %d MiB\n", m.HeapAlloc>>20, memoryCeiling>>20)
				os.Exit(3)
			}
		}
	}()
	for name, cmd := range hostileCommands() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a := Analyze(cmd, Options{Home: "/home/u"})
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		var cats []Category
		for _, f := range a.Findings {
			cats = append(cats, f.Category)
		}
		t.Logf("%s: %d bytes, allocated %d KiB, findings %v", name, len(cmd), alloc>>10, cats)
		if alloc > 64<<20 {
			t.Errorf("%s: analysis allocated %d MiB for a %d KiB command", name, alloc>>20, len(cmd)>>10)
		}
		if a.KnownSafe || len(a.Findings) == 0 {
			t.Errorf("%s: no finding, so it would not even be P2", name)
		}
	}
	// The refusal says why, and comes before any analysis: it is interactive-only.
	a := Analyze(hostileCommands()["nested $("], Options{})
	if a.ParseError == nil || !a.Interactive() || !strings.Contains(strings.Join(a.Reasons(), " "), "nested too deeply") {
		t.Errorf("deep command: %+v, want a parse error and an interactive-only finding that says it is nested too deeply", a)
	}
}
