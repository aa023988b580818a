package preflight

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/airlock-app/airlock/sandbox/lazyre"
)

// forkBombReason is the finding's reason, wherever the bomb was found.
const forkBombReason = "fork bomb: a function that starts copies of itself until the machine stops"

// forkBomb flags src, a shell script run by via (the command line, sh -c, eval), when
// it is a fork bomb.
func (a *analyzer) forkBomb(src, via string) {
	if hasForkBombShape(src) && isForkBomb(src) {
		a.add(CategoryForkBomb, forkBombReason, via)
	}
}

var (
	// oneLinerFork matches the ways interpreters fork: os.fork(), perl's and ruby's fork,
	// pcntl_fork().
	oneLinerFork = lazyre.New(`\bfork\b`)
	// oneLinerLoop matches a loop that never has to end: while, until, for, loop,
	// .times, iter(…), itertools.
	oneLinerLoop = lazyre.New(`\b(while|until|for|loop|times|iter|itertools|repeat)\b`)
)

// forkLoop reports whether interpreter code forks inside a loop (`while True: os.fork()`,
// `perl -e 'fork while 1'`): one process becomes as many as the loop turns, each of which
// loops on.
func forkLoop(code string) bool {
	return oneLinerFork().MatchString(code) && oneLinerLoop().MatchString(code)
}

// hasForkBombShape is a cheap pre-check before parsing for function declarations.
func hasForkBombShape(src string) bool {
	return strings.Contains(src, "()") || strings.Contains(src, "function")
}

// isForkBomb reports whether src declares a function that calls itself in the
// background or through a pipe (`:(){ :|:& };:` and its renamings).
func isForkBomb(src string) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return false
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		fd, ok := n.(*syntax.FuncDecl)
		if !ok || found || fd.Name == nil || fd.Body == nil {
			return !found
		}
		name := fd.Name.Value
		selfCalls, spawns := 0, false
		syntax.Walk(fd.Body, func(m syntax.Node) bool {
			switch m := m.(type) {
			case *syntax.Stmt:
				if m.Background {
					spawns = true
				}
			case *syntax.BinaryCmd:
				if m.Op == syntax.Pipe || m.Op == syntax.PipeAll {
					spawns = true
				}
			case *syntax.CallExpr:
				if len(m.Args) > 0 && m.Args[0].Lit() == name {
					selfCalls++
				}
			}
			return true
		})
		if selfCalls > 0 && spawns {
			found = true
		}
		return !found
	})
	return found
}
