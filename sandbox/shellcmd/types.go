package shellcmd

import "path"

// Script is the result of Parse: every simple command the source would run,
// in source order (nested and substituted commands follow the command that
// contains them).
type Script struct {
	Commands []Command
}

// Command is one simple command.
//
// A Command with no Args carries the redirects of a compound command or of a
// bare redirection (`{ a; b; } > out`, `> file`), so that every write redirect
// in the source appears on some Command.
type Command struct {
	// Args is the command after wrappers were stripped; Args[0] is the program.
	Args []Word
	// Wrappers are the wrapper programs seen through, outermost first, e.g. ["sudo","timeout"].
	Wrappers []string
	// Assigns are the leading VAR=value assignments (and those given to `env`).
	Assigns []Assign
	// Redirects are the redirections attached to the statement.
	Redirects []Redirect
	// Nested is true when the command came from inside sh -c / bash -c / eval.
	Nested bool
	// Substituted is true when the command came from inside $(...), `...` or <(...).
	Substituted bool
	// Source is the original source text of this simple command (for messages).
	Source string
}

// Word is one shell word.
type Word struct {
	// Raw is the source text as written, e.g. `"$HOME"/x`, `~`, `'a b'`.
	Raw string
	// Value is the value after quote removal when Literal; "" otherwise.
	// An unquoted leading `~` is kept as written: callers expand it.
	Value string
	// Literal is true when the word has no expansion at all (no $var, $(..));
	// globs are OK and stay literal text.
	Literal bool
}

// Assign is a VAR=value assignment.
type Assign struct {
	Name  string
	Value Word
}

// Redirect is one redirection.
type Redirect struct {
	// Op is the operator: ">", ">>", "<", ">|", "&>", "&>>", "<>", ">&", "<&", "<<", "<<-", "<<<".
	Op string
	// FD is the explicit fd if written ("2"), else "".
	FD string
	// Target is the word after the operator (the delimiter for heredocs).
	Target Word
	// Write is true for redirects that write a file (>, >>, >|, &>, &>>, <>,
	// and >& with a target that is not an fd number or "-"); false for <,
	// heredocs and fd duplications.
	Write bool
}

// Program returns the base name of Args[0] (e.g. "/usr/bin/rm" -> "rm"), or ""
// when Args is empty or Args[0] is not literal.
func (c Command) Program() string {
	if len(c.Args) == 0 || !c.Args[0].Literal || c.Args[0].Value == "" {
		return ""
	}
	return path.Base(c.Args[0].Value)
}

// Values returns the Values of Args[from:], and false if any of them is not literal.
func (c Command) Values(from int) ([]string, bool) {
	if from > len(c.Args) {
		return nil, true
	}
	out := make([]string, 0, len(c.Args)-from)
	ok := true
	for _, w := range c.Args[from:] {
		if !w.Literal {
			ok = false
		}
		out = append(out, w.Value)
	}
	return out, ok
}
