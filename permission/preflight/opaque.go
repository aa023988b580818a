package preflight

import (
	"errors"
	"path"
	"strings"

	"github.com/airlock-app/airlock/sandbox/lazyre"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// Opaque execution: code the classifier cannot read is P2 (CategoryOpaque), with the
// reason starting "Airlock cannot see what this runs". That is code piped, here-stringed
// or here-doc'd into a shell or an interpreter, a variable bash evaluates as arithmetic
// or as a name (a subscript hides a command substitution: x='a[$(rm -rf ~)]'; echo
// $((x))), aliases, the programs that run a command under a terminal or later (script,
// expect, tmux, screen, at, batch, unbuffer) and interpreter one-liners that
// delete, write or run things outside the workspace. What can be read of them (a literal
// here-string, the alias's text, script -c's command, the hidden substitution) is
// analysed as a nested command as well, so `script -qc 'rm -rf ~'` is bash_destructive.

const cannotSee = "Airlock cannot see what this runs: "

// opaqueState is what the opaque checks follow from command to command of a line.
type opaqueState struct {
	// hidden are literal values of the line that contain a command substitution
	// (x='a[$(rm -rf ~)]'): harmless as text, code once bash evaluates them.
	hidden []string
	// analysed counts the hidden values already analysed as nested commands.
	analysed int
	// aliases are the aliases defined so far, by name, with their text when it is
	// literal.
	aliases map[string]aliasDef
	// rel is where relative `cd`s moved from the starting directory when no absolute
	// cd was seen (a.cwd then stays unknown); relSet says it applies.
	rel    string
	relSet bool
}

type aliasDef struct {
	text    string
	literal bool
}

// unparsed is the finding for a command line that shellcmd refused.
func unparsed(err error) Finding {
	switch {
	case errors.Is(err, shellcmd.ErrTooDeep):
		return Finding{Category: CategoryEvasion, Reason: "the command is nested too deeply to be checked, which only hiding a command needs (" + err.Error() + ")"}
	case errors.Is(err, shellcmd.ErrTooLarge):
		return Finding{Category: CategoryOpaque, Reason: cannotSee + "the command is too long to be checked (" + err.Error() + ")"}
	}
	return Finding{Category: CategoryOpaque, Reason: "the command cannot be parsed, so it cannot be checked (" + err.Error() + ")"}
}

// mayParse charges one nested parse of script to the analysis's bounds, and reports
// (as evasion) when they are spent.
func (a *analyzer) mayParse(script, via string) bool {
	a.parses++
	a.budget -= len(script)
	if a.parses > maxParses || a.budget < 0 {
		a.add(CategoryEvasion, "the command runs more nested commands than can be checked, which only hiding a command needs", via)
		a.safe = false
		return false
	}
	return true
}

// parseFailed records a nested script that could not be parsed.
func (a *analyzer) parseFailed(err error, via string) {
	a.safe = false
	f := unparsed(err)
	if f.Category == CategoryOpaque && !errors.Is(err, shellcmd.ErrTooLarge) {
		f.Reason = cannotSee + "a nested command cannot be parsed, so it cannot be checked"
	}
	a.add(f.Category, f.Reason, via)
}

// hasSubst reports whether text holds a command or process substitution.
func hasSubst(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "`") || strings.Contains(s, "<(") || strings.Contains(s, ">(")
}

// opaqueScript checks the places where bash evaluates text as arithmetic or as a
// variable name.
func (a *analyzer) opaqueScript(s *shellcmd.Script, depth int) {
	for i, c := range s.Commands {
		if p := c.Program(); c.PipedIn && (codeReader(p) || p == "at" || p == "batch") {
			a.pipedCode(s.Commands[:i], c, depth)
		}
		for _, as := range c.Assigns {
			if as.Value.Literal && hasSubst(as.Value.Value) {
				a.hidden = append(a.hidden, as.Value.Value)
			}
		}
		for _, w := range c.Args {
			if w.Literal && hasSubst(w.Value) {
				a.hidden = append(a.hidden, w.Value)
			}
		}
	}
	for _, e := range s.Evaluations {
		if e.Text.Literal && hasSubst(e.Text.Value) {
			// [[ -v 'a[$(rm -rf ~)]' ]]: the subscript runs.
			a.add(CategoryOpaque, cannotSee+"bash evaluates the subscript in "+e.Text.Raw+", which runs the command inside it", e.Text.Raw)
			a.hiddenCode(e.Text.Value, e.Text.Raw, depth)
			continue
		}
		if len(e.Vars) > 0 || !e.Text.Literal && hasSubst(e.Text.Raw) {
			// $(( $(cat f) )) evaluates what cat prints, subscripts and all.
			a.evaluatesVars(e.Text.Raw, depth)
		}
	}
}

// evaluatesVars handles an evaluation of variables at src: their values are code to bash.
// When the line holds a literal with a command substitution in it, that may be what a
// variable holds; otherwise the values are at least not known to be harmless.
func (a *analyzer) evaluatesVars(src string, depth int) {
	a.safe = false
	if len(a.hidden) == 0 {
		return
	}
	a.add(CategoryOpaque, cannotSee+"bash evaluates a variable's value as code here, and the line sets one that hides a command substitution", src)
	for ; a.analysed < len(a.hidden); a.analysed++ {
		a.hiddenCode(a.hidden[a.analysed], src, depth)
	}
}

// hiddenCode classifies the commands of the substitutions hidden in text that bash
// evaluates (a[$(rm -rf ~)]), as nested commands.
func (a *analyzer) hiddenCode(text, via string, depth int) {
	if depth+1 > maxDepth {
		a.add(CategoryEvasion, "commands nested this deep cannot be checked, which only hiding a command needs", via)
		return
	}
	if !a.mayParse(text, via) {
		return
	}
	s, err := shellcmd.ParseText(text)
	if err != nil {
		a.parseFailed(err, via)
		return
	}
	a.script(text, s, depth+1, false)
}

// opaque checks one simple command.
func (a *analyzer) opaque(c shellcmd.Command, depth int) {
	if c.NestedError != nil {
		a.parseFailed(c.NestedError, c.Source)
	}
	for _, r := range c.Redirects {
		if r.Write {
			a.relativeTarget(text(r.Target), "writes", c.Source)
		}
	}
	if len(c.Args) == 0 || !c.Args[0].Literal {
		return
	}
	cl := newCall(c)
	name := c.Args[0].Value
	if def, ok := a.aliases[name]; ok && name != "" {
		a.safe = false
		a.add(CategoryOpaque, cannotSee+"it runs the alias "+name, c.Source)
		if def.literal {
			rest := make([]string, 0, len(c.Args))
			for _, w := range c.Args[1:] {
				rest = append(rest, w.Raw)
			}
			a.nested(strings.TrimSpace(def.text+" "+strings.Join(rest, " ")), c.Source, depth)
		}
	}
	for _, w := range c.Wrappers {
		if w == "unbuffer" {
			a.add(CategoryOpaque, cannotSee+"unbuffer runs the command under a terminal of its own", c.Source)
		}
	}
	switch p := cl.prog; {
	case p == "cd" || p == "pushd":
		a.trackCd(cl)
	case p == "alias":
		a.defineAliases(c)
	case p == "source" || p == ".":
		if len(c.Args) > 1 && (!c.Args[1].Literal || c.Args[1].Value == "/dev/stdin" || c.Args[1].Value == "-") {
			a.add(CategoryOpaque, cannotSee+p+" reads a script only known at run time", c.Source)
		}
	case p == "tar" || p == "zip" || p == "7z" || p == "7za" || p == "bsdtar":
		a.archiveRemoves(cl)
	case p == "test" || p == "[" || p == "printf" || p == "read" || p == "unset" || p == "mapfile" ||
		p == "readarray" || p == "getopts" || p == "wait" || p == "declare" || p == "typeset" ||
		p == "local" || p == "export" || p == "readonly" || p == "nameref":
		a.nameOperands(c, cl, depth)
	}
	for _, t := range writtenOperands(cl) {
		a.relativeTarget(t, cl.prog+" writes", c.Source)
	}
	if fileWriters[cl.prog] && (a.cwd != "" || a.relSet) {
		for _, v := range cl.args {
			a.relativeTarget(strings.TrimPrefix(v, "of="), cl.prog+" changes", c.Source)
		}
	}
	a.runners(c, cl, depth)
	a.commandRunner(c, cl, depth)
	if codeReader(cl.prog) {
		a.stdinCode(c, cl, depth)
		a.oneLiner(cl)
	}
}

// trackCd follows relative `cd`s while the directory is otherwise unknown, so that
// `cd .claude && echo '{}' > settings.json` is seen to write .claude/settings.json.
func (a *analyzer) trackCd(cl call) {
	if a.cwdLost {
		return
	}
	pos := positionals(cl.args, nil)
	switch {
	case len(pos) == 0 || pos[0] == "-" || strings.HasPrefix(pos[0], "/") || strings.HasPrefix(pos[0], "~") || strings.HasPrefix(pos[0], "$"):
		a.rel, a.relSet = "", false
	case a.cwd == "":
		a.rel, a.relSet = path.Join(a.rel, pos[0]), true
		if len(a.rel) > maxCwdLen {
			a.cwd, a.rel, a.relSet, a.cwdLost = "", "", false, true
			a.tooComplex("it changes directory deeper than can be followed", cl.src)
		}
	}
}

// relativeTarget checks a relative write target against where the line cd'd to.
func (a *analyzer) relativeTarget(t, what, src string) {
	if t == "" || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") || strings.HasPrefix(t, "$") || strings.HasPrefix(t, "-") {
		return
	}
	var full string
	switch {
	case a.cwd != "":
		full = a.cwd + "/" + t
	case a.relSet:
		full = path.Join(a.rel, t)
	default:
		return
	}
	if w, ok := a.airlockPath(full); ok {
		a.add(CategorySelfApproval, what+" "+w, src)
	}
	if f, ok := criticalFile(full); ok {
		a.add(CategorySystem, what+" the system file "+f, src)
	}
}

// defineAliases records `alias NAME=TEXT`.
func (a *analyzer) defineAliases(c shellcmd.Command) {
	for _, w := range c.Args[1:] {
		name, val, ok := strings.Cut(text(w), "=")
		if !ok || name == "" || strings.HasPrefix(name, "-") {
			continue
		}
		if a.aliases == nil {
			a.aliases = map[string]aliasDef{}
		}
		if w.Literal {
			a.aliases[name] = aliasDef{text: val, literal: true}
		} else {
			a.aliases[name] = aliasDef{}
		}
	}
}

// nameOperands checks the operands bash takes as variable names (test -v, printf -v,
// read, unset, declare -n, …): a subscript in one is arithmetic, and runs what it hides.
func (a *analyzer) nameOperands(c shellcmd.Command, cl call, depth int) {
	var names []shellcmd.Word
	switch cl.prog {
	case "test", "[", "printf":
		for i := 1; i+1 < len(c.Args); i++ {
			if c.Args[i].Literal && c.Args[i].Value == "-v" {
				names = append(names, c.Args[i+1])
				if cl.prog == "printf" {
					break
				}
			}
		}
	case "declare", "typeset", "local", "nameref", "export", "readonly":
		ref := cl.prog == "nameref" || cl.shortFlag("n")
		for _, w := range c.Args[1:] {
			if !w.Literal || !strings.HasPrefix(w.Value, "-") {
				names = append(names, w)
			}
		}
		for _, as := range c.Assigns {
			if ref {
				names = append(names, as.Value) // declare -n r=NAME: NAME is evaluated at every $r
			}
		}
	default:
		for _, w := range c.Args[1:] {
			if !w.Literal || !strings.HasPrefix(w.Value, "-") {
				names = append(names, w)
			}
		}
	}
	for _, w := range names {
		switch {
		case w.Literal && hasSubst(w.Value):
			a.add(CategoryOpaque, cannotSee+cl.prog+" takes "+w.Raw+" as a variable name, and bash evaluates the subscript in it", c.Source)
			a.hiddenCode(w.Value, c.Source, depth)
		case !w.Literal:
			a.evaluatesVars(c.Source, depth)
		}
	}
}

// archiveRemoves flags archivers told to delete what they archive, when that is the
// home directory or the system (tar --remove-files ~, zip -rm x.zip ~).
func (a *analyzer) archiveRemoves(cl call) {
	removes := false
	valued := map[byte]bool{}
	switch cl.prog {
	case "tar", "bsdtar":
		removes = cl.has("--remove-files")
		valued = map[byte]bool{'f': true, 'C': true, 'T': true, 'X': true, 'b': true, 'H': true, 'I': true, 'g': true, 'V': true, 'N': true, 'K': true, 'L': true}
	case "zip":
		removes = cl.has("--move") || cl.shortFlag("m")
		valued = map[byte]bool{'b': true, 'n': true, 't': true, 'x': true, 'i': true, 'P': true, 'Z': true}
	default: // 7z a -sdel
		removes = cl.has("-sdel")
	}
	if !removes {
		return
	}
	long := set("--file", "--directory", "--files-from", "--exclude-from", "--format", "--use-compress-program", "--listed-incremental", "--label", "--newer", "--exclude", "--transform", "--owner", "--group", "--mode")
	var pos []string
	for i := 0; i < len(cl.args); i++ {
		v := cl.args[i]
		cluster := ""
		switch {
		case v == "--":
			pos = append(pos, cl.args[i+1:]...)
			i = len(cl.args)
			continue
		case strings.HasPrefix(v, "--"):
			if long[v] {
				i++
			}
			continue
		case len(v) > 1 && v[0] == '-':
			cluster = v[1:]
		case i == 0 && cl.prog == "tar" && isLetters(v):
			cluster = v // old-style: tar cf x.tar FILES
		default:
			pos = append(pos, v)
			continue
		}
		for j := 0; j < len(cluster); j++ {
			if valued[cluster[j]] {
				if j == len(cluster)-1 {
					i++ // the value is the next word
				}
				break
			}
		}
	}
	for _, t := range pos {
		if what, ok := a.dangerousTarget(t); ok {
			a.add(CategoryDestructivePath, cl.prog+" deletes "+what+" after archiving it", cl.src)
			return
		}
	}
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
			return false
		}
	}
	return s != ""
}

// runners are programs that run a command under a terminal of their own, in a server
// that outlives the call, or later. (watch is seen through: its command is analysed
// like any other, and it runs nothing else.)
func (a *analyzer) runners(c shellcmd.Command, cl call, depth int) {
	var cmd []string
	literal := true
	switch cl.prog {
	case "script":
		valued := "EIOBTm"
		for i := 0; i < len(c.Args)-1 && cmd == nil; i++ {
			w := c.Args[i+1]
			v := text(w)
			switch {
			case v == "--command" || v == "-c":
				if i+2 < len(c.Args) {
					cmd, literal = []string{text(c.Args[i+2])}, c.Args[i+2].Literal
				}
			case strings.HasPrefix(v, "--command="):
				cmd, literal = []string{strings.TrimPrefix(v, "--command=")}, w.Literal
			case len(v) > 1 && v[0] == '-' && v[1] != '-':
				for j := 1; j < len(v); j++ {
					if v[j] == 'c' {
						if j < len(v)-1 {
							cmd, literal = []string{v[j+1:]}, w.Literal
						} else if i+2 < len(c.Args) {
							cmd, literal = []string{text(c.Args[i+2])}, c.Args[i+2].Literal
						}
						break
					}
					if strings.IndexByte(valued, v[j]) >= 0 {
						if j == len(v)-1 {
							i++
						}
						break
					}
				}
			}
		}
		if cmd == nil {
			a.add(CategoryOpaque, cannotSee+"script starts a shell under a terminal of its own", c.Source)
			return
		}
		a.add(CategoryOpaque, cannotSee+"script runs the command under a terminal of its own", c.Source)
	case "expect":
		a.add(CategoryOpaque, cannotSee+"expect runs a script that drives other programs as if typed", c.Source)
		return
	case "tmux", "screen", "byobu", "zellij", "dtach", "abduco":
		if cl.prog == "tmux" && !tmuxRuns(cl.args) || cl.prog == "screen" && (cl.has("-ls", "-list", "-r", "-R", "-x", "-wipe", "-v", "--version") && !cl.has("-X")) {
			return
		}
		a.add(CategoryOpaque, cannotSee+cl.prog+" runs commands in a terminal server that outlives this call", c.Source)
		switch cl.prog {
		case "tmux":
			cmd = tmuxCommand(afterOptions(cl.args, set("-S", "-L", "-f", "-c", "-T")))
		case "screen":
			cmd = screenCommand(cl.args)
		}
	case "at", "batch":
		if cl.has("-l", "-d", "-r", "-c", "-V", "--help") || cl.shortFlag("ldrc") {
			return
		}
		a.add(CategoryOpaque, cannotSee+cl.prog+" schedules commands to run later, outside this call", c.Source)
		for _, r := range c.Redirects {
			if body, ok := stdinText(r); ok {
				cmd, literal = []string{body}, true
			}
		}
	default:
		return
	}
	a.safe = false
	if len(cmd) > 0 && literal {
		a.nested(strings.Join(cmd, " "), c.Source, depth)
	}
}

// tmuxRuns reports whether a tmux invocation runs or types a command.
func tmuxRuns(args []string) bool {
	for _, v := range args {
		switch v {
		case "new-session", "new", "new-window", "neww", "split-window", "splitw", "send-keys", "send",
			"run-shell", "run", "respawn-pane", "respawnp", "respawn-window", "respawnw", "pipe-pane", "pipep",
			"if-shell", "if", "source-file", "source", "display-popup", "popup", "command-prompt", "set-hook",
			"bind-key", "bind", "set-option", "set":
			return true
		}
	}
	return false
}

// tmuxCommand returns the shell command words of a tmux command (after its own flags).
func tmuxCommand(args []string) []string {
	for i, v := range args {
		if tmuxRuns([]string{v}) {
			rest := afterOptions(args[i+1:], set("-t", "-s", "-n", "-c", "-e", "-x", "-y", "-F", "-l", "-p", "-w", "-T", "-N"))
			if v == "send-keys" || v == "send" {
				var keys []string
				for _, k := range rest {
					if k != "Enter" && k != "C-m" && k != "KPEnter" {
						keys = append(keys, k)
					}
				}
				return keys
			}
			return rest
		}
	}
	return nil
}

// screenCommand returns the command screen starts (screen -dmS NAME CMD…) or is told to
// type (-X stuff TEXT).
func screenCommand(args []string) []string {
	for i := 0; i < len(args); i++ {
		v := args[i]
		switch {
		case v == "-X":
			if i+2 < len(args) && args[i+1] == "stuff" {
				return []string{strings.TrimSuffix(strings.TrimSuffix(args[i+2], `\n`), `\r`)}
			}
			return nil
		case len(v) > 1 && v[0] == '-':
			if strings.ContainsAny(v[len(v)-1:], "ScehptT") || v == "-Logfile" {
				i++
			}
		default:
			return args[i:]
		}
	}
	return nil
}

// codeReader reports whether a program runs code (a shell or an interpreter).
func codeReader(p string) bool {
	return shellcmd.IsShell(p) || interpreters[p] || extraInterpreters[p] ||
		strings.HasPrefix(p, "python3.") || strings.HasPrefix(p, "python2.") || strings.HasPrefix(p, "pypy")
}

var extraInterpreters = set("irb", "luajit", "lua5.1", "lua5.3", "lua5.4", "wish", "Rscript", "R", "julia",
	"powershell", "osascript", "php-cli", "php8", "groovy", "jshell", "scala", "guile", "racket", "sbcl",
	"ghci", "runghc", "elixir", "erl", "swift", "dart", "qjs", "rhino", "jjs", "gawk", "awk", "mawk", "nawk")

// codeFlags are the flags whose value is the program (so stdin is data, not code).
func codeFlags(p string) (code string, valued map[string]bool) {
	switch {
	case shellProgram(p):
		return "c", set("-o", "+o", "-O", "+O", "--rcfile", "--init-file")
	case strings.HasPrefix(p, "python") || strings.HasPrefix(p, "pypy"):
		return "cm", set("-W", "-X", "--check-hash-based-pycs")
	case p == "perl":
		return "eE", set("-I", "-M", "-m")
	case p == "ruby" || p == "irb":
		return "e", set("-I", "-r", "-C", "-E")
	case p == "node" || p == "nodejs" || p == "bun" || p == "deno" || p == "qjs":
		return "ep", set("-r", "--require", "--import", "--loader", "--input-type", "--eval", "--print")
	case p == "php" || p == "php-cli" || p == "php8":
		return "rfFRB", set("-c", "-d", "-z")
	case p == "awk" || p == "gawk" || p == "mawk" || p == "nawk":
		return "f", set("-v", "-F")
	case p == "pwsh" || p == "powershell":
		return "cCeEf", set("-ExecutionPolicy", "-WorkingDirectory", "-ConfigurationName")
	}
	return "ec", nil
}

// readsStdinCode reports whether a shell or an interpreter takes its program from
// standard input: no code flag, no script file, or "-", /dev/stdin, sh -s.
func readsStdinCode(c shellcmd.Command, cl call) bool {
	code, valued := codeFlags(cl.prog)
	if cl.prog == "awk" || cl.prog == "gawk" || cl.prog == "mawk" || cl.prog == "nawk" {
		return false // the program is the first operand
	}
	for i := 1; i < len(c.Args); i++ {
		w := c.Args[i]
		v := text(w)
		switch {
		case v == "-" || v == "/dev/stdin" || v == "/dev/fd/0" || v == "/proc/self/fd/0":
			return true
		case v == "--":
			return i+1 >= len(c.Args)
		case valued[v]:
			i++
		case strings.HasPrefix(v, "--"):
			if cl.prog == "node" && (v == "--eval" || v == "--print") || strings.HasPrefix(v, "--eval=") || v == "--command" {
				return false
			}
		case len(v) > 1 && (v[0] == '-' || v[0] == '+' && shellProgram(cl.prog)):
			if v[0] == '-' && strings.ContainsAny(v[1:], code) {
				return false
			}
			if shellProgram(cl.prog) && v[0] == '-' && strings.ContainsAny(v[1:], "s") {
				return true
			}
			if shellProgram(cl.prog) && v[0] == '-' && strings.ContainsAny(v[1:], "n") {
				return false // sh -n only reads the script to check its syntax
			}
		default:
			return false // a script file
		}
	}
	return true
}

// stdinText returns the text a here-string or a here-document feeds a command.
func stdinText(r shellcmd.Redirect) (string, bool) {
	switch r.Op {
	case "<<<":
		if r.Target.Literal {
			return r.Target.Value, true
		}
	case "<<", "<<-":
		if r.Body.Literal {
			return r.Body.Value, true
		}
	}
	return "", false
}

// stdinCode flags code piped into a shell or an interpreter, or fed to it by a
// here-string or here-document that is only known at run time, and analyses the literal
// ones like an inline script.
func (a *analyzer) stdinCode(c shellcmd.Command, cl call, depth int) {
	if !readsStdinCode(c, cl) {
		if script := firstOperand(c, cl); script != nil && !script.Literal && hasSubst(script.Raw) {
			a.add(CategoryOpaque, cannotSee+cl.prog+" runs a script that another command produces", c.Source)
		}
		return
	}
	if c.PipedIn {
		return // opaqueScript judged it, knowing what feeds the pipe
	}
	for _, r := range c.Redirects {
		switch r.Op {
		case "<<<", "<<", "<<-":
			body, ok := stdinText(r)
			if !ok {
				a.add(CategoryOpaque, cannotSee+cl.prog+" runs code fed to it that is only known at run time", c.Source)
				continue
			}
			a.safe = false
			if shellProgram(cl.prog) {
				a.nested(body, c.Source, depth)
			} else {
				a.inline(call{prog: cl.prog, args: []string{"-c", body}, src: c.Source, cmd: c})
				a.oneLinerCode(cl.prog, body, c.Source)
			}
		case "<":
			if !r.Target.Literal {
				a.add(CategoryOpaque, cannotSee+cl.prog+" runs a script that another command produces", c.Source)
			}
		}
	}
}

// pipedCode judges a shell or an interpreter at the end of a pipe. Only the literal text
// of a plain echo (or printf without a format) right before it can be read, as a
// here-string would be; anything else that feeds it is code Airlock cannot see.
func (a *analyzer) pipedCode(before []shellcmd.Command, c shellcmd.Command, depth int) {
	cl := newCall(c)
	scheduler := cl.prog == "at" || cl.prog == "batch"
	if scheduler && cl.has("-f") || !scheduler && !readsStdinCode(c, cl) {
		return
	}
	a.safe = false
	if i := c.PipedFrom - 1; i >= 0 && i < len(before) {
		if text, ok := echoed(before[i]); ok {
			if shellProgram(cl.prog) || scheduler {
				a.nested(text, c.Source, depth)
			} else {
				a.oneLinerCode(cl.prog, text, c.Source)
				a.inline(call{prog: cl.prog, args: []string{"-c", text}, src: c.Source, cmd: c})
			}
			return
		}
	}
	if depth == 0 && shellProgram(cl.prog) {
		for _, b := range before {
			if p := b.Program(); p == "curl" || p == "wget" {
				return // crossSegment names it: a script downloaded from the network
			}
		}
	}
	a.add(CategoryOpaque, cannotSee+cl.prog+" runs the code piped into it", c.Source)
}

// echoed returns what a plain echo or printf prints, when it is literal.
func echoed(c shellcmd.Command) (string, bool) {
	if len(c.Redirects) > 0 || len(c.Wrappers) > 0 {
		return "", false
	}
	vals, ok := c.Values(1)
	if !ok {
		return "", false
	}
	switch c.Program() {
	case "echo":
		for len(vals) > 0 && (vals[0] == "-n" || vals[0] == "-E") {
			vals = vals[1:]
		}
		if len(vals) > 0 && strings.HasPrefix(vals[0], "-") {
			return "", false // -e and friends change the text
		}
		return strings.Join(vals, " "), true
	case "printf":
		if len(vals) == 1 && !strings.ContainsAny(vals[0], "%\\") {
			return vals[0], true
		}
	}
	return "", false
}

// firstOperand returns the script-file operand of a shell or interpreter, if any.
func firstOperand(c shellcmd.Command, cl call) *shellcmd.Word {
	_, valued := codeFlags(cl.prog)
	for i := 1; i < len(c.Args); i++ {
		v := text(c.Args[i])
		if valued[v] {
			i++
			continue
		}
		if !strings.HasPrefix(v, "-") || !c.Args[i].Literal {
			return &c.Args[i]
		}
	}
	return nil
}

var (
	// oneLinerHome matches code that names the home directory.
	oneLinerHome = lazyre.New(`~|\$HOME|\bHOME\b|homedir|expanduser|Path\.home|Dir\.home|USERPROFILE|getpwuid`)
	// oneLinerAbsolute captures the absolute paths written as string literals.
	oneLinerAbsolute = lazyre.New(`['"\x60(]\s*(/[^'"\x60\s)]*)`)
	// oneLinerDeletes matches the common ways to delete files.
	oneLinerDeletes = lazyre.New(`rmtree|\bremove\s*\(|\bunlink|rmdir|removedirs|\brmSync|\brm\s*\(|fs\.rm|promises\.rm|rimraf|File\.delete|FileUtils\.rm|\.delete\s*\(|Deno\.remove|\bshred|truncate|rm_r|remove_tree`)
	// oneLinerWrites matches the common ways to write files.
	oneLinerWrites = lazyre.New(`open\s*\([^)]*['"][^'"]*[wax+][^'"]*['"]|write_text|write_bytes|writeFile|appendFile|createWriteStream|File\.write|IO\.write|File\.open\s*\([^)]*['"][wa]|>>?\s*['"$]|copyfile|shutil\.(copy|move)|\brename|chmod|chown|symlink|os\.link|mkdir|file_put_contents|fopen\s*\([^)]*['"][wax]`)
	// oneLinerExec matches the common ways to run a command or evaluate code built at
	// run time (what is left once the literal commands inlineShell follows are removed).
	oneLinerExec = lazyre.New(`os\.system|subprocess\.\w|popen|os\.exec|os\.spawn|\bspawn|execSync|execFile|child_process\.\w|\bsystem\s*\(|\bsystem\s+[$@]|\bexec\s*\(|\bexec\s+[$@]|\beval\s*[({]|\beval\s+\$|\bcompile\s*\(|\bFunction\s*\(|%x[{(\[]|IO\.popen|Open3|shell_exec|passthru|proc_open|pcntl_exec|Runtime\.|ProcessBuilder|\bvm\.run`)
)

// outsidePath reports whether code names the home directory or an absolute path other
// than the temporary directories and the standard streams.
func outsidePath(code string) bool {
	if oneLinerHome().MatchString(code) {
		return true
	}
	for _, m := range oneLinerAbsolute().FindAllStringSubmatch(code, 32) {
		p := path.Clean(m[1])
		if p == "/dev/null" || strings.HasPrefix(p, "/dev/std") || strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/") ||
			p == "/tmp" || strings.HasPrefix(p, "/tmp/") || strings.HasPrefix(p, "/var/tmp/") {
			continue
		}
		return true
	}
	return false
}

// oneLiner checks an interpreter's one-liner (python -c, perl -e, node -e, …).
func (a *analyzer) oneLiner(cl call) {
	if shellProgram(cl.prog) {
		return
	}
	code, ok := inlineCode(cl)
	if !ok && cl.prog == "deno" && len(cl.args) > 1 && cl.args[0] == "eval" {
		code, ok = cl.args[len(cl.args)-1], true
	}
	if !ok {
		for i, v := range cl.args { // clusters: perl -ne CODE, -le, -pie
			if len(v) > 2 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[len(v)-1:], "eE") && i+1 < len(cl.args) {
				code, ok = cl.args[i+1], true
				break
			}
		}
	}
	if !ok {
		return
	}
	a.safe = false
	a.oneLinerCode(cl.prog, code, cl.src)
}

// oneLinerCode judges interpreter code: deleting outside the workspace is destructive;
// writing there, or running commands or code only built at run time, is opaque.
func (a *analyzer) oneLinerCode(prog, code, src string) {
	if forkLoop(code) {
		a.add(CategoryForkBomb, "fork bomb: "+prog+" code forks in a loop, starting copies of itself until the machine stops", src)
	}
	outside := outsidePath(code)
	switch {
	case outside && oneLinerDeletes().MatchString(code):
		a.add(CategoryDestructivePath, prog+" code deletes files in the home directory or outside the workspace", src)
	case outside && oneLinerWrites().MatchString(code):
		a.add(CategoryOpaque, cannotSee+prog+" code writes files in the home directory or outside the workspace", src)
	}
	rest := inlineShell().ReplaceAllString(code, " ")
	backtick := (prog == "perl" || prog == "ruby" || strings.HasPrefix(prog, "php")) && strings.Contains(rest, "`")
	if backtick || oneLinerExec().MatchString(rest) {
		a.add(CategoryOpaque, cannotSee+prog+" code runs commands or evaluates code built at run time", src)
	}
}
