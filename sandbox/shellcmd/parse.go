package shellcmd

import (
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

// Parse parses a shell command line (bash dialect) into the simple commands it
// would run. It follows `sh -c`, `bash -c`, `bash -lc`, `dash -c`, `zsh -c` and
// `eval` ONE level (the nested commands come back with Nested=true), walks every
// pipeline/list/subshell/block/if/for/while/case and command substitution, and
// sees through wrappers. A parse error is returned as an error.
func Parse(src string) (*Script, error) {
	file, err := parseFile(src)
	if err != nil {
		return nil, fmt.Errorf("parse shell command: %w", err)
	}
	w := walker{}
	w.file(src, file, false, false)
	return &Script{Commands: w.out}, nil
}

func parseFile(src string) (*syntax.File, error) {
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

type walker struct {
	out []Command
}

// file walks every statement of f. nested marks commands that came from
// inside sh -c / eval (and stops further nesting).
func (w *walker) file(src string, f *syntax.File, nested, subst bool) {
	for _, st := range f.Stmts {
		w.node(src, st, nested, subst)
	}
}

func (w *walker) node(src string, n syntax.Node, nested, subst bool) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			for _, st := range n.Stmts {
				w.node(src, st, nested, true)
			}
			return false
		case *syntax.ProcSubst:
			for _, st := range n.Stmts {
				w.node(src, st, nested, true)
			}
			return false
		case *syntax.Stmt:
			w.stmt(src, n, nested, subst)
		}
		return true
	})
}

// stmt records the simple command (or the redirects of a compound command) of st.
// Walk continues into st's children afterwards, which finds substitutions and
// the statements of compound commands.
func (w *walker) stmt(src string, st *syntax.Stmt, nested, subst bool) {
	redirs := redirects(src, st.Redirs)
	call, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall {
		if len(redirs) > 0 {
			w.out = append(w.out, Command{
				Redirects: redirs, Nested: nested, Substituted: subst,
				Source: stmtSource(src, st),
			})
		}
		return
	}
	c := Command{Redirects: redirs, Nested: nested, Substituted: subst, Source: stmtSource(src, st)}
	for _, a := range call.Assigns {
		if a.Name == nil {
			continue
		}
		c.Assigns = append(c.Assigns, Assign{Name: a.Name.Value, Value: wordFrom(src, a.Value)})
	}
	args := make([]Word, len(call.Args))
	for i, a := range call.Args {
		args[i] = wordFrom(src, a)
	}
	args, c.Wrappers, c.Assigns = stripWrappers(args, c.Assigns)
	c.Args = args
	if len(c.Args) == 0 && len(c.Assigns) == 0 && len(c.Redirects) == 0 {
		return
	}
	w.out = append(w.out, c)
	if !nested {
		w.follow(c, subst)
	}
}

// follow parses the script of `sh -c SCRIPT` or `eval ARGS` one level deep.
func (w *walker) follow(c Command, subst bool) {
	script, ok := innerScript(c)
	if !ok {
		return
	}
	f, err := parseFile(script)
	if err != nil {
		return
	}
	w.file(script, f, true, subst)
}

var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// innerScript returns the literal script a command runs through a shell, if any.
func innerScript(c Command) (string, bool) {
	prog := c.Program()
	if prog == "eval" {
		vals, ok := c.Values(1)
		if !ok || len(vals) == 0 {
			return "", false
		}
		return strings.Join(vals, " "), true
	}
	if prog == "su" || prog == "runuser" {
		// su [options] [user] -c COMMAND: the command runs through the user's shell.
		for i := 1; i < len(c.Args); i++ {
			if v := c.Args[i]; v.Literal && (v.Value == "-c" || v.Value == "--command") && i+1 < len(c.Args) && c.Args[i+1].Literal {
				return c.Args[i+1].Value, true
			}
			if v := c.Args[i]; v.Literal && strings.HasPrefix(v.Value, "--command=") {
				return strings.TrimPrefix(v.Value, "--command="), true
			}
		}
		return "", false
	}
	if !shells[prog] {
		return "", false
	}
	hasC := false
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		if !a.Literal {
			return "", false
		}
		v := a.Value
		switch {
		case v == "--" || v == "-":
			if hasC && i+1 < len(c.Args) && c.Args[i+1].Literal {
				return c.Args[i+1].Value, true
			}
			return "", false
		case v == "-o" || v == "+o" || v == "-O" || v == "+O" || v == "--rcfile" || v == "--init-file":
			i++
		case strings.HasPrefix(v, "--"):
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			if v[0] == '-' && strings.ContainsRune(v[1:], 'c') {
				hasC = true
			}
		default:
			if hasC {
				return v, true
			}
			return "", false
		}
	}
	return "", false
}

func redirects(src string, rs []*syntax.Redirect) []Redirect {
	if len(rs) == 0 {
		return nil
	}
	out := make([]Redirect, 0, len(rs))
	for _, r := range rs {
		red := Redirect{Op: r.Op.String(), Target: wordFrom(src, r.Word)}
		if r.N != nil {
			red.FD = r.N.Value
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
			syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
			red.Write = true
		case syntax.DplOut:
			// `>& file` writes stdout and stderr to file; `>&2` and `>&-` are dups.
			red.Write = !(red.Target.Literal && (red.Target.Value == "-" || isDigits(strings.TrimSuffix(red.Target.Value, "-"))))
		}
		out = append(out, red)
	}
	return out
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// stmtSource is the source text of st without its trailing ; or &.
func stmtSource(src string, st *syntax.Stmt) string {
	end := st.End()
	if st.Semicolon.IsValid() && st.Semicolon.Offset() < end.Offset() {
		end = st.Semicolon
	}
	return strings.TrimRight(slice(src, st.Pos(), end), " \t&")
}
