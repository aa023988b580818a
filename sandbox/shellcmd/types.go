package shellcmd

import "path"

// Script is the result of Parse: every simple command the source would run,
// in source order (nested and substituted commands follow the command that
// contains them).
type Script struct {
	Commands []Command
	// Evaluations are the places where bash evaluates text as code without running it
	// as a command: arithmetic and variable-name operands (see Evaluation).
	Evaluations []Evaluation
}

// EvalKind says how bash evaluates an Evaluation's text.
type EvalKind string

// Evaluation kinds.
const (
	// EvalArithmetic is an arithmetic expression: $(( )), (( )), let, for (( )),
	// [[ a -eq b ]], an array subscript, ${x:offset:length}.
	EvalArithmetic EvalKind = "arithmetic"
	// EvalName is an operand bash takes as a variable name, subscript included:
	// [[ -v NAME ]], [[ -R NAME ]] and ${!NAME}.
	EvalName EvalKind = "name"
)

// Evaluation is a place where bash evaluates text as code. A variable named in an
// arithmetic expression has its value evaluated as arithmetic in turn, and a subscript
// of an array name is arithmetic too: `x='a[$(rm -rf ~)]'; echo $((x))` runs the rm.
type Evaluation struct {
	Kind EvalKind
	// Text is the expression or operand as written (for EvalName, its value when literal).
	Text Word
	// Vars are the variables whose values bash evaluates here (x in $((x)) and in
	// [[ -v $x ]]).
	Vars []string
	// Nested and Substituted are as for Command.
	Nested, Substituted bool
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
	// WrapperArgs[i] is the command line from Wrappers[i] on: the wrapper's own words
	// (its options: xargs -a FILE, env -C DIR) followed by what it runs. The slices share
	// one array, so they cost nothing per wrapper.
	WrapperArgs [][]Word
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
	// PipedIn is true when the command's standard input is the output of the command
	// before it in a pipeline (`curl x | sh`), or of one before the group it is in.
	PipedIn bool
	// PipedFrom is 1 + the index in Script.Commands of the simple command whose output
	// is this command's input (`echo x | sh`: sh's PipedFrom is 1), or 0 when there is
	// none or the input comes from a compound command.
	PipedFrom int
	// NestedError is set when the command runs a literal script through a shell
	// (sh -c, eval) that Parse did not follow because it does not parse or is over the
	// limits: what it runs was not seen. It wraps ErrTooDeep or ErrTooLarge when so.
	NestedError error
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
	// Body is a here-document's body (Literal when it has no expansion, as after a
	// quoted delimiter: <<'EOF').
	Body Word
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
