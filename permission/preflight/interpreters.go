package preflight

import (
	"path"
	"strings"

	"github.com/airlock-app/airlock/sandbox/lazyre"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// Programs whose own language runs commands. awk's system() and pipes, sed's e command,
// a git alias starting with "!", a debugger's shell command, an editor's :! in ex mode,
// a makefile read from standard input: the command they run is text inside another
// program's script, which no check of the command line reads as a command. Each is P2
// (CategoryOpaque, "Airlock cannot see what this runs"); the literal commands that can
// be read out of the script are classified as nested commands as well, so that
// `awk 'BEGIN{system("rm -rf ~")}'` is also bash_destructive.

var (
	// awkCommand captures the literal commands of system("…"), print | "…" and
	// "…" | getline.
	awkCommand = lazyre.New(`(?:system\s*\(\s*|\|&?\s*)("(?:[^"\\]|\\.)*")|("(?:[^"\\]|\\.)*")\s*\|&?\s*getline`)
	// awkRunsCode matches the rest of what runs or writes: system with a computed
	// command, pipes, print and printf redirections, indirect calls and @load/@include.
	awkRunsCode = lazyre.New(`\bsystem\s*\(|\|\s*getline|\|&|\bprintf?\b[^;{}]*[|>]|@[A-Za-z_]`)
)

// runner judges one invocation: why it may run a command Airlock cannot see ("" when it
// does not), and the shell commands that can be read out of it.
type runner func(c shellcmd.Command, cl call) (why string, seen []string)

// commandRunners is the table; TestCommandRunnersTable attacks every row.
var commandRunners = map[string]runner{
	"awk": awkRuns, "gawk": awkRuns, "mawk": awkRuns, "nawk": awkRuns, "busybox-awk": awkRuns,
	"sed": sedRuns, "gsed": sedRuns,
	"git": gitRuns,
	"gdb": debuggerRuns, "gdb-multiarch": debuggerRuns, "cgdb": debuggerRuns, "lldb": debuggerRuns, "pdb": debuggerRuns,
	"vim": vimRuns, "vi": vimRuns, "nvim": vimRuns, "view": vimRuns, "vimdiff": vimRuns, "gvim": vimRuns, "rvim": vimRuns,
	"ex": exRuns, "ed": exRuns, "red": exRuns, "vim.tiny": vimRuns, "vim.basic": vimRuns, "nex": exRuns,
	"emacs": emacsRuns, "emacs-nox": emacsRuns, "emacsclient": emacsRuns,
	"make": makeRuns, "gmake": makeRuns, "bmake": makeRuns,
	"strace": traceRuns, "ltrace": traceRuns,
}

// commandEnv are variables that make the programs of the line run a command they name
// (or load code from a file it names).
var commandEnv = set("GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF",
	"GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG",
	"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "PAGER", "MANPAGER", "EDITOR",
	"VISUAL", "LESSOPEN", "LESSCLOSE", "BASH_ENV", "ENV", "PROMPT_COMMAND", "LD_PRELOAD", "LD_AUDIT", "PERL5OPT",
	"NODE_OPTIONS", "RUBYOPT", "PYTHONSTARTUP", "PYTHONINSPECT", "SHELLOPTS", "PS4", "GDBINIT", "VIMINIT", "EXINIT")

// commandRunner classifies c against the table and the variables it is given.
func (a *analyzer) commandRunner(c shellcmd.Command, cl call, depth int) {
	for _, as := range c.Assigns {
		if commandEnv[as.Name] || strings.HasPrefix(as.Name, "GIT_CONFIG_KEY_") || strings.HasPrefix(as.Name, "GIT_CONFIG_VALUE_") {
			a.safe = false
			a.add(CategoryOpaque, cannotSee+as.Name+" names a program or code that runs in it", c.Source)
			if as.Value.Literal && (strings.HasSuffix(as.Name, "_COMMAND") || strings.HasSuffix(as.Name, "EDITOR") || strings.HasSuffix(as.Name, "PAGER") || as.Name == "PROMPT_COMMAND") {
				a.nested(as.Value.Value, c.Source, depth)
			}
		}
	}
	judge, ok := commandRunners[cl.prog]
	if !ok {
		return
	}
	why, seen := judge(c, cl)
	if why == "" {
		return
	}
	a.safe = false
	a.add(CategoryOpaque, cannotSee+why, c.Source)
	for _, s := range seen {
		if strings.TrimSpace(s) != "" {
			a.nested(s, c.Source, depth)
		}
	}
}

// onlyInfo reports whether the arguments only ask for a version or help.
func onlyInfo(args []string) bool {
	if len(args) == 0 {
		return false
	}
	for _, v := range args {
		switch v {
		case "--version", "-v", "-V", "--help", "-h", "-?":
		default:
			return false
		}
	}
	return true
}

// stdinTexts returns what here-strings and here-documents feed c, and whether any of
// its input is only known at run time (a pipe, a file, an expansion).
func stdinTexts(c shellcmd.Command) (texts []string, unseen bool) {
	unseen = c.PipedIn
	for _, r := range c.Redirects {
		switch r.Op {
		case "<<<", "<<", "<<-":
			if t, ok := stdinText(r); ok {
				texts = append(texts, t)
			} else {
				unseen = true
			}
		case "<", "<>":
			if r.FD == "" || r.FD == "0" {
				unseen = true
			}
		}
	}
	return texts, unseen
}

// awkRuns: system(), "cmd" | getline, print | "cmd", print > FILE, and programs read
// from files (-f, @include, @load) or given at run time.
func awkRuns(c shellcmd.Command, cl call) (string, []string) {
	var progs []string
	fromFile := false
	for i := 1; i < len(c.Args); i++ {
		w := c.Args[i]
		v := text(w)
		switch {
		case v == "--":
			if i+1 < len(c.Args) && len(progs) == 0 {
				progs = append(progs, text(c.Args[i+1]))
				if !c.Args[i+1].Literal {
					return cl.prog + " runs a program only known at run time", nil
				}
			}
			i = len(c.Args)
		case v == "-f" || v == "--file" || strings.HasPrefix(v, "--file=") || len(v) > 2 && strings.HasPrefix(v, "-f") ||
			v == "-i" || v == "--include" || v == "-l" || v == "--load" || v == "-E" || v == "--exec":
			fromFile = true
			if !strings.Contains(v, "=") && len(v) <= 2 || v == "--file" || v == "--include" || v == "--load" || v == "--exec" {
				i++
			}
		case v == "-e" || v == "--source":
			if i+1 < len(c.Args) {
				i++
				progs = append(progs, text(c.Args[i]))
				if !c.Args[i].Literal {
					return cl.prog + " runs a program only known at run time", nil
				}
			}
		case strings.HasPrefix(v, "--source="):
			progs = append(progs, strings.TrimPrefix(v, "--source="))
		case v == "-v" || v == "-F" || v == "--assign" || v == "--field-separator":
			i++
		case strings.HasPrefix(v, "-") && len(v) > 1:
		default:
			if len(progs) == 0 && !fromFile {
				if !w.Literal {
					return cl.prog + " runs a program only known at run time", nil
				}
				progs = append(progs, v)
			}
			i = len(c.Args)
		}
	}
	if fromFile {
		return cl.prog + " runs a program from a file (-f, --include, --load), whose commands cannot be read here", nil
	}
	var seen []string
	runs := false
	for _, p := range progs {
		for _, m := range awkCommand().FindAllStringSubmatch(p, 16) {
			runs = true
			if s := unquoteInline(m[1] + m[2]); s != "" {
				seen = append(seen, s)
			}
		}
		if awkRunsCode().MatchString(p) {
			runs = true
		}
	}
	if runs {
		return cl.prog + " code runs commands or writes files (system, |, >, @load)", seen
	}
	return "", nil
}

// sedRuns: the e command and the s///e flag run shell commands (w and W write files);
// a script from a file, or only known at run time, is not seen. --sandbox turns them
// all off.
func sedRuns(c shellcmd.Command, cl call) (string, []string) {
	if cl.has("--sandbox") {
		return "", nil
	}
	var scripts []string
	explicit := false
	for i := 1; i < len(c.Args); i++ {
		w := c.Args[i]
		v := text(w)
		val := func() (string, bool) {
			if i+1 < len(c.Args) {
				i++
				return text(c.Args[i]), c.Args[i].Literal
			}
			return "", true
		}
		switch {
		case v == "--":
			if !explicit && i+1 < len(c.Args) {
				scripts = append(scripts, text(c.Args[i+1]))
			}
			i = len(c.Args)
		case v == "-f" || v == "--file" || strings.HasPrefix(v, "--file="):
			return cl.prog + " runs a script from a file (-f), whose e commands cannot be read here", nil
		case v == "-e" || v == "--expression":
			explicit = true
			s, lit := val()
			if !lit {
				return cl.prog + " runs a script only known at run time", nil
			}
			scripts = append(scripts, s)
		case strings.HasPrefix(v, "--expression="):
			explicit = true
			scripts = append(scripts, strings.TrimPrefix(v, "--expression="))
		case v == "-l" || v == "--line-length" || v == "--separate":
			if v == "-l" {
				i++
			}
		case len(v) > 1 && v[0] == '-' && v[1] != '-':
			// A cluster: -nf FILE, -ne SCRIPT, -i.bak.
			for j := 1; j < len(v); j++ {
				if v[j] == 'i' || v[j] == 'l' {
					break // -i[SUFFIX], -l N: the rest is a value
				}
				if v[j] == 'f' {
					return cl.prog + " runs a script from a file (-f), whose e commands cannot be read here", nil
				}
				if v[j] == 'e' {
					explicit = true
					s := v[j+1:]
					if s == "" {
						var lit bool
						if s, lit = val(); !lit {
							return cl.prog + " runs a script only known at run time", nil
						}
					}
					scripts = append(scripts, s)
					break
				}
			}
		case strings.HasPrefix(v, "--"):
		default:
			if !explicit {
				if !w.Literal {
					return cl.prog + " runs a script only known at run time", nil
				}
				scripts = append(scripts, v)
				explicit = true
			}
		}
	}
	var seen []string
	runs := false
	for _, s := range scripts {
		cmds, flagE := sedCommands(s)
		if flagE || len(cmds) > 0 {
			runs = true
		}
		seen = append(seen, cmds...)
	}
	if runs {
		return cl.prog + " runs shell commands from its script (the e command or the s///e flag)", seen
	}
	return "", nil
}

// sedCommands scans a sed script for its e commands (returning their commands) and
// s///e flags. It reads addresses, s and y with any delimiter, and the commands that
// take the rest of the line; what it cannot read counts as running a command.
func sedCommands(s string) (cmds []string, flagE bool) {
	i := 0
	skipDelimited := func(d byte) bool { // from after the opening delimiter past the closing one
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return true
			case '\n':
				if d != '\n' {
					return false
				}
			}
			i++
		}
		return false
	}
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		out := s[i : i+j]
		i += j
		return out
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!' || c == ',' || c == '$':
			i++
			continue
		case c >= '0' && c <= '9' || c == '~' || c == '+':
			i++
			continue
		case c == '/':
			i++
			if !skipDelimited('/') {
				return cmds, true
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
			continue
		case c == '\\':
			if i+1 >= len(s) {
				return cmds, true
			}
			d := s[i+1]
			i += 2
			if !skipDelimited(d) {
				return cmds, true
			}
			continue
		case c == '#':
			restOfLine()
			continue
		}
		i++ // the command letter
		switch c {
		case 'e':
			cmds = append(cmds, strings.TrimSpace(restOfLine()))
			flagE = true // e with no command runs the pattern space
		case 's', 'y':
			if i >= len(s) {
				return cmds, true
			}
			d := s[i]
			i++
			for part := 0; part < 2; part++ { // the pattern, then the replacement
				if !skipDelimited(d) {
					return cmds, true
				}
			}
			if c == 's' {
				for i < len(s) && strings.IndexByte("gipIMme0123456789w", s[i]) >= 0 {
					switch s[i] {
					case 'e':
						flagE = true
					case 'w':
						restOfLine()
						continue
					}
					i++
				}
			}
		case 'a', 'i', 'c', 'r', 'R', 'w', 'W', 'b', 't', 'T', ':', 'l', 'q', 'Q', 'L', 'F', 'v', 'z':
			if c == 'b' || c == 't' || c == 'T' || c == ':' {
				for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
					i++
				}
			} else if strings.IndexByte("aicrRwWv", c) >= 0 {
				restOfLine()
			}
		case 'p', 'P', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', '=':
		default:
			return cmds, true // not sed as it is read here
		}
	}
	return cmds, flagE
}

// gitInert are the configuration keys (sections, or whole keys) a `git -c` may set
// without naming a program git runs.
var gitInert = []string{"color.", "user.", "advice.", "column.", "i18n.", "log.", "status.", "format.pretty",
	"init.defaultbranch", "core.quotepath", "core.autocrlf", "core.safecrlf", "core.eol", "core.abbrev",
	"core.ignorecase", "core.filemode", "core.longpaths", "core.precomposeunicode", "pull.rebase", "pull.ff",
	"merge.conflictstyle", "diff.renames", "diff.algorithm", "diff.colormoved", "safe.directory", "gc.auto",
	"fetch.prune", "push.default", "protocol.version", "commit.gpgsign", "tag.gpgsign", "blame.",
	"http.sslverify", "http.version", "grep.", "rerere.enabled", "checkout.", "branch.autosetup", "submodule.recurse"}

// gitRuns: -c and --config-env settings that are not known to be inert (alias.x=!cmd,
// core.sshCommand, core.pager, core.fsmonitor, core.hooksPath, …) and --exec-path.
func gitRuns(c shellcmd.Command, cl call) (string, []string) {
	var seen []string
	why := ""
	for i := 0; i < len(cl.args); i++ {
		v := cl.args[i]
		var kv string
		switch {
		case v == "-c" || v == "--config-env":
			if i+1 >= len(cl.args) {
				continue
			}
			i++
			kv = cl.args[i]
			if i+1 <= len(c.Args)-1 && !c.Args[i+1].Literal {
				return "git -c sets configuration only known at run time", nil
			}
		case strings.HasPrefix(v, "--config-env="):
			kv = strings.TrimPrefix(v, "--config-env=")
		case v == "--exec-path" || strings.HasPrefix(v, "--exec-path="):
			if v != "--exec-path" || i+1 < len(cl.args) && !strings.HasPrefix(cl.args[i+1], "-") {
				return "git runs its commands from another directory (--exec-path)", nil
			}
			continue
		case !strings.HasPrefix(v, "-"):
			// The subcommand: git's own options end here.
			i = len(cl.args)
			continue
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace":
			i++
			continue
		default:
			continue
		}
		key, val, _ := strings.Cut(kv, "=")
		key = strings.ToLower(key)
		if strings.HasPrefix(key, "alias.") {
			if strings.HasPrefix(strings.TrimSpace(val), "!") {
				why = "git -c " + key + " defines an alias that runs a shell command"
				seen = append(seen, strings.TrimPrefix(strings.TrimSpace(val), "!"))
			}
			continue
		}
		inert := false
		for _, k := range gitInert {
			if key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(key, k) {
				inert = true
				break
			}
		}
		if !inert && why == "" {
			why = "git -c " + key + " may name a program git runs"
		}
	}
	return why, seen
}

// debuggerRuns: a debugger runs and controls programs, and its commands (-ex, -x,
// --batch, lldb -o) include shell.
func debuggerRuns(c shellcmd.Command, cl call) (string, []string) {
	if onlyInfo(cl.args) {
		return "", nil
	}
	var seen []string
	for i, v := range cl.args {
		if (v == "-ex" || v == "--ex" || v == "-eval-command" || v == "--eval-command" || v == "-iex" || v == "-o" || v == "--one-line") && i+1 < len(cl.args) {
			cmd := strings.TrimSpace(cl.args[i+1])
			for _, p := range []string{"shell ", "!", "platform shell "} {
				if rest, ok := strings.CutPrefix(cmd, p); ok {
					seen = append(seen, rest)
				}
			}
		}
	}
	return cl.prog + " runs and controls programs, and its commands run shell commands", seen
}

// vimRuns: vim with commands (-c, +CMD, --cmd, -S, -s, -u), or in ex mode (-e, -E,
// -es) where its commands come from standard input.
func vimRuns(c shellcmd.Command, cl call) (string, []string) {
	var seen []string
	runs := false
	for i, v := range cl.args {
		switch {
		case v == "-c" || v == "--cmd" || v == "-S" || v == "-s" || v == "-u" || v == "-U" || v == "-W" || v == "-w":
			if v == "-u" && i+1 < len(cl.args) && (cl.args[i+1] == "NONE" || cl.args[i+1] == "NORC") {
				continue
			}
			runs = true
			if (v == "-c" || v == "--cmd") && i+1 < len(cl.args) {
				seen = append(seen, exBang(cl.args[i+1])...)
			}
		case strings.HasPrefix(v, "+") && len(v) > 1:
			runs = true
			seen = append(seen, exBang(v[1:])...)
		case len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:], "eE"):
			runs = true
		}
	}
	if cl.prog == "rvim" {
		return "", nil // restricted: no shell commands
	}
	if runs {
		texts, _ := stdinTexts(c)
		for _, t := range texts {
			seen = append(seen, exBang(t)...)
		}
		return cl.prog + " runs editor commands (-c, +cmd, ex mode), which run shell commands with :!", seen
	}
	return "", nil
}

// exRuns: ex and ed read their commands from standard input, and ! runs a shell command.
func exRuns(c shellcmd.Command, cl call) (string, []string) {
	if onlyInfo(cl.args) || cl.prog == "red" {
		return "", nil
	}
	var seen []string
	texts, _ := stdinTexts(c)
	for _, t := range texts {
		seen = append(seen, exBang(t)...)
	}
	for i, v := range cl.args {
		if v == "-c" && i+1 < len(cl.args) {
			seen = append(seen, exBang(cl.args[i+1])...)
		}
	}
	return cl.prog + " reads editor commands from its input, and ! runs shell commands", seen
}

// exBang returns the shell commands of the ! lines of an ed/ex/vim command text
// (`!rm -rf ~`, `:!cmd`, `1,$!sort`, `r !cmd`, `w !cmd`).
func exBang(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, part := range strings.Split(line, "|") {
			if j := strings.IndexByte(part, '!'); j >= 0 {
				out = append(out, strings.TrimSpace(part[j+1:]))
			}
		}
		if len(out) > 16 {
			break
		}
	}
	return out
}

// emacsRuns: emacs told to evaluate Lisp (--batch, --eval, -l, -f, --script, -x).
func emacsRuns(c shellcmd.Command, cl call) (string, []string) {
	for _, v := range cl.args {
		switch {
		case v == "--batch" || v == "-batch" || v == "--eval" || v == "-eval" || v == "-l" || v == "--load" ||
			v == "-f" || v == "--funcall" || v == "--script" || v == "-script" || v == "-x" || v == "-e" ||
			strings.HasPrefix(v, "--eval=") || strings.HasPrefix(v, "--load=") || strings.HasPrefix(v, "--funcall="):
			return cl.prog + " evaluates Lisp, which runs shell commands (shell-command, call-process)", nil
		}
	}
	return "", nil
}

// makeRuns: a makefile that is not a literal file (standard input, a descriptor, an
// expansion) or rules given with --eval: its recipes are commands not seen here.
func makeRuns(c shellcmd.Command, cl call) (string, []string) {
	stdinFile := func(v string) bool {
		return v == "-" || v == "/dev/stdin" || strings.HasPrefix(v, "/dev/fd/") || strings.HasPrefix(v, "/proc/") || strings.HasPrefix(v, "<(")
	}
	var file string
	found := false
	for i := 1; i < len(c.Args); i++ {
		v := text(c.Args[i])
		switch {
		case v == "-f" || v == "--file" || v == "--makefile":
			if i+1 < len(c.Args) {
				i++
				if !c.Args[i].Literal {
					return cl.prog + " reads a makefile only known at run time", nil
				}
				file, found = text(c.Args[i]), true
			}
		case strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "--makefile="):
			_, file, _ = strings.Cut(v, "=")
			found = true
		case len(v) > 2 && strings.HasPrefix(v, "-f"):
			file, found = v[2:], true
			if !c.Args[i].Literal {
				return cl.prog + " reads a makefile only known at run time", nil
			}
		case v == "-E" || v == "--eval" || strings.HasPrefix(v, "--eval="):
			return cl.prog + " runs rules given with --eval", nil
		}
		if found && stdinFile(path.Clean(file)) || found && file == "-" {
			var seen []string
			texts, _ := stdinTexts(c)
			for _, t := range texts {
				for _, line := range strings.Split(t, "\n") {
					if strings.HasPrefix(line, "\t") {
						seen = append(seen, strings.TrimLeft(strings.TrimSpace(line), "@-+"))
					}
				}
			}
			return cl.prog + " reads its makefile from standard input or a descriptor, and runs its recipes", seen
		}
	}
	return "", nil
}

// traceRuns: strace -o '|cmd' or '!cmd' pipes the trace into a shell command (the
// traced command itself is seen through as a wrapper).
func traceRuns(c shellcmd.Command, cl call) (string, []string) {
	for i, v := range cl.args {
		var out string
		switch {
		case (v == "-o" || v == "--output") && i+1 < len(cl.args):
			out = cl.args[i+1]
		case strings.HasPrefix(v, "--output="):
			out = strings.TrimPrefix(v, "--output=")
		case len(v) > 2 && strings.HasPrefix(v, "-o"):
			out = v[2:]
		}
		if strings.HasPrefix(out, "|") || strings.HasPrefix(out, "!") {
			return cl.prog + " pipes its output into a shell command", []string{out[1:]}
		}
	}
	return "", nil
}
