package shellcmd

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// evaluation records n when bash evaluates it (or part of it) as arithmetic or as a
// variable name.
func (w *walker) evaluation(src string, n syntax.Node, nested, subst bool) {
	add := func(kind EvalKind, x syntax.Node, vars []string) {
		if x == nil {
			return
		}
		text := Word{Raw: slice(src, x.Pos(), x.End())}
		if wd, ok := x.(*syntax.Word); ok {
			text = wordFrom(src, wd)
		}
		w.evals = append(w.evals, Evaluation{Kind: kind, Text: text, Vars: vars, Nested: nested, Substituted: subst})
	}
	arith := func(x syntax.ArithmExpr) {
		if x != nil {
			add(EvalArithmetic, x, arithVars(x))
		}
	}
	switch n := n.(type) {
	case *syntax.ArithmExp:
		arith(n.X)
	case *syntax.ArithmCmd:
		arith(n.X)
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			arith(x)
		}
	case *syntax.CStyleLoop:
		arith(n.Init)
		arith(n.Cond)
		arith(n.Post)
	case *syntax.Assign:
		arith(n.Index)
	case *syntax.ParamExp:
		arith(n.Index)
		if n.Slice != nil {
			arith(n.Slice.Offset)
			arith(n.Slice.Length)
		}
		if n.Excl && n.Param != nil && n.Index == nil {
			// ${!x}: x's value names the variable to expand, subscript evaluated.
			add(EvalName, n, []string{n.Param.Value})
		}
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
			if wd, ok := n.X.(*syntax.Word); ok {
				add(EvalName, wd, wordVars(wd))
			}
		}
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			// [[ a -eq b ]] evaluates both sides as arithmetic.
			for _, x := range []syntax.TestExpr{n.X, n.Y} {
				if wd, ok := x.(*syntax.Word); ok {
					vars := wordVars(wd)
					if lit := wd.Lit(); validName(lit) {
						vars = append(vars, lit)
					}
					add(EvalArithmetic, wd, vars)
				}
			}
		}
	}
}

// arithVars returns the variables an arithmetic expression reads: bare names (x, a[i])
// and parameter expansions ($x).
func arithVars(x syntax.ArithmExpr) []string { return varsRead(x, true) }

// wordVars returns the variables a word expands.
func wordVars(wd *syntax.Word) []string { return varsRead(wd, false) }

// varsRead returns the parameter expansions under node (not inside a command or process
// substitution, which runs on its own) and, with bare, the literal names too (in
// arithmetic, x means $x).
func varsRead(node syntax.Node, bare bool) []string {
	var out []string
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.ParamExp:
			if n.Param != nil {
				out = append(out, n.Param.Value)
			}
		case *syntax.Lit:
			if name, _, _ := strings.Cut(n.Value, "["); bare && validName(name) {
				out = append(out, name)
			}
		}
		return true
	})
	return out
}

// heredocWord converts a here-document body: quotes in it are text, and a backslash
// only escapes $, ` and \ (as in double quotes).
func heredocWord(src string, w *syntax.Word) Word {
	out := Word{Raw: slice(src, w.Pos(), w.End())}
	var b strings.Builder
	for _, p := range w.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return out
		}
		b.WriteString(unescapeDouble(lit.Value))
	}
	out.Value, out.Literal = b.String(), true
	return out
}
