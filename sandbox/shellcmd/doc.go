// Package shellcmd parses a shell command line (bash dialect) into the simple
// commands it would run, seeing through wrappers (sudo, env, timeout, xargs, …),
// following `sh -c`/`bash -c`/`eval` one level, and walking every compound
// command and command substitution.
//
// It is the shared parser under sandbox.AnalyzeCommand (write targets, network
// clients) and permission's dangerous-command preflight. It never runs anything
// and never expands variables: a word that needs expansion is reported with
// Literal=false so that callers can refuse it.
//
// Work is bounded for hostile input: a command longer than MaxSourceBytes or nested
// deeper than MaxNesting is refused (ErrTooLarge, ErrTooDeep) after one linear scan,
// before anything is parsed. Parse also reports what a command hides from a reader of
// its words: where bash evaluates text as arithmetic or as a variable name
// (Script.Evaluations), what feeds a pipe (Command.PipedIn, PipedFrom), here-document
// bodies (Redirect.Body) and a shell's literal script that could not be followed
// (Command.NestedError).
//
// The API is a shared contract (see /work/notes/shellcmd-api.md); extend it,
// don't break it.
package shellcmd
