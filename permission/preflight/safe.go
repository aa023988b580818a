package preflight

import (
	"strings"

	"github.com/airlock-app/airlock/sandbox/lazyre"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// safePrograms never write, run other programs or reach the network, whatever their
// arguments (beyond the checks in safeArgs). git is deliberately absent: hooks,
// aliases, pagers and config make no git command automatically safe.
var safePrograms = set("cat", "cd", "echo", "printf", "false", "true", "grep", "egrep", "fgrep", "head",
	"tail", "ls", "nl", "pwd", "wc", "which", "whoami", "id", "uname", "basename", "dirname", "realpath",
	"readlink", "stat", "file", "du", "df", "tree", "cut", "tr", "column", "diff", "cmp", "comm", "md5sum",
	"sha1sum", "sha256sum", "sha512sum", "cksum", "b2sum", "seq", "jq", "od", "hexdump",
	"strings", "tac", "rev", "paste", "expand", "unexpand", "fold", "fmt", "join", "test", "[", "type",
	"whereis", "uptime", "free", "ps", "lsblk", "lscpu", "nproc", "getconf", "arch", "tty", "groups",
	"users", "who", "cal", "numfmt", "expr", "date", "hostname", "sort", "uniq", "find", "rg", "sed",
	"yq", "base64")

// runsOwnScript reports whether a shell only runs the literal script it is given
// (`bash -lc 'ls && cat x'`, how agents wrap every command): the script's commands were
// followed by shellcmd at the top level and are judged one by one, so the shell itself
// adds nothing. A nested shell is not followed again, and a script that does not parse
// was not followed at all: neither is safe.
func runsOwnScript(c shellcmd.Command) bool {
	if c.Nested {
		return false
	}
	sawC := false
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		if !a.Literal {
			return false
		}
		switch a.Value {
		case "-c", "-lc", "-cl", "-ec", "-ce", "-lec", "-elc":
			sawC = true
		case "-l", "--login", "-e", "--norc", "--noprofile":
		default:
			if !sawC || strings.HasPrefix(a.Value, "-") {
				return false
			}
			_, err := shellcmd.Parse(a.Value)
			return err == nil
		}
	}
	return false
}

// versionProbes are toolchains whose `--version` (go: `version`, `env`) only prints.
var versionProbes = set("go", "node", "python", "python3", "npm", "pnpm", "yarn", "cargo", "rustc", "ruby",
	"java", "javac", "gcc", "g++", "clang", "make", "deno", "bun", "terraform", "kubectl", "docker", "pip", "pip3")

var sedPrint = lazyre.New(`^(\d+|\$)(,(\d+|\$))?p$`)

// safeCommand reports whether one simple command is known-safe and read-only.
func safeCommand(c shellcmd.Command) bool {
	for _, r := range c.Redirects {
		if r.Write && !(r.Target.Literal && r.Target.Value == "/dev/null") {
			return false
		}
	}
	if len(c.Args) == 0 {
		return true
	}
	if len(c.Wrappers) > 0 || len(c.Assigns) > 0 {
		return false
	}
	prog := c.Program()
	if shellProgram(prog) && c.Args[0].Value == prog {
		return runsOwnScript(c)
	}
	if versionProbes[prog] && c.Args[0].Value == prog && len(c.Args) == 2 && c.Args[1].Literal {
		switch v := c.Args[1].Value; {
		case v == "--version", v == "-V" && (prog == "python" || prog == "python3"):
			return true
		case prog == "go" && (v == "version" || v == "env"):
			return true
		}
	}
	if prog == "git" && c.Args[0].Value == "git" {
		args := make([]string, 0, len(c.Args)-1)
		for _, w := range c.Args[1:] {
			args = append(args, text(w))
		}
		return safeGit(args)
	}
	if !safePrograms[prog] || c.Args[0].Value != prog && !strings.HasPrefix(c.Args[0].Value, "/usr/bin/") && !strings.HasPrefix(c.Args[0].Value, "/bin/") {
		return false // ./ls or ~/bin/cat are not the system's ls and cat
	}
	args := make([]string, 0, len(c.Args)-1)
	for _, w := range c.Args[1:] {
		args = append(args, text(w))
	}
	cl := call{prog: prog, args: args}
	switch prog {
	case "find":
		return !cl.has("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf")
	case "rg":
		return !cl.has("--pre", "--hostname-bin", "-z", "--search-zip") && !cl.hasPrefix("--pre=", "--pre-glob", "--hostname-bin=")
	case "sed":
		if !cl.has("-n", "--quiet", "--silent") || cl.hasPrefix("-i", "--in-place", "-s", "-E", "-f", "--file") {
			return false
		}
		pos := positionals(args, set("-e", "--expression", "-l", "--line-length"))
		return len(pos) >= 1 && sedPrint().MatchString(pos[0])
	case "sort":
		return !cl.hasPrefix("-o", "--output", "--compress-program")
	case "uniq":
		return len(positionals(args, set("-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"))) <= 1
	case "date":
		return !cl.hasPrefix("-s", "--set")
	case "hostname":
		return len(positionals(args, nil)) == 0 && !cl.hasPrefix("-F", "--file", "-b", "--boot")
	case "yq":
		return !cl.hasPrefix("-i", "--inplace")
	case "base64":
		return !cl.hasPrefix("-o", "--output")
	}
	return true
}
