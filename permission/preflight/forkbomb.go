package preflight

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
