package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// ErrAppLayerCannotCheck is in the chain of the error Exec returns (an *ExecError with
// ExitSandboxFailed) when no OS sandbox confines a command (backend "app", or "auto"
// on a machine without one) and the application layer cannot see everything the
// command could do: an interpreter, a program it does not model, a script from the
// workspace, an argument computed at run time.
var ErrAppLayerCannotCheck = errors.New("the application layer cannot check everything this command could do")

// Without an OS sandbox nothing contains what the application layer does not see, so
// its verdict is all there is: a command runs only when every program in it is one
// whose every effect the analysis knows (appPrograms), every word is literal, and
// nothing it writes or reads is denied. Anything else is refused, with the way out.

// The warnings of a command that ran with the application layer's checks alone.
const (
	appRanWarning      = `isolation backend "app": the OS does not confine this command; it ran because the application layer checks everything it does`
	appFallbackWarning = "WARNING: no OS sandbox backend is available (install bubblewrap: apt install bubblewrap); the command ran because the application layer checks everything it does"
)

// fileUse says what a modelled program does with its operands.
type fileUse int

const (
	// noFiles: the operands are not paths (echo, printf, test, …).
	noFiles fileUse = iota
	// readsFiles: the operands may be files it reads (cat, grep, …); never writes.
	readsFiles
	// writesFiles: AnalyzeCommand collects its write targets (cp, rm, touch, …); other
	// operands are read.
	writesFiles
)

// appProgram is one program the application layer can vouch for, and the arguments
// that would take it beyond what the analysis sees.
type appProgram struct {
	use fileUse
	// refuse are options that write, run programs, follow links or read beyond the
	// operands (matched as whole words, as --name=…, and as short-option letters for
	// the single-letter ones).
	refuse []string
	// recursive are options that make it walk directory trees (du and find always do).
	recursive []string
	always    bool // walks trees whatever the options
	// maxOperands bounds the non-option operands (uniq IN OUT writes OUT); 0: any.
	maxOperands int
}

var appPrograms = map[string]appProgram{
	// Shell builtins and pure programs.
	"echo": {}, "printf": {}, "true": {}, "false": {}, ":": {}, "pwd": {}, "seq": {}, "expr": {},
	"sleep": {}, "yes": {}, "whoami": {}, "id": {}, "uname": {}, "nproc": {}, "arch": {}, "test": {},
	"[": {}, "basename": {}, "dirname": {}, "exit": {}, "cd": {}, "pushd": {}, "set": {}, "printenv": {},
	"date":     {use: readsFiles, refuse: []string{"-s", "--set"}}, // -f FILE, -r FILE read
	"hostname": {maxOperands: -1},
	// Programs that only read their operands.
	"cat": {use: readsFiles}, "head": {use: readsFiles}, "tail": {use: readsFiles}, "wc": {use: readsFiles},
	"nl": {use: readsFiles}, "cut": {use: readsFiles}, "tr": {use: readsFiles}, "tac": {use: readsFiles},
	"rev": {use: readsFiles}, "paste": {use: readsFiles}, "expand": {use: readsFiles}, "unexpand": {use: readsFiles},
	"fold": {use: readsFiles}, "fmt": {use: readsFiles}, "join": {use: readsFiles}, "comm": {use: readsFiles},
	"cmp": {use: readsFiles}, "md5sum": {use: readsFiles}, "sha1sum": {use: readsFiles}, "sha224sum": {use: readsFiles},
	"sha256sum": {use: readsFiles}, "sha384sum": {use: readsFiles}, "sha512sum": {use: readsFiles},
	"b2sum": {use: readsFiles}, "cksum": {use: readsFiles}, "od": {use: readsFiles}, "hexdump": {use: readsFiles},
	"strings": {use: readsFiles}, "stat": {use: readsFiles}, "realpath": {use: readsFiles},
	"readlink": {use: readsFiles}, "df": {use: readsFiles}, "base64": {use: readsFiles},
	"diff":  {use: readsFiles, refuse: []string{"-r", "--recursive"}}, // follows links inside the trees
	"uniq":  {use: readsFiles, maxOperands: 1},
	"sort":  {use: readsFiles, refuse: []string{"-o", "--output", "-T", "--temporary-directory", "--compress-program"}},
	"ls":    {use: readsFiles, recursive: []string{"-R", "--recursive"}, refuse: []string{"-L", "--dereference"}},
	"du":    {use: readsFiles, always: true, refuse: []string{"-L", "--dereference"}},
	"grep":  {use: readsFiles, recursive: []string{"-r", "--recursive"}, refuse: []string{"-R", "--dereference-recursive", "-d", "--directories", "--devices"}},
	"egrep": {use: readsFiles, recursive: []string{"-r", "--recursive"}, refuse: []string{"-R", "--dereference-recursive", "-d", "--directories", "--devices"}},
	"fgrep": {use: readsFiles, recursive: []string{"-r", "--recursive"}, refuse: []string{"-R", "--dereference-recursive", "-d", "--directories", "--devices"}},
	"find": {use: readsFiles, always: true, refuse: []string{"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint",
		"-fprint0", "-fprintf", "-L", "-follow", "-files0-from"}},
	// Programs whose writes AnalyzeCommand collects. Links are refused: a link made by
	// one command sends a later command's write where the analysis did not look.
	"cp": {use: writesFiles, refuse: []string{"-r", "-R", "--recursive", "-a", "--archive", "-d", "-P", "--no-dereference",
		"-s", "--symbolic-link", "-l", "--link", "--preserve"}},
	"install":  {use: writesFiles, refuse: []string{"-s", "--strip", "--strip-program"}},
	"mv":       {use: writesFiles},
	"rm":       {use: writesFiles, recursive: []string{"-r", "-R", "--recursive"}},
	"rmdir":    {use: writesFiles},
	"unlink":   {use: writesFiles},
	"touch":    {use: writesFiles},
	"mkdir":    {use: writesFiles},
	"mkfifo":   {use: writesFiles},
	"truncate": {use: writesFiles},
	"tee":      {use: writesFiles},
	"chmod":    {use: writesFiles, recursive: []string{"-R", "--recursive"}},
	"chown":    {use: writesFiles, recursive: []string{"-R", "--recursive"}, refuse: []string{"-L", "--dereference"}},
	"chgrp":    {use: writesFiles, recursive: []string{"-R", "--recursive"}, refuse: []string{"-L", "--dereference"}},
	"dd":       {use: writesFiles},
	"sed":      {use: writesFiles, refuse: []string{"-f", "--file"}},
}

// pureWords are the programs whose words, whatever they expand to, can only be printed
// or compared (echo "$HOME", [ -n "$X" ]): their words may be computed at run time. A
// substitution inside is checked as a command of its own.
var pureWords = map[string]bool{"echo": true, "printf": true, "true": true, "false": true, ":": true, "test": true,
	"[": true, "exit": true, "seq": true, "expr": true, "sleep": true, "basename": true, "dirname": true}

// appShells run their literal script, which shellcmd follows; sh -c is how every
// surface runs a command line. A deliberately short list of shellcmd.IsShell: zsh and
// ksh read start-up files even with -c, fish its config.fish.
var appShells = map[string]bool{"sh": true, "bash": true, "dash": true}

// appWrappers are the wrappers that change nothing about what the command does to
// files and the network. sudo and doas change who does it, env -C and time -o change
// where it writes, xargs and flock add what the analysis cannot see, nohup writes
// nohup.out.
var appWrappers = map[string]bool{"command": true, "nice": true, "ionice": true, "timeout": true, "stdbuf": true,
	"setsid": true, "builtin": true, "exec": true, "taskset": true, "chrt": true}

// riskyVars change what a program loads or where a shell reads commands or resolves a
// path from; set on the command line or inherited, they are beyond the analysis.
var riskyVars = []string{"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "GCONV_PATH", "BASH_ENV", "ENV", "SHELLOPTS",
	"BASHOPTS", "CDPATH", "PS4", "PROMPT_COMMAND", "IFS", "PATH"}

func riskyVar(name string) bool {
	return slices.Contains(riskyVars, name) || strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "BASH_FUNC_")
}

// checkAppOnly enforces the application layer's verdict on a command that no OS sandbox
// will confine. It returns nil when the command may run, the *IsolationDeniedError of
// the first denial, or an *ExecError (ExitSandboxFailed) wrapping ErrAppLayerCannotCheck
// that says what cannot be checked and the way out. fallback is true when backend
// "auto" found no OS sandbox.
func checkAppOnly(pr *prepared, fallback bool) error {
	p := pr.req.Policy
	p.Hidden = pr.hidden
	// No network namespace here, so no proxy stands between the command and the
	// network: an allowlist's network clients are refused, whatever the caller connected.
	p.EgressConnected = false
	line := api.ShellJoin(pr.req.Argv)
	if _, err := p.AnalyzeCommand(line, pr.cwd); err != nil {
		if _, ok := IsDenied(err); ok {
			return err
		}
		return cannotCheck(fallback, fmt.Sprintf("the analysis of %s failed (%v)", quoteShort(line), err))
	}
	why := appOnlyGaps(p, pr, line)
	if _, ok := IsDenied(why); ok {
		return why
	}
	if why != nil {
		return cannotCheck(fallback, why.Error())
	}
	return nil
}

func cannotCheck(fallback bool, why string) error {
	where := `isolation backend "app": no OS sandbox confines it`
	out := "run it in an OS sandbox: --backend auto or --backend os (isolation.backend in config.toml), with bubblewrap installed (apt install bubblewrap)"
	if fallback {
		where = "no OS sandbox backend is available to confine it"
		out = "install bubblewrap (apt install bubblewrap) so that an OS sandbox confines it (then --backend auto uses it)"
	}
	return &ExecError{Code: ExitSandboxFailed, Err: fmt.Errorf("%w (%s): %s; %s", ErrAppLayerCannotCheck, where, why, out)}
}

// appOnlyGaps returns why the analysis does not account for the command line (an
// error whose text says it), an *IsolationDeniedError for a hidden path it would
// read, or nil.
func appOnlyGaps(p Policy, pr *prepared, line string) error {
	script, err := shellcmd.Parse(line)
	if err != nil {
		return fmt.Errorf("it does not parse (%v)", err)
	}
	for _, kv := range pr.env {
		name, val, _ := strings.Cut(kv, "=")
		if name != "PATH" && val != "" && riskyVar(name) {
			return fmt.Errorf("the environment sets %s, which changes what the programs load or run", name)
		}
	}
	if dir := writablePathDir(p, envValue(pr.env, "PATH")); dir != "" {
		return fmt.Errorf("PATH includes %s, which the command may write, so another program could run under a checked name", dir)
	}
	cwds := []string{pr.cwd}
	for i := range script.Commands {
		c := &script.Commands[i]
		if err := appCommandGap(p, pr, c, &cwds); err != nil {
			return err
		}
	}
	return nil
}

// writablePathDir returns the first PATH entry a sandboxed write could reach (relative
// entries are the working directory), or "".
func writablePathDir(p Policy, pathEnv string) string {
	if p.Mode == ModeReadOnly {
		return ""
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			return "the working directory"
		}
		real, err := resolvePath(filepath.Clean(dir), true)
		if err != nil {
			real = dir
		}
		if p.rootOf(real) != "" {
			return dir
		}
	}
	return ""
}

func appCommandGap(p Policy, pr *prepared, c *shellcmd.Command, cwds *[]string) error {
	src := quoteShort(c.Source)
	for _, a := range c.Assigns {
		if riskyVar(a.Name) {
			return fmt.Errorf("%s sets %s, which changes what the programs load or run", src, a.Name)
		}
	}
	for _, r := range c.Redirects {
		if !r.Target.Literal {
			return fmt.Errorf("%s redirects to or from %s, computed at run time", src, r.Target.Raw)
		}
		// A write is checked too: a hidden path inside a writable root (~/.ssh when the
		// home directory is the working directory) is out of reach under an OS sandbox.
		if r.Write || r.Op == "<" {
			if err := readCheck(p, r.Target.Value, *cwds, false); err != nil {
				return err
			}
		}
	}
	if len(c.Args) == 0 {
		return nil
	}
	for _, w := range c.Wrappers {
		if !appWrappers[w] {
			return fmt.Errorf("%s runs through %s, which the application layer does not model", src, w)
		}
	}
	prog := c.Program()
	for i, w := range c.Args {
		if !w.Literal && (i == 0 || !pureWords[prog]) {
			return fmt.Errorf("%s has %s, computed at run time", src, w.Raw)
		}
	}
	args := c.Args[1:]
	model, ok := appPrograms[prog]
	if !ok && !appShells[prog] {
		return fmt.Errorf("%s runs %s, which the application layer does not model (an interpreter, or a program that can write, run other programs or reach the network in ways it cannot see)", src, prog)
	}
	if err := programGap(pr, c, prog, src); err != nil {
		return err
	}
	if appShells[prog] {
		return shellGap(c, src)
	}
	for _, a := range args {
		if opt := matchOption(a.Value, model.refuse); opt != "" {
			return fmt.Errorf("%s uses %s %s, which the application layer does not model", src, prog, opt)
		}
	}
	if model.use == writesFiles {
		if err := writerOptionGap(prog, args, src); err != nil {
			return err
		}
	}
	ops := appOperands(args)
	switch {
	case model.maxOperands < 0 && len(ops) > 0, model.maxOperands > 0 && len(ops) > model.maxOperands:
		return fmt.Errorf("%s gives %s more operands than the application layer models", src, prog)
	}
	switch prog {
	case "cd", "pushd":
		return trackCd(p, ops, cwds, src)
	case "printf":
		for i, a := range args {
			if a.Value != "-v" {
				continue
			}
			if i+1 >= len(args) || !args[i+1].Literal || riskyVar(args[i+1].Value) {
				return fmt.Errorf("%s sets a variable that changes what later commands run", src)
			}
		}
	case "set":
		for i, a := range args {
			option := strings.HasPrefix(a.Value, "-") || strings.HasPrefix(a.Value, "+")
			optionName := i > 0 && (args[i-1].Value == "-o" || args[i-1].Value == "+o")
			if !option && !optionName {
				return fmt.Errorf("%s sets positional parameters, which the application layer does not follow", src)
			}
		}
	case "sed":
		if err := sedGap(args, src); err != nil {
			return err
		}
	case "mv":
		if err := mvGap(p, ops, *cwds, src); err != nil {
			return err
		}
	case "dd":
		for _, a := range args {
			v, isIf := strings.CutPrefix(a.Value, "if=")
			w, isOf := strings.CutPrefix(a.Value, "of=")
			if isOf {
				v = w
			}
			if isIf || isOf {
				if err := readCheck(p, v, *cwds, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if model.use == noFiles {
		return nil
	}
	recursive := model.always
	for _, a := range args {
		if matchOption(a.Value, model.recursive) != "" {
			recursive = true
		}
	}
	for _, a := range args {
		v := a.Value
		if strings.HasPrefix(v, "-") {
			_, val, ok := strings.Cut(v, "=")
			if !ok {
				continue
			}
			v = val
		}
		if err := readCheck(p, v, *cwds, recursive); err != nil {
			return err
		}
	}
	return nil
}

// shellBuiltins run inside the shell whatever PATH holds.
var shellBuiltins = map[string]bool{"cd": true, "pushd": true, "set": true, "exit": true, ":": true, "echo": true,
	"printf": true, "test": true, "[": true, "true": true, "false": true, "pwd": true}

// systemDirs hold the programs the application layer takes to be the system's own.
var systemDirs = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/local/sbin"}

// programGap refuses a program that is not the system's: a path outside the system
// directories (./build.sh, ~/bin/cat), or a name PATH finds elsewhere.
func programGap(pr *prepared, c *shellcmd.Command, prog, src string) error {
	arg0 := c.Args[0].Value
	if arg0 == prog && c.Nested && shellBuiltins[prog] {
		return nil
	}
	found, err := lookPathIn(arg0, envValue(pr.env, "PATH"), pr.cwd)
	if err != nil {
		if strings.Contains(arg0, "/") {
			return fmt.Errorf("%s runs %s, a program outside the system directories (a script or binary from the workspace?)", src, arg0)
		}
		return nil // not found: the shell reports it, and nothing the command writes can put it in PATH (writablePathDir)
	}
	real, err := filepath.EvalSymlinks(found)
	if err != nil {
		real = found
	}
	if !slices.Contains(systemDirs, filepath.Dir(real)) || (strings.Contains(arg0, "/") && !slices.Contains(systemDirs, filepath.Dir(filepath.Clean(arg0)))) {
		return fmt.Errorf("%s runs %s, a program outside the system directories (a script or binary from the workspace?)", src, found)
	}
	return nil
}

// matchOption returns the option of list that word is, or "". Long options match as
// the unambiguous prefixes getopt accepts (--out for --output) and with =VALUE; a short
// option matches anywhere in a single-dash word (-rf, -no/tmp/x: the letter may take
// the rest as its value), which may refuse more than needed but never less. find's
// single-dash words match whole.
func matchOption(word string, list []string) string {
	if !strings.HasPrefix(word, "-") || word == "-" || word == "--" {
		return ""
	}
	name, _, _ := strings.Cut(word, "=")
	for _, o := range list {
		switch {
		case word == o || name == o:
			return o
		case strings.HasPrefix(o, "--") && strings.HasPrefix(name, "--") && len(name) > 2 && strings.HasPrefix(o, name):
			return o
		case len(o) == 2 && !strings.HasPrefix(word, "--") && strings.ContainsRune(word[1:], rune(o[1])):
			return o
		}
	}
	return ""
}

// writerLongOptions are the long options of the writing programs that AnalyzeCommand
// reads correctly, spelt out in full. An abbreviation (--target for
// --target-directory, --in-pl for --in-place) or another option could hide a write
// target from it.
var writerLongOptions = set("force", "interactive", "no-clobber", "verbose", "target-directory", "no-target-directory",
	"backup", "suffix", "remove-destination", "strip-trailing-slashes", "update", "one-file-system", "dereference",
	"directory", "mode", "owner", "group", "compare", "preserve-timestamps", "recursive", "dir", "preserve-root",
	"no-preserve-root", "parents", "ignore-fail-on-non-empty", "no-create", "date", "reference", "no-dereference",
	"size", "io-blocks", "append", "ignore-interrupts", "changes", "silent", "quiet", "from", "expression", "in-place",
	"regexp-extended", "separate", "null-data", "unbuffered", "posix", "line-length", "sandbox", "debug")

// writerValueLetters are the short options of the writing programs that take a value:
// AnalyzeCommand reads them alone (-t DIR, -tDIR), not inside a cluster (-vt DIR).
var writerValueLetters = map[string]string{"cp": "tS", "mv": "tS", "install": "tSmogZ", "touch": "drt",
	"mkdir": "mZ", "mkfifo": "mZ", "truncate": "sr"}

// writerOptionGap refuses the option words of a writing program that could hide a
// write target from AnalyzeCommand.
func writerOptionGap(prog string, args []shellcmd.Word, src string) error {
	for _, a := range args {
		v := a.Value
		if v == "--" {
			return nil
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			continue
		}
		if name, ok := strings.CutPrefix(v, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			if !writerLongOptions[name] {
				return fmt.Errorf("%s uses %s, an option of %s the application layer does not read (write long options in full)", src, v, prog)
			}
			continue
		}
		switch prog {
		case "chmod":
			// -w, -x, -r are modes, not options: the operand after them would go unchecked.
			if strings.Trim(v[1:], "Rvfc") != "" {
				return fmt.Errorf("%s: the application layer reads only -R, -v, -f and -c of chmod (put a mode such as a-w instead of %s)", src, v)
			}
		case "sed", "dd":
		default:
			run := v[1:]
			if i := strings.IndexFunc(run, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }); i >= 0 {
				run = run[:i] // -t/tmp/x: the value starts where the letters end
			}
			if letters := writerValueLetters[prog]; len(run) > 1 && strings.ContainsAny(run[1:], letters) {
				return fmt.Errorf("%s groups an option that takes a value into %s, which the application layer does not read (write it on its own)", src, v)
			}
		}
	}
	return nil
}

// appOperands are the words that are not options (after `--`, every word).
func appOperands(args []shellcmd.Word) []string {
	var out []string
	for i, a := range args {
		if a.Value == "--" {
			for _, b := range args[i+1:] {
				out = append(out, b.Value)
			}
			return out
		}
		if !strings.HasPrefix(a.Value, "-") || a.Value == "-" {
			out = append(out, a.Value)
		}
	}
	return out
}

// shellGap accepts `sh -c SCRIPT` (whose commands shellcmd followed and which are
// checked one by one) and nothing else a shell could be asked to do.
func shellGap(c *shellcmd.Command, src string) error {
	if c.Nested {
		return fmt.Errorf("%s starts a shell inside a shell, which the application layer does not follow", src)
	}
	for i := 1; i < len(c.Args); i++ {
		v := c.Args[i].Value
		if len(v) > 1 && v[0] == '-' && strings.Trim(v[1:], "ceux") == "" && strings.Contains(v, "c") {
			if i+1 >= len(c.Args) {
				return fmt.Errorf("%s has no script after -c", src)
			}
			if _, err := shellcmd.Parse(c.Args[i+1].Value); err != nil {
				return fmt.Errorf("%s: the script does not parse (%v)", src, err)
			}
			if i+2 < len(c.Args) {
				return fmt.Errorf("%s passes arguments to its script, which the application layer does not follow", src)
			}
			return nil
		}
		if len(v) > 1 && v[0] == '-' && strings.Trim(v[1:], "eux") == "" {
			continue
		}
		break
	}
	return fmt.Errorf("%s runs a shell on a script file or with options that read start-up files; the application layer only follows `sh -c SCRIPT`", src)
}

// sedGap refuses sed scripts that could write, read or run other files (w, W, r, R, e,
// and the s///w and s///e flags): the letters anywhere in a script, to be sure.
func sedGap(args []shellcmd.Word, src string) error {
	var scripts []string
	explicit := false
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-e" || v == "--expression":
			explicit = true
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1].Value)
				i++
			}
		case strings.HasPrefix(v, "--expression="):
			explicit = true
			scripts = append(scripts, strings.TrimPrefix(v, "--expression="))
		case strings.HasPrefix(v, "-e") && len(v) > 2 && !strings.HasPrefix(v, "--"):
			explicit = true
			scripts = append(scripts, v[2:])
		}
	}
	if !explicit {
		if ops := appOperands(args); len(ops) > 0 {
			scripts = append(scripts, ops[0])
		}
	}
	for _, s := range scripts {
		if strings.ContainsAny(s, "wWrRe") {
			return fmt.Errorf("%s: the sed script may write, read or run files (w, r, e), which the application layer does not model", src)
		}
	}
	return nil
}

// mvGap refuses moving a symbolic link or a directory: a later write through the new
// name would go where the analysis, which looked before anything ran, did not see.
func mvGap(p Policy, ops []string, cwds []string, src string) error {
	if len(ops) < 2 {
		return nil
	}
	for _, o := range ops[:len(ops)-1] {
		for _, base := range cwds {
			st, err := os.Lstat(absFrom(o, base, p.Home))
			if err == nil && (st.Mode().Type()&(os.ModeSymlink|os.ModeDir) != 0) {
				return fmt.Errorf("%s moves %s, a directory or symbolic link, which the application layer cannot follow through later commands", src, o)
			}
		}
	}
	return nil
}

// trackCd follows a literal cd so that later relative paths are checked where they lead.
func trackCd(p Policy, ops []string, cwds *[]string, src string) error {
	if len(ops) == 0 {
		ops = []string{"~"}
	}
	if ops[0] == "-" {
		return fmt.Errorf("%s goes back to a directory the application layer does not track", src)
	}
	next, ok := cdFrom(*cwds, ops[0], p.Home)
	if !ok {
		return fmt.Errorf("%s changes directory more ways than the application layer tracks (%d directories)", src, maxCwds)
	}
	*cwds = next
	return nil
}

// readCheck applies CheckRead to a path operand (from every directory a cd may have
// led to, and to what a glob matches now); a recursive reader is also refused a tree
// that holds a hidden path.
func readCheck(p Policy, v string, cwds []string, recursive bool) error {
	if v == "" || v == "-" {
		return nil
	}
	for _, base := range cwds {
		abs := absFrom(v, base, p.Home)
		paths := []string{abs}
		if strings.ContainsAny(v, "*?[") {
			if m, err := filepath.Glob(abs); err == nil {
				paths = append(paths, m...)
			}
		}
		for _, path := range paths {
			if err := p.CheckRead(path); err != nil {
				return err
			}
			if !recursive {
				continue
			}
			real, err := resolvePath(filepath.Clean(path), true)
			if err != nil {
				real = filepath.Clean(path)
			}
			for _, h := range p.Hidden {
				if within(h, real) {
					return &IsolationDeniedError{Reason: ReasonRead, Path: real, Why: "the tree holds " + hiddenWhy(h, p.Home),
						Hint: "name the files or directories to read (the hidden ones aside), or run it in an OS sandbox (--backend auto), which hides them"}
				}
			}
		}
	}
	return nil
}
