package preflight

import (
	"bufio"
	"os"
	"strings"
	"testing"
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
