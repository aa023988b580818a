package preflight

import (
	"strings"
	"testing"
)

func FuzzClassify(f *testing.F) {
	for _, tc := range destructiveCases {
		f.Add(tc.cmd)
	}
	for _, l := range lookalikes {
		f.Add(l)
	}
	for _, b := range forkBombs {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		a := Analyze(cmd, Options{Home: "/home/u"})
		for _, fd := range a.Findings {
			if fd.Reason == "" || fd.Category == "" {
				t.Fatalf("finding without reason or category for %q: %+v", cmd, fd)
			}
		}
		if a.KnownSafe && (len(a.Findings) > 0 || a.ParseError != nil) {
			t.Fatalf("%q is known-safe yet has findings %+v / parse error %v", cmd, a.Findings, a.ParseError)
		}
		// A fork bomb stays one behind sh -c (a dispatch run's command is bash -c SCRIPT).
		if hasCategory(a.Findings, CategoryForkBomb) && a.ParseError == nil && !strings.ContainsAny(cmd, "'\\") {
			if b := Analyze("sh -c '"+cmd+"'", Options{Home: "/home/u"}); b.ParseError == nil && !hasCategory(b.Findings, CategoryForkBomb) {
				t.Fatalf("%q is a fork bomb but sh -c '%s' is not", cmd, cmd)
			}
		}
		// A destructive command stays destructive behind sudo and sh -c.
		// (A first word starting with "-" is an option to sudo, not a program.)
		if a.Destructive() && a.ParseError == nil && !strings.HasPrefix(strings.TrimSpace(cmd), "-") {
			if b := Analyze("sudo "+cmd, Options{Home: "/home/u"}); b.ParseError == nil && !b.Destructive() {
				t.Fatalf("%q is destructive but sudo %q is not", cmd, cmd)
			}
		}
	})
}
