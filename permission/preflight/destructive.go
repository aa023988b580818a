package preflight

import (
	"path"
	"strings"

	"github.com/airlock-app/airlock/sandbox/lazyre"
)

// destructive checks local data-loss and system commands.
func (a *analyzer) destructive(cl call) {
	switch p := cl.prog; {
	case p == "rm":
		a.rm(cl)
	case p == "git":
		a.git(cl)
	case strings.HasPrefix(p, "mkfs") || p == "mke2fs" || p == "mkswap":
		a.add(CategorySystem, p+" formats a filesystem, erasing what is on the device", cl.src)
	case p == "shred":
		a.add(CategoryDataLoss, "shred overwrites files so they cannot be recovered", cl.src)
	case p == "wipefs" && !cl.has("-n", "--no-act"):
		a.add(CategorySystem, "wipefs erases filesystem signatures from a device", cl.src)
	case p == "blkdiscard":
		a.add(CategorySystem, "blkdiscard discards every block of a device", cl.src)
	case p == "dd":
		for _, arg := range cl.args {
			if strings.HasPrefix(arg, "of=") {
				if dev, ok := diskDevice(strings.TrimPrefix(arg, "of=")); ok {
					a.add(CategorySystem, "dd writes raw data over the device "+dev, cl.src)
				}
			}
		}
	case p == "tee" || p == "cp" || p == "mv" || p == "install":
		for _, t := range positionals(cl.args, set("-t", "--target-directory", "-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix")) {
			if dev, ok := diskDevice(t); ok && (p == "tee" || t == lastPositional(cl)) {
				a.add(CategorySystem, p+" writes over the disk device "+dev, cl.src)
			}
		}
	case p == "shutdown" && !cl.has("-c", "--help"):
		a.add(CategorySystem, "shutdown stops the machine", cl.src)
	case (p == "reboot" || p == "halt" || p == "poweroff") && !cl.has("--help"):
		a.add(CategorySystem, p+" stops the machine", cl.src)
	case p == "init" || p == "telinit":
		if pos := positionals(cl.args, nil); len(pos) > 0 && (pos[0] == "0" || pos[0] == "6") {
			a.add(CategorySystem, p+" "+pos[0]+" powers off or reboots the machine", cl.src)
		}
	case p == "systemctl" || p == "loginctl":
		pos := positionals(cl.args, set("-H", "--host", "-M", "--machine", "-t", "--type", "-s", "--signal", "-p", "--property", "--root"))
		if len(pos) > 0 {
			switch pos[0] {
			case "poweroff", "reboot", "halt", "kexec", "soft-reboot", "rescue", "emergency":
				a.add(CategorySystem, p+" "+pos[0]+" stops or reboots the machine", cl.src)
			}
		}
	case p == "kill":
		a.kill(cl)
	case p == "chmod" || p == "chown" || p == "chgrp":
		a.chmod(cl)
	case p == "find":
		a.find(cl)
	case sqlClients[p]:
		a.sql(cl)
	}
	a.more(cl)
	a.system(cl)
}

func lastPositional(cl call) string {
	pos := positionals(cl.args, nil)
	if len(pos) == 0 {
		return ""
	}
	return pos[len(pos)-1]
}

// recursiveForce parses rm-style flags.
func rmFlags(args []string) (recursive, force, noPreserve bool, targets []string) {
	opts := true
	for _, a := range args {
		switch {
		case opts && a == "--":
			opts = false
		case opts && strings.HasPrefix(a, "--"):
			switch a {
			case "--recursive":
				recursive = true
			case "--force":
				force = true
			case "--no-preserve-root":
				noPreserve = true
			}
		case opts && len(a) > 1 && a[0] == '-':
			if strings.ContainsAny(a[1:], "rR") {
				recursive = true
			}
			if strings.ContainsRune(a[1:], 'f') {
				force = true
			}
		default:
			targets = append(targets, a)
		}
	}
	return
}

func (a *analyzer) rm(cl call) {
	recursive, force, noPreserve, targets := rmFlags(cl.args)
	if noPreserve {
		a.add(CategoryDestructivePath, "rm --no-preserve-root can delete the whole filesystem", cl.src)
	}
	if recursive {
		for _, t := range targets {
			if what, ok := a.dangerousTarget(t); ok {
				a.add(CategoryDestructivePath, "rm deletes "+what+" recursively", cl.src)
				return
			}
		}
	}
	if recursive && force {
		a.add(CategoryDestructivePath, "rm -rf deletes recursively without asking", cl.src)
	}
}

var systemDirs = set("/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/opt", "/proc",
	"/root", "/sbin", "/srv", "/sys", "/usr", "/var", "/Users", "/System", "/Library", "/Applications", "/private")

// dangerousTarget reports whether a path names the filesystem root, a top-level system
// directory, everything under one, or the home directory.
func (a *analyzer) dangerousTarget(t string) (string, bool) {
	s := t
	relative := !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "~") && !strings.HasPrefix(s, "$HOME") && !strings.HasPrefix(s, "${HOME}")
	if relative && a.cwd != "" {
		s = a.cwd + "/" + s
	}
	if strings.HasPrefix(s, "~") && s != "~" && !strings.HasPrefix(s, "~/") {
		user, rest, _ := strings.Cut(s[1:], "/")
		if c := path.Clean("/" + rest); c == "/" || c == "/*" || c == "/.*" {
			return "the home directory of " + user, true
		}
		return "", false
	}
	if rel, ok := a.inHome(s); ok {
		switch rel {
		case "":
			return "the home directory", true
		case "*", ".*":
			return "everything in the home directory", true
		}
		return "", false
	}
	if !strings.HasPrefix(s, "/") {
		return "", false
	}
	c := path.Clean(s)
	switch {
	case c == "/":
		return "the whole filesystem (/)", true
	case c == "/*" || c == "/.*":
		return "everything under /", true
	case systemDirs[c]:
		return "the system directory " + c, true
	case strings.HasSuffix(c, "/*") && systemDirs[strings.TrimSuffix(c, "/*")]:
		return "everything in " + strings.TrimSuffix(c, "/*"), true
	}
	return "", false
}

var gitValued = set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path")

func (a *analyzer) git(cl call) {
	i := 0
	for i < len(cl.args) {
		v := cl.args[i]
		if len(v) > 1 && v[0] == '-' {
			if gitValued[v] {
				i++
			}
			i++
			continue
		}
		break
	}
	if i >= len(cl.args) {
		return
	}
	sub, args := cl.args[i], call{args: cl.args[i+1:]}
	a.gitMore(sub, args, cl.src)
	switch sub {
	case "push":
		pos := positionals(args.args, set("--repo", "-o", "--push-option", "--receive-pack", "--exec"))
		switch {
		case args.has("--force", "--mirror") || args.hasPrefix("--force-with-lease") || args.shortFlag("f"):
			a.add(CategoryDataLoss, "git push --force rewrites history on the remote", cl.src)
		case args.has("--delete", "--prune") || args.shortFlag("d"):
			a.add(CategoryDataLoss, "git push --delete removes branches or tags on the remote", cl.src)
		default:
			for j, p := range pos {
				if j == 0 && len(pos) > 1 {
					continue // the remote
				}
				if strings.HasPrefix(p, "+") {
					a.add(CategoryDataLoss, "git push +ref force-updates the remote ref", cl.src)
				} else if strings.HasPrefix(p, ":") && len(p) > 1 {
					a.add(CategoryDataLoss, "git push :ref deletes the remote ref", cl.src)
				}
			}
		}
	case "reset":
		if args.has("--hard") {
			a.add(CategoryDataLoss, "git reset --hard discards uncommitted changes", cl.src)
		}
	case "clean":
		force := args.has("--force") || args.shortFlag("f")
		dry := args.has("--dry-run") || args.shortFlag("n")
		if force && !dry {
			a.add(CategoryDataLoss, "git clean -f deletes untracked files", cl.src)
		}
	case "branch":
		del := args.has("--delete") || args.shortFlag("d")
		if args.shortFlag("D") || del && (args.has("--force") || args.shortFlag("f")) {
			a.add(CategoryDataLoss, "git branch -D deletes a branch even when it is not merged", cl.src)
		}
	}
}

// diskDevice reports whether a path is a block device or kernel memory (writing it
// destroys data), as opposed to /dev/null, /dev/stdout, terminals and the like.
func diskDevice(p string) (string, bool) {
	if !strings.HasPrefix(p, "/dev/") {
		return "", false
	}
	c := path.Clean(p)
	if !strings.HasPrefix(c, "/dev/") {
		return "", false
	}
	name := strings.TrimPrefix(c, "/dev/")
	switch {
	case name == "null" || name == "zero" || name == "full" || name == "random" || name == "urandom" ||
		name == "stdout" || name == "stderr" || name == "stdin" || name == "tty" || name == "ptmx" ||
		strings.HasPrefix(name, "fd/") || strings.HasPrefix(name, "pts/") || strings.HasPrefix(name, "tty") ||
		strings.HasPrefix(name, "shm/") || strings.HasPrefix(name, "mqueue/") || name == "console":
		return "", false
	}
	return c, true
}

func (a *analyzer) kill(cl call) {
	sigDone := false
	for i, v := range cl.args {
		if v == "-s" || v == "-n" || v == "--signal" {
			sigDone = true
			continue
		}
		if !sigDone && strings.HasPrefix(v, "-") && v != "-1" {
			sigDone = true
			continue
		}
		if !sigDone && v == "-1" && i+1 < len(cl.args) {
			sigDone = true // kill -1 PID: SIGHUP
			continue
		}
		if v == "-1" || v == "1" {
			a.add(CategorySystem, cl.prog+" "+v+" signals every process (or init), stopping the system", cl.src)
			return
		}
	}
}

func (a *analyzer) chmod(cl call) {
	recursive := cl.has("--recursive") || cl.shortFlag("R")
	pos := positionals(cl.args, set("--reference", "--from"))
	if len(pos) < 2 {
		return
	}
	for _, t := range pos[1:] {
		what, ok := a.dangerousTarget(t)
		if !ok {
			continue
		}
		if recursive {
			a.add(CategoryDestructivePath, cl.prog+" -R changes "+what+" recursively", cl.src)
			return
		}
		if path.Clean(t) == "/" {
			a.add(CategoryDestructivePath, cl.prog+" changes the filesystem root", cl.src)
			return
		}
	}
}

func (a *analyzer) find(cl call) {
	if !findDeletes(cl.args) {
		return
	}
	for _, arg := range cl.args {
		if strings.HasPrefix(arg, "-") {
			break // the starting points come before the expression
		}
		if what, ok := a.dangerousTarget(arg); ok {
			a.add(CategoryDestructivePath, "find -delete deletes "+what, cl.src)
			return
		}
	}
	a.add(CategoryDataLoss, "find -delete deletes every file it matches, without asking", cl.src)
}

// findDeletes reports whether -delete is an action of find's expression, not the value
// of a test (-name -delete) or a word of an -exec command (-exec echo -delete ;).
func findDeletes(args []string) bool {
	valued := set("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
		"-lname", "-ilname", "-samefile", "-newer", "-anewer", "-cnewer", "-user", "-group", "-perm", "-type",
		"-xtype", "-size", "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin", "-used", "-links", "-inum",
		"-maxdepth", "-mindepth", "-fstype", "-context", "-printf", "-fprint", "-fprint0", "-fprintf", "-fls", "-regextype", "-uid", "-gid")
	for i := 0; i < len(args); i++ {
		v := args[i]
		switch {
		case v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir":
			if i+1 < len(args) && (v == "-exec" || v == "-execdir") && findDeleters[path.Base(args[i+1])] {
				return true // -exec rm {} + deletes like -delete
			}
			for i++; i < len(args) && args[i] != ";" && args[i] != "+"; i++ {
			}
		case valued[v]:
			i++
		case v == "-delete":
			return true
		}
	}
	return false
}

// findDeleters are the programs that make find -exec delete what it matches.
var findDeleters = set("rm", "unlink", "shred", "rmdir")

var sqlClients = set("psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "clickhouse-client", "clickhouse",
	"cockroach", "mongo", "mongosh", "redis-cli", "cqlsh", "duckdb", "usql", "pgcli", "mycli", "litecli",
	"snowsql", "bq", "trino", "presto", "spanner-cli", "osql", "isql", "valkey-cli")

var (
	sqlDestructive = lazyre.New(`(?i)\bdrop\s+(table|database|schema|index|view|user|role|keyspace|collection|materialized\s+view)\b|\btruncate\s+(table\s+)?["\x60\w]|\bflush(all|db)\b|dropDatabase\s*\(|\.drop\s*\(`)
	sqlDeleteAll   = lazyre.New(`(?i)\bdelete\s+from\s+[\w."\x60\[\]]+\s*(;|$|["'])`)
)

// sqlReason returns why a SQL text destroys data, if it does.
func sqlReason(s string) (string, bool) {
	if m := sqlDestructive().FindString(s); m != "" {
		return "runs " + strings.ToUpper(strings.Fields(m)[0]) + " in a database client", true
	}
	if sqlDeleteAll().MatchString(s) {
		return "runs DELETE without WHERE in a database client", true
	}
	return "", false
}

func (a *analyzer) sql(cl call) {
	for _, arg := range cl.args {
		if r, ok := sqlReason(arg); ok {
			a.add(CategoryDataLoss, r, cl.src)
			return
		}
	}
}
