package sandbox

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

func loadCorpus(tb testing.TB) []string {
	f, err := os.Open("testdata/commands.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			cmds = append(cmds, line)
		}
	}
	if len(cmds) < 200 {
		tb.Fatalf("corpus has %d commands, want at least 200", len(cmds))
	}
	return cmds
}

// TestCorpusParses keeps the benchmark corpus honest: every command parses.
func TestCorpusParses(t *testing.T) {
	p, _ := testPolicy(t, "workspace-write", false)
	denied := 0
	for _, c := range loadCorpus(t) {
		a, err := p.AnalyzeCommand(c, "")
		if d, ok := IsDenied(err); ok && d.Reason == ReasonBash && strings.Contains(d.Why, "does not parse") {
			t.Errorf("corpus command does not parse: %q: %v", c, err)
		}
		if !a.Allowed {
			denied++
		}
	}
	t.Logf("%d commands denied by a workspace-write, network-off policy", denied)
}

// BenchmarkAnalyzeCommand measures the application layer's pre-analysis over
// a corpus of real-world commands (aim: over 50,000 commands/s on one core).
func BenchmarkAnalyzeCommand(b *testing.B) {
	cmds := loadCorpus(b)
	p, _ := testPolicy(b, "workspace-write", false)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		_, _ = p.AnalyzeCommand(cmds[i%len(cmds)], "")
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "commands/s")
}
