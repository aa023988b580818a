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
	return &Script{Commands: w.out, Evaluations: w.evals}, nil
}

// parseFile parses src after checking it against the limits (every parse goes through
// here, nested scripts included).
func parseFile(src string) (*syntax.File, error) {
	if err := checkLimits(src); err != nil {
		return nil, err
	}
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

type walker struct {
	out   []Command
	evals []Evaluation
	// piped are the statements whose standard input is a pipe; from maps the right
	// side of a pipe to its left side, and index a statement to 1 + the index of its
	// command in out.
	piped map[*syntax.Stmt]bool
	from  map[*syntax.Stmt]*syntax.Stmt
	index map[*syntax.Stmt]int
}

// pipedFrom returns 1 + the index of the simple command whose output feeds st, or 0.
func (w *walker) pipedFrom(st *syntax.Stmt) int {
	for x := w.from[st]; x != nil; {
		if b, ok := x.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			x = b.Y
			continue
		}
		return w.index[x]
	}
	return 0
}

// emitted records that the last command of out came from st.
func (w *walker) emitted(st *syntax.Stmt) {
	if w.index == nil {
		w.index = map[*syntax.Stmt]int{}
	}
	w.index[st] = len(w.out)
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
			if w.piped[n] {
				// A group or subshell at the end of a pipe hands its stdin on.
				var inner []*syntax.Stmt
				switch cmd := n.Cmd.(type) {
				case *syntax.Subshell:
					inner = cmd.Stmts
				case *syntax.Block:
					inner = cmd.Stmts
				case *syntax.BinaryCmd:
					inner = []*syntax.Stmt{cmd.X}
				}
				for _, st := range inner {
					w.markPiped(st)
				}
			}
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				w.markPiped(n.Y)
				if w.from == nil {
					w.from = map[*syntax.Stmt]*syntax.Stmt{}
				}
				w.from[n.Y] = n.X
			}
		default:
			w.evaluation(src, n, nested, subst)
		}
		return true
	})
}

func (w *walker) markPiped(st *syntax.Stmt) {
	if w.piped == nil {
		w.piped = map[*syntax.Stmt]bool{}
	}
	w.piped[st] = true
}

// stmt records the simple command (or the redirects of a compound command) of st.
// Walk continues into st's children afterwards, which finds substitutions and
// the statements of compound commands.
func (w *walker) stmt(src string, st *syntax.Stmt, nested, subst bool) {
	redirs := redirects(src, st.Redirs)
	if decl, ok := st.Cmd.(*syntax.DeclClause); ok {
		c := declCommand(src, st, decl, redirs, nested, subst, w.piped[st])
		c.PipedFrom = w.pipedFrom(st)
		w.out = append(w.out, c)
		w.emitted(st)
		return
	}
	call, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall {
		if len(redirs) > 0 {
			w.out = append(w.out, Command{
				Redirects: redirs, Nested: nested, Substituted: subst,
				Source: stmtSource(src, st), PipedIn: w.piped[st],
			})
		}
		return
	}
	c := Command{Redirects: redirs, Nested: nested, Substituted: subst, Source: stmtSource(src, st), PipedIn: w.piped[st], PipedFrom: w.pipedFrom(st)}
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
	args, c.Wrappers, c.WrapperArgs, c.Assigns = stripWrappers(args, c.Assigns)
	c.Args = args
	if len(c.Args) == 0 && len(c.Assigns) == 0 && len(c.Redirects) == 0 {
		return
	}
	w.out = append(w.out, c)
	w.emitted(st)
	if !nested {
		if err := w.follow(c, subst); err != nil {
			w.out[len(w.out)-1].NestedError = err
		}
	}
}

// declCommand renders declare/local/export/readonly/typeset/nameref as a command: its
// flags and bare names are Args, its NAME=value pairs Assigns.
func declCommand(src string, st *syntax.Stmt, d *syntax.DeclClause, redirs []Redirect, nested, subst, piped bool) Command {
	c := Command{Redirects: redirs, Nested: nested, Substituted: subst, Source: stmtSource(src, st), PipedIn: piped}
	c.Args = append(c.Args, literalWord(d.Variant.Value))
	for _, a := range d.Args {
		switch {
		case a.Naked && a.Name != nil:
			c.Args = append(c.Args, literalWord(a.Name.Value))
		case a.Naked:
			c.Args = append(c.Args, wordFrom(src, a.Value))
		case a.Name != nil:
			c.Assigns = append(c.Assigns, Assign{Name: a.Name.Value, Value: wordFrom(src, a.Value)})
		}
	}
	return c
}

// follow parses the script of `sh -c SCRIPT` or `eval ARGS` one level deep. The error
// says why a literal script was not followed.
func (w *walker) follow(c Command, subst bool) error {
	script, ok := innerScript(c)
	if !ok {
		return nil
	}
	f, err := parseFile(script)
	if err != nil {
		return fmt.Errorf("parse the script run by %s: %w", c.Program(), err)
	}
	w.file(script, f, true, subst)
	return nil
}

// shells run the script given with -c. Every part of Airlock that looks inside
// `sh -c SCRIPT` asks IsShell, so a shell one part follows is never opaque to another.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "fish": true}

// IsShell reports whether program (a base name, as Command.Program returns it) is a
// shell that runs the script given with -c, and that reads one from stdin when given
// none.
func IsShell(program string) bool {
	return shells[program]
}

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
		if r.Hdoc != nil {
			red.Body = heredocWord(src, r.Hdoc)
		}
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

// ParseText parses text that bash expands without running it as a command (a variable's
// value evaluated as an arithmetic subscript, a here-document body) and returns the
// commands of the substitutions in it, Substituted=true. Plain text gives no commands.
func ParseText(src string) (*Script, error) {
	if err := checkLimits(src); err != nil {
		return nil, fmt.Errorf("parse shell text: %w", err)
	}
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	word, err := p.Document(strings.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("parse shell text: %w", err)
	}
	w := walker{}
	w.node(src, word, false, true)
	return &Script{Commands: w.out, Evaluations: w.evals}, nil
}
