package preflight

import "testing"

// forkBombs are flagged as fork bombs however they are spelled, renamed or wrapped: a
// dispatch run's own command reaches the classifier as `bash -c SCRIPT`.
var forkBombs = []string{
	"bash -c ':(){ :|:& };:'",
	":(){ :|:& };:",
	":(){ :|: & }; :",
	"f(){ f|f& };f",
	"bomb(){ bomb | bomb & }; bomb",
	"x(){ x & x; }; x",
	"sh -c 'f(){ f|f& };f'",
	`bash -c "bomb() { bomb | bomb & }; bomb"`,
	"sudo bash -c ':(){ :|:& };:'",
	"timeout 10 sh -c ':(){ :|:& };:'",
	"eval ':(){ :|:& };:'",
	"bash -c \"bash -c ':(){ :|:& };:'\"",
	"env -i sh -c 'f(){ f | f & }; f'",
	"python3 -c 'import os\nwhile True: os.fork()'",
	`python3 -c "import os; [os.fork() for _ in iter(int, 1)]"`,
	`python -c 'import os
while 1:
    os.fork()'`,
	`perl -e 'fork while 1'`,
	`perl -e 'while (1) { fork }'`,
	`ruby -e 'loop { fork }'`,
	`bash -c "python3 -c 'import os
while True: os.fork()'"`,
}

func TestForkBombsAreFlagged(t *testing.T) {
	for _, cmd := range forkBombs {
		t.Run(cmd, func(t *testing.T) {
			a := Analyze(cmd, Options{Home: "/home/u"})
			if !hasCategory(a.Findings, CategoryForkBomb) {
				t.Fatalf("Analyze(%q) = %+v, want a fork_bomb finding", cmd, a.Findings)
			}
			if !a.Interactive() || a.KnownSafe {
				t.Fatalf("Analyze(%q): interactive %v, known-safe %v: a fork bomb must be P2 and asked of a person", cmd, a.Interactive(), a.KnownSafe)
			}
		})
	}
}
