package preflight

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/memchild"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// linearShapes generates n commands of the shapes that make a careless analysis grow
// faster than its input: `cd a;` × N (each cd multiplies the directories a relative
// path may be relative to), nested quotes, $( ), sh -c and eval, long pipelines and
// && / || chains, wrapper chains, huge here-documents, and random mixtures of them.
func linearShapes(n int) []string {
	r := rand.New(rand.NewPCG(28, 12))
	rep := func(s string, k int) string { return strings.Repeat(s, k) }
	nestQuotes := func(k int) string {
		// sh -c "sh -c \"… ls …\"": every level escapes the quotes of the one inside.
		s := "ls"
		for i := 0; i < k && len(s) < 32<<10; i++ {
			s = `sh -c "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`").Replace(s) + `"`
		}
		return s
	}
	nestSingle := func(k int) string {
		s := "rm -rf ~"
		for i := 0; i < k && len(s) < 32<<10; i++ {
			s = "bash -c '" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		return s
	}
	nestEval := func(k int) string {
		s := "ls"
		for i := 0; i < k && len(s) < 32<<10; i++ {
			s = "eval " + shellQuote(s)
		}
		return s
	}
	atoms := []string{"cd a", "cd ..", "cd /tmp", "cd ~", "ls", "cat f", "rm -rf x", "sh -c 'cd a; ls'",
		"echo \"$(cd a; pwd)\"", "sudo -u x env A=1 timeout 5 nice", "x=$((1+y))", "eval 'cd b'", "git status",
		"find . -exec cat {} +", "alias a='cd a'", "a", "pushd b", "xargs -a f cat", "awk '{print}' f", "touch y"}
	seps := []string{"; ", " && ", " || ", " | ", "\n", " & "}
	var out []string
	for i := 0; len(out) < n; i++ {
		k := 1 + r.IntN(1500)
		switch i % 14 {
		case 0:
			out = append(out, rep("cd a;", k)+"ls")
		case 1:
			out = append(out, rep("cd a && ", k)+"touch x")
		case 2:
			out = append(out, rep("cd a; cd ..;", k)+"rm -rf *")
		case 3:
			out = append(out, rep("ls | ", k)+"wc -l")
		case 4:
			out = append(out, rep("true && ", k)+"false || "+rep("echo x || ", k)+"ls")
		case 5:
			d := 1 + r.IntN(shellcmd.MaxNesting+4)
			out = append(out, "echo "+rep(`"$(`, d)+"cd a; ls"+rep(`)"`, d))
		case 6:
			out = append(out, nestQuotes(1+r.IntN(12)))
		case 7:
			out = append(out, nestSingle(1+r.IntN(12)))
		case 8:
			out = append(out, nestEval(1+r.IntN(12)))
		case 9:
			out = append(out, "cat <<'EOF' | sh\n"+rep("cd a; rm -rf x\n", k)+"EOF\n")
		case 10:
			out = append(out, "bash <<EOF\n"+rep("cd a;", k)+"ls\nEOF\n")
		case 11:
			out = append(out, rep("sudo timeout 5 env A=1 nice -n 1 ", 1+r.IntN(200))+"rm -rf ~")
		case 12:
			out = append(out, "sh -c '"+rep("cd a;", k)+"ls'")
		default:
			var b strings.Builder
			for j, m := 0, 1+r.IntN(400); j < m; j++ {
				b.WriteString(atoms[r.IntN(len(atoms))])
				b.WriteString(seps[r.IntN(len(seps))])
			}
			b.WriteString("ls")
			out = append(out, b.String())
		}
	}
	// The reported attack, and its shapes at the largest size that is parsed at all.
	out = append(out, rep("cd a;", 24)+"ls", rep("cd a;", 26)+"ls", rep("cd a;", (shellcmd.MaxSourceBytes-2)/5)+"ls",
		rep("cd a && ", (shellcmd.MaxSourceBytes-10)/8)+"touch x", rep("cd a; cd ..; ", (shellcmd.MaxSourceBytes-10)/13)+"rm -rf *",
		"sh -c '"+rep("cd a;", (shellcmd.MaxSourceBytes-10)/5)+"ls'")
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// allocBudget is what analysing a command of n bytes may allocate: a generous linear
// bound that a quadratic analysis passes only for short inputs and an exponential one
// never.
func allocBudget(n int) uint64 { return 4<<20 + 4096*uint64(n) }

// Every analysis Airlock runs on a shell command — the parse, the classifier, the
// sandbox's write analysis — costs memory linear in the command's length, whatever its
// shape. The 10,000 shapes run in a child whose memory is capped, so that a regression
// fails here instead of taking the machine down.
func TestAnalysisIsLinear(t *testing.T) {
	if !memchild.Run(t, memchild.Limits{RSS: 1 << 30, Timeout: 10 * time.Minute}) {
		return
	}
	dir := t.TempDir()
	pol := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Cwd: dir, WritableRoots: []string{dir}, Home: "/home/u"}
	opts := Options{Home: "/home/u", Cwd: "/home/u/proj"}
	var worst float64
	analysed := 0
	var worstShape string
	measure := func(src string, f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	shapes := linearShapes(10000)
	for i, src := range shapes {
		if memchild.Race && i%8 != 0 && i < 10000 {
			continue // the race detector's checks make each shape ten times slower: a sample, and every largest shape
		}
		analysed++
		var a Analysis
		alloc := measure(src, func() { a = Analyze(src, opts) })
		alloc += measure(src, func() { _, _ = pol.AnalyzeCommand(src, "") })
		if r := float64(alloc) / float64(len(src)); r > worst {
			worst, worstShape = r, fmt.Sprintf("#%d (%d bytes) %.60q", i, len(src), src)
		}
		if alloc > allocBudget(len(src)) {
			t.Fatalf("shape #%d (%d bytes, %.80q…) allocated %d MiB, over the linear budget of %d MiB",
				i, len(src), src, alloc>>20, allocBudget(len(src))>>20)
		}
		if a.KnownSafe && strings.Contains(src, "rm -rf") {
			t.Fatalf("shape #%d (%.80q…) deletes and is known safe", i, src)
		}
	}
	t.Logf("%d of %d shapes analysed; the most allocated per byte: %.0f, by %s", analysed, len(shapes), worst, worstShape)
}

// What the analysis gave up on is refused with the reason, not allowed: cd past the
// depth that is followed is "too complex", and still P2.
func TestTooComplexIsP2(t *testing.T) {
	a := Analyze(strings.Repeat("cd a;", 5000)+"ls", Options{Home: "/home/u"})
	if a.KnownSafe || !strings.Contains(strings.Join(a.Reasons(), "\n"), "too complex for Airlock to analyse") {
		t.Fatalf("deep cd chain: safe=%v %v, want a P2 finding that says it is too complex", a.KnownSafe, a.Reasons())
	}
	if a.Interactive() {
		t.Fatalf("too complex is P2, not interactive-only: %v", a.Reasons())
	}
	if a := Analyze("cd a; cd b; ls", Options{}); !a.KnownSafe {
		t.Fatalf("a short cd chain is known safe: %v", a.Reasons())
	}
}

// FuzzAnalysisBounded holds the analysis to the linear budget for any input.
func FuzzAnalysisBounded(f *testing.F) {
	for _, s := range linearShapes(28) {
		if len(s) < 4<<10 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Analyze(src, Options{Home: "/home/u", Cwd: "/home/u/proj"})
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > allocBudget(len(src)) {
			t.Fatalf("%d bytes allocated %d MiB", len(src), alloc>>20)
		}
	})
}
