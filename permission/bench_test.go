package permission

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// corpus loads the real-world command corpus (testdata/corpus.txt).
func corpus(tb testing.TB) []string {
	f, err := os.Open("testdata/corpus.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// thousandRules builds 1,000 realistic rules: allow/ask/deny on program + subcommand
// prefixes for bash, and path/url rules for the file and web tools.
func thousandRules() []RuleSetting {
	progs := []string{"git", "npm", "go", "cargo", "make", "docker", "kubectl", "terraform", "aws", "python3", "pip", "yarn", "pnpm", "curl", "helm", "psql"}
	subs := []string{"status", "log", "diff", "test", "build", "install", "run", "get", "describe", "plan", "ls", "push", "apply", "delete", "exec", "logs"}
	actions := []string{"allow", "ask", "allow", "deny"}
	var rules []RuleSetting
	for i := 0; len(rules) < 900; i++ {
		p, s := progs[i%len(progs)], subs[(i/len(progs))%len(subs)]
		pattern := fmt.Sprintf("%s %s *", p, s)
		if i >= len(progs)*len(subs) {
			pattern = fmt.Sprintf("%s %s --flag-%d *", p, s, i)
		}
		rules = append(rules, RuleSetting{Tool: "bash", Pattern: pattern, Action: actions[i%len(actions)]})
	}
	for i := 0; len(rules) < 1000; i++ {
		switch i % 3 {
		case 0:
			rules = append(rules, RuleSetting{Tool: "write_file", Pattern: fmt.Sprintf("/srv/project-%d/*", i), Action: "allow"})
		case 1:
			rules = append(rules, RuleSetting{Tool: "web_fetch", Pattern: fmt.Sprintf("https://docs-%d.example.com/*", i), Action: "allow"})
		default:
			rules = append(rules, RuleSetting{Tool: "*", Pattern: fmt.Sprintf("/secret-%d/*", i), Action: "deny"})
		}
	}
	return rules
}

// threadCPU is the CPU time the calling OS thread has used. The benchmarks lock their
// goroutine to a thread and record it next to the wall time, so that on a shared,
// oversubscribed machine the work itself can be told apart from waiting for a core.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// latencies records per-operation wall and thread-CPU durations.
type latencies struct{ wall, cpu []time.Duration }

func newLatencies(n int) *latencies {
	runtime.LockOSThread()
	return &latencies{wall: make([]time.Duration, 0, n), cpu: make([]time.Duration, 0, n)}
}

func (l *latencies) measure(f func()) {
	c0, w0 := threadCPU(), time.Now()
	f()
	l.wall = append(l.wall, time.Since(w0))
	l.cpu = append(l.cpu, threadCPU()-c0)
}

func (l *latencies) report(b *testing.B) {
	runtime.UnlockOSThread()
	pct := func(d []time.Duration, unit string) {
		if len(d) == 0 {
			return
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		b.ReportMetric(float64(d[len(d)*50/100].Nanoseconds()), "p50-"+unit)
		b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds()), "p99-"+unit)
	}
	pct(l.wall, "wall-ns")
	pct(l.cpu, "cpu-ns")
}

func benchBroker(b testing.TB, opts ...brokerOpt) (*Broker, []Request) {
	db := openDB(b, b.TempDir())
	e, err := Resolve(Sources{File: Settings{Permission: PermissionSection{Rules: thousandRules()}}, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		b.Fatal(err)
	}
	br, _ := newBroker(b, db, e, opts...)
	for i := 0; i < 50; i++ {
		br.Grants().Add(context.Background(), api.GrantRecord{Tool: "bash", Pattern: fmt.Sprintf("tool-%d *", i), Scope: ScopeAlways, Department: "dev"})
	}
	var reqs []Request
	for _, c := range corpus(b) {
		reqs = append(reqs, bash(c))
	}
	return br, reqs
}

// BenchmarkDecisionLatency measures the pipeline (preflight, 1,000 rules, grants,
// tier, policy) on the command corpus, without the sandbox's isolation check.
func BenchmarkDecisionLatency(b *testing.B) {
	br, reqs := benchBroker(b)
	ctx := context.Background()
	lat := newLatencies(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat.measure(func() { br.Check(ctx, reqs[i%len(reqs)]) })
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkDecisionLatencyWithSandbox adds the sandbox's AnalyzeCommand (realpath of
// write targets) as the isolation step.
func BenchmarkDecisionLatencyWithSandbox(b *testing.B) {
	cwd := b.TempDir()
	pol, err := sandbox.Resolve(sandbox.Inputs{Cwd: cwd, Home: b.TempDir(), Env: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	iso := SandboxIsolation{PolicyFor: func(context.Context, Request) (sandbox.Policy, error) { return pol, nil }}
	br, reqs := benchBroker(b, func(o *BrokerOptions) { o.Isolation = iso })
	ctx := context.Background()
	lat := newLatencies(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := reqs[i%len(reqs)]
		r.Context.Cwd = cwd
		lat.measure(func() { br.Check(ctx, r) })
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkAwaitNoAsk is the full Await for decisions that need nobody (under never:
// P1 allowed, P2 denied), including the audit record and the event.
func BenchmarkAwaitNoAsk(b *testing.B) {
	br, reqs := benchBroker(b)
	br.Reload(func() Effective { e := br.Settings(); e.ApprovalPolicy = PolicyNever; return e }())
	ctx := context.Background()
	br.pub = nil
	lat := newLatencies(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := reqs[i%len(reqs)]
		lat.measure(func() {
			if _, err := br.Await(ctx, r); err != nil {
				b.Fatal(err)
			}
		})
	}
	b.StopTimer()
	lat.report(b)
	br.FlushAudit(ctx)
}
