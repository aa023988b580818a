package preflight

import (
	"strings"

	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// shellProgram reports whether p is a shell (shellcmd.IsShell) or busybox left
// standing with options only: shellcmd unwraps `busybox APPLET …`, so what stays is
// busybox's own command line, judged like a shell's.
func shellProgram(p string) bool {
	return shellcmd.IsShell(p) || p == "busybox"
}

// command classifies one simple command.
func (a *analyzer) command(c shellcmd.Command, depth int) {
	a.noteFds(c)
	for _, r := range c.Redirects {
		if !r.Write {
			continue
		}
		t := text(r.Target)
		if dev, ok := diskDevice(t); ok {
			a.add(CategorySystem, "writes raw data over the disk device "+dev, c.Source)
		}
		if what, ok := a.airlockPath(t); ok {
			a.add(CategorySelfApproval, "writes "+what, c.Source)
		}
		if f, ok := criticalFile(t); ok {
			a.add(CategorySystem, "overwrites the system file "+f, c.Source)
		}
		a.plantedIn("", t, c.Source)
	}
	a.credentialInput(c)
	if len(c.Args) == 0 {
		return
	}
	if !c.Args[0].Literal {
		a.add(CategoryOpaque, "runs a program whose name is only known at run time", c.Source)
		a.safe = false
		return
	}
	if i := leadingAssignments(c); i > 0 {
		// `sudo A=1 rm …`: sudo (and env-like wrappers) take VAR=value words before the
		// command; what follows them is the program.
		a.safe = false
		if i < len(c.Args) {
			argv := make([]string, 0, len(c.Args)-i)
			for _, w := range c.Args[i:] {
				argv = append(argv, text(w))
			}
			a.parseNested(joinArgv(argv), c.Source, depth)
		}
		return
	}
	cl := newCall(c)
	if cl.prog == "cd" {
		a.cd(cl)
	}
	if inner, ok := extraWrapper(c, cl); ok {
		// Re-parse what the wrapper runs, so shellcmd sees through the wrappers inside it
		// (pkexec sudo -u x busybox rm …).
		a.safe = false
		argv := make([]string, len(inner.Args))
		for i, w := range inner.Args {
			argv[i] = text(w)
		}
		a.parseNested(joinArgv(argv), c.Source, depth)
		return
	}
	if script, via, ok := innerString(cl); ok {
		a.safe = false
		a.nested(script, via, depth)
	}
	if shellProgram(cl.prog) || cl.prog == "eval" {
		a.shell(c, cl, depth)
	}
	a.credentialRead(cl)
	a.destructive(cl)
	a.persistence(cl)
	a.cloud(cl, depth)
	a.selfApproval(cl)
}

// shell follows `sh -c SCRIPT` and `eval` below the level shellcmd already followed, and
// reports scripts that are only known at run time.
func (a *analyzer) shell(c shellcmd.Command, cl call, depth int) {
	if cl.prog == "eval" {
		vals, literal := c.Values(1)
		if !literal {
			a.add(CategoryOpaque, "evaluates a string only known at run time", c.Source)
			return
		}
		// The first level is already split into commands by shellcmd, which sees no
		// function declarations: the bomb is looked for in the script itself.
		a.forkBomb(strings.Join(vals, " "), c.Source)
		if c.Nested || depth > 0 {
			a.nested(strings.Join(vals, " "), c.Source, depth)
		}
		return
	}
	for i := 1; i < len(c.Args); i++ {
		w := c.Args[i]
		v := text(w)
		if v == "-o" || v == "+o" || v == "-O" || v == "+O" || v == "--rcfile" || v == "--init-file" {
			i++
			continue
		}
		if strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "c") {
			if i+1 >= len(c.Args) {
				return
			}
			s := c.Args[i+1]
			if !s.Literal {
				a.add(CategoryOpaque, "runs a shell script only known at run time", c.Source)
				return
			}
			a.forkBomb(s.Value, c.Source)
			if c.Nested || depth > 0 {
				a.nested(s.Value, c.Source, depth)
			}
			return
		}
		if !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+") {
			return // a script file: its content is not visible here
		}
	}
}

// extraWrapper sees through wrappers shellcmd does not know (pkexec, runuser, chroot,
// unshare, systemd-run, strace, npx, firejail, …) and returns the wrapped command.
func extraWrapper(c shellcmd.Command, cl call) (shellcmd.Command, bool) {
	var valued map[string]bool
	skipFirst := 0
	switch cl.prog {
	case "pkexec":
		valued = set("--user", "-u")
	case "runuser":
		valued = set("-u", "--user", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment")
	case "chroot":
		valued = set("--userspec", "--groups")
		skipFirst = 1
	case "unshare", "nsenter":
		valued = set("-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd", "-R", "--root")
	case "systemd-run":
		valued = set("-p", "--property", "-u", "--unit", "-M", "--machine", "-E", "--setenv", "--uid", "--gid", "--nice", "--working-directory", "--slice", "-H", "--host", "--description")
	case "strace", "ltrace":
		valued = set("-o", "-e", "-p", "-u", "-s", "-E", "-a", "-b", "-P", "-I", "-X")
	case "npx", "bunx", "pnpx":
		valued = set("-p", "--package", "-c", "--call")
	case "firejail", "proxychains", "proxychains4", "torsocks", "caffeinate", "catchsegv", "faketime", "sg":
		valued = set("-f", "-w", "-t")
		if cl.prog == "faketime" || cl.prog == "sg" {
			skipFirst = 1
		}
	case "pnpm", "yarn":
		if len(cl.args) > 0 && cl.args[0] == "dlx" {
			return rest(c, 2, nil, 0)
		}
		return shellcmd.Command{}, false
	case "npm":
		if len(cl.args) > 0 && (cl.args[0] == "exec" || cl.args[0] == "x") {
			return rest(c, 2, set("-p", "--package", "-w", "--workspace"), 0)
		}
		return shellcmd.Command{}, false
	default:
		return shellcmd.Command{}, false
	}
	return rest(c, 1, valued, skipFirst)
}

// rest returns the command that starts after c.Args[from:] options (skipping the values
// of valued flags and then skipFirst positionals).
func rest(c shellcmd.Command, from int, valued map[string]bool, skipFirst int) (shellcmd.Command, bool) {
	i := from
	for i < len(c.Args) {
		v := text(c.Args[i])
		if v == "--" {
			i++
			break
		}
		if len(v) > 1 && v[0] == '-' {
			if valued[v] {
				i++
			}
			i++
			continue
		}
		if skipFirst > 0 {
			skipFirst--
			i++
			continue
		}
		break
	}
	if i >= len(c.Args) {
		return shellcmd.Command{}, false
	}
	inner := c
	inner.Args = c.Args[i:]
	inner.Redirects = nil
	inner.Wrappers = append(append([]string(nil), c.Wrappers...), c.Program())
	return inner, true
}

// innerString returns a command string another program runs through a shell: su -c,
// runuser -c, script -c, watch CMD..., ssh HOST CMD..., flock … -c, and the find -exec
// argv (rendered as a string).
func innerString(cl call) (script, via string, ok bool) {
	switch cl.prog {
	case "su", "script", "flock", "runuser":
		for i, a := range cl.args {
			if (a == "-c" || a == "--command") && i+1 < len(cl.args) {
				return cl.args[i+1], cl.src, true
			}
			if strings.HasPrefix(a, "--command=") {
				return strings.TrimPrefix(a, "--command="), cl.src, true
			}
		}
	case "watch":
		if p := afterOptions(cl.args, set("-n", "--interval", "-q", "--equexit")); len(p) > 0 {
			return strings.Join(p, " "), cl.src, true
		}
	case "ssh":
		if _, remote := sshRemote(cl.args); remote != "" {
			return remote, cl.src, true
		}
	case "find":
		if argv := findExec(cl.args); len(argv) > 0 {
			return joinArgv(argv), cl.src, true
		}
	case "parallel":
		for i, a := range cl.args {
			if a == ":::" {
				p := afterOptions(cl.args[:i], set("-j", "--jobs", "-S", "--sshlogin"))
				if len(p) > 0 {
					return strings.Join(p, " "), cl.src, true
				}
			}
		}
	}
	return "", "", false
}

// findExec returns the commands find would run with -exec/-execdir/-ok/-okdir, joined
// with ";".
func findExec(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" && args[j] != `\;` {
				j++
			}
			if j > i+1 {
				if len(out) > 0 {
					out = append(out, ";")
				}
				out = append(out, args[i+1:j]...)
			}
			i = j
		}
	}
	return out
}

// joinArgv quotes an argv for re-parsing; a lone ";" stays an operator.
func joinArgv(argv []string) string {
	var b strings.Builder
	for i, s := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if s == ";" {
			b.WriteString(";")
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(s, "'", `'\''`) + "'")
	}
	return b.String()
}

// sshRemote returns the destination and the remote command of an ssh invocation.
func sshRemote(args []string) (host, remote string) {
	valued := set("-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B", "-P")
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1], strings.Join(args[i+2:], " ")
			}
			return "", ""
		}
		if len(a) > 1 && a[0] == '-' {
			if valued[a] {
				i++
			}
			continue
		}
		return a, strings.Join(args[i+1:], " ")
	}
	return "", ""
}

// afterOptions returns args from the first non-option argument on (the command a
// wrapper runs, with its own flags intact).
func afterOptions(args []string, valued map[string]bool) []string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args[i+1:]
		}
		if len(a) > 1 && a[0] == '-' {
			if valued[a] {
				i++
			}
			continue
		}
		return args[i:]
	}
	return nil
}

// cd follows the working directory through `cd` commands with literal targets.
func (a *analyzer) cd(cl call) {
	if a.cwdLost {
		return
	}
	pos := positionals(cl.args, nil)
	switch {
	case len(pos) == 0:
		a.cwd = "$HOME"
	case pos[0] == "-":
		a.cwd = ""
	case strings.HasPrefix(pos[0], "/") || strings.HasPrefix(pos[0], "~") || strings.HasPrefix(pos[0], "$HOME") || strings.HasPrefix(pos[0], "${HOME}"):
		a.cwd = pos[0]
	case a.cwd != "":
		a.cwd = a.cwd + "/" + pos[0]
	}
	if len(a.cwd) > maxCwdLen {
		// Past PATH_MAX the directory is not followed: each cd would copy it again.
		a.cwd, a.rel, a.relSet, a.cwdLost = "", "", false, true
		a.tooComplex("it changes directory deeper than can be followed", cl.src)
	}
}

// maxCwdLen bounds the working directory the line's cds are followed to: every path
// checked after them is resolved from it.
const maxCwdLen = 1024

// tooComplex records that part of a command was not analysed because following it would
// cost more than the command's length allows: P2, like any command Airlock cannot read.
func (a *analyzer) tooComplex(why, src string) {
	a.safe = false
	a.add(CategoryOpaque, cannotSee+"the command is too complex for Airlock to analyse ("+why+")", src)
}

// leadingAssignments counts the VAR=value words at the start of Args (a wrapper's
// environment settings that shellcmd left in place).
func leadingAssignments(c shellcmd.Command) int {
	n := 0
	for _, w := range c.Args {
		name, _, ok := strings.Cut(text(w), "=")
		if !ok || !validName(name) {
			break
		}
		n++
	}
	return n
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}
