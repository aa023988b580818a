package preflight

import (
	"strings"

	"github.com/airlock-app/airlock/sandbox/lazyre"
)

// More data-loss commands: the ones that throw away uncommitted work, stashes, history,
// files at a sync destination, container volumes, firewall rules or cron tables, and
// interpreters' one-liners that delete trees or run a shell. Each is what an agent
// "cleaning up" does by mistake; they ask the person.

// gitMore checks git subcommands a.git does not: those that discard uncommitted changes
// or the means to recover lost work.
func (a *analyzer) gitMore(sub string, args call, src string) {
	switch sub {
	case "checkout":
		pos := positionals(args.args, set("-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"))
		dashdash := false
		for i, v := range args.args {
			if v == "--" && i+1 < len(args.args) {
				dashdash = true
			}
		}
		dot := false
		for _, p := range pos {
			if p == "." || p == ":/" || p == "*" {
				dot = true
			}
		}
		if dashdash || dot || args.has("--force", "--pathspec-from-file") || args.shortFlag("f") {
			a.add(CategoryDataLoss, "git checkout -- PATH overwrites uncommitted changes in those files", src)
		}
	case "restore":
		staged := args.has("--staged") || args.shortFlag("S")
		worktree := args.has("--worktree") || args.shortFlag("W")
		if !staged || worktree {
			a.add(CategoryDataLoss, "git restore overwrites uncommitted changes in the working tree", src)
		}
	case "switch":
		if args.has("--discard-changes", "--force") || args.shortFlag("f") {
			a.add(CategoryDataLoss, "git switch --discard-changes throws away uncommitted changes", src)
		}
	case "stash":
		if len(args.args) > 0 && (args.args[0] == "drop" || args.args[0] == "clear") {
			a.add(CategoryDataLoss, "git stash "+args.args[0]+" deletes stashed changes", src)
		}
	case "filter-branch", "filter-repo":
		a.add(CategoryDataLoss, "git "+sub+" rewrites the repository's whole history", src)
	case "reflog":
		if len(args.args) > 0 && (args.args[0] == "expire" || args.args[0] == "delete") {
			a.add(CategoryDataLoss, "git reflog "+args.args[0]+" removes what lets lost commits be recovered", src)
		}
	case "gc":
		if args.has("--prune=now", "--prune=all") {
			a.add(CategoryDataLoss, "git gc --prune=now deletes unreachable commits at once", src)
		}
	case "worktree":
		if len(args.args) > 0 && args.args[0] == "remove" && (args.has("--force") || args.shortFlag("f")) {
			a.add(CategoryDataLoss, "git worktree remove --force deletes a working tree with its uncommitted changes", src)
		}
	case "config":
		a.gitConfig(args, src)
	}
}

// more checks the other programs.
func (a *analyzer) more(cl call) {
	switch p := cl.prog; p {
	case "rsync":
		if cl.has("--dry-run") || cl.shortFlag("n") {
			return
		}
		for _, v := range cl.args {
			if strings.HasPrefix(v, "--delete") || v == "--remove-source-files" {
				a.add(CategoryDataLoss, "rsync "+v+" deletes files (at the destination, or the sources)", cl.src)
				return
			}
		}
	case "truncate":
		for i, v := range cl.args {
			if (v == "-s" || v == "--size") && i+1 < len(cl.args) && cl.args[i+1] == "0" ||
				v == "--size=0" || v == "-s0" {
				a.add(CategoryDataLoss, "truncate -s 0 empties the files", cl.src)
				return
			}
		}
	case "crontab":
		if cl.shortFlag("r") || cl.has("--remove") {
			a.add(CategoryDataLoss, "crontab -r deletes every scheduled job of the user", cl.src)
		}
	case "dropdb":
		if !cl.has("--help", "-?", "--version", "-V") {
			a.add(CategoryDataLoss, "dropdb deletes a PostgreSQL database", cl.src)
		}
	case "mysqladmin", "mariadb-admin":
		for _, v := range positionals(cl.args, set("-u", "--user", "-h", "--host", "-P", "--port", "-S", "--socket")) {
			if strings.EqualFold(v, "drop") {
				a.add(CategoryDataLoss, p+" drop deletes a database", cl.src)
				return
			}
		}
	case "docker-compose", "podman-compose":
		a.composeDown(cl, cl.args)
	case "ansible":
		a.ansible(cl)
	case "docker", "podman", "nerdctl":
		for i, v := range cl.args {
			if v == "compose" {
				a.composeDown(cl, cl.args[i+1:])
				return
			}
		}
		pos := positionals(cl.args, set("-H", "--host", "--context", "-c", "--config", "--log-level"))
		if len(pos) == 2 && pos[0] == "system" && pos[1] == "reset" && p == "podman" {
			a.add(CategoryDataLoss, "podman system reset deletes every container, image and volume", cl.src)
			return
		}
		if len(pos) < 2 {
			if len(pos) == 1 && pos[0] == "rm" && (cl.has("--volumes") || cl.shortFlag("v")) {
				a.add(CategoryDataLoss, p+" rm -v deletes containers with their volumes", cl.src)
			}
			return
		}
		switch {
		case pos[1] == "prune" && (pos[0] == "system" || pos[0] == "volume" || pos[0] == "image" || pos[0] == "container" || pos[0] == "builder"):
			a.add(CategoryDataLoss, p+" "+pos[0]+" prune deletes every unused "+pos[0]+" object", cl.src)
		case pos[0] == "volume" && (pos[1] == "rm" || pos[1] == "remove"):
			a.add(CategoryDataLoss, p+" volume rm deletes volumes and the data in them", cl.src)
		case pos[0] == "rm" && (cl.has("--volumes") || cl.shortFlag("v")):
			a.add(CategoryDataLoss, p+" rm -v deletes containers with their volumes", cl.src)
		}
	case "gh":
		pos := positionals(cl.args, set("-R", "--repo", "--hostname"))
		if len(pos) >= 2 && pos[1] == "delete" {
			switch pos[0] {
			case "repo", "release", "gist", "secret", "variable", "cache", "run", "label", "ssh-key", "gpg-key":
				a.add(CategoryCloud, "gh "+pos[0]+" delete deletes it on GitHub", cl.src)
			}
		}
	case "iptables", "ip6tables", "nft":
		if cl.has("-F", "--flush", "flush", "-X", "--delete-chain") {
			a.add(CategorySystem, p+" flushes the firewall rules", cl.src)
		}
	case "python", "python3", "python2", "perl", "ruby", "node", "nodejs", "bun", "deno", "php":
		a.inline(cl)
	}
	if strings.HasPrefix(cl.prog, "python3.") {
		a.inline(cl)
	}
}

// composeDown flags `docker compose down -v`: the project's named volumes, and their
// data, go with the containers.
func (a *analyzer) composeDown(cl call, args []string) {
	down := false
	for _, v := range args {
		if v == "down" {
			down = true
		}
		if down && (v == "--volumes" || v == "-v" || len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsRune(v[1:], 'v')) {
			a.add(CategoryDataLoss, "compose down -v deletes the project's volumes and the data in them", cl.src)
			return
		}
	}
}

// ansible follows an ad-hoc command (`ansible HOSTS -a CMD`, module command, shell or
// raw): it runs on every host the pattern names.
func (a *analyzer) ansible(cl call) {
	module, argsText := "command", ""
	for i := 0; i+1 < len(cl.args); i++ {
		switch v := cl.args[i]; v {
		case "-m", "--module-name":
			module = cl.args[i+1]
		case "-a", "--args":
			argsText = cl.args[i+1]
		}
	}
	if argsText == "" {
		return
	}
	a.safe = false
	switch strings.TrimPrefix(strings.TrimPrefix(module, "ansible.builtin."), "ansible.legacy.") {
	case "command", "shell", "raw":
		a.nested(argsText, cl.src, 0)
	}
}

var (
	// inlineTree matches library calls that delete a directory tree.
	inlineTree = lazyre.New(`shutil\.rmtree|rmtree\s*\(|FileUtils\.(rm_r|rm_rf|remove_dir|remove_entry)|\brm_rf\b|remove_tree|\.(rmSync|rmdirSync|rm|rmdir|promises\.rm)\s*\([^)]*recursive\s*:\s*true|Deno\.remove\s*\([^)]*recursive|rimraf|File::Path|rmtree`)
	// inlineShell captures a literal command string an interpreter hands to a shell.
	inlineShell = lazyre.New(`(?:os\.system|os\.popen|subprocess\.(?:run|call|check_call|check_output|Popen)|system|exec|execSync|spawnSync|shell_exec|passthru|\x60)\s*\(?\s*(?:r|b)?("([^"\\]|\\.)*"|'([^'\\]|\\.)*')`)
)

// inlineCode returns the program text of `python -c CODE`, `perl -e CODE`, `node -e
// CODE` and the like.
func inlineCode(cl call) (string, bool) {
	for i, v := range cl.args {
		switch v {
		case "-c", "-e", "-E", "--eval", "-p", "--print", "-r":
			if i+1 < len(cl.args) {
				return cl.args[i+1], true
			}
		}
		if strings.HasPrefix(v, "--eval=") {
			return strings.TrimPrefix(v, "--eval="), true
		}
		if !strings.HasPrefix(v, "-") {
			return "", false // a script file
		}
	}
	return "", false
}

// inline checks an interpreter's one-liner: a tree deletion, and the shell commands it
// runs (analysed as nested commands).
func (a *analyzer) inline(cl call) {
	code, ok := inlineCode(cl)
	if !ok {
		return
	}
	a.safe = false
	if inlineTree().MatchString(code) {
		a.add(CategoryDataLoss, cl.prog+" deletes a directory tree", cl.src)
	}
	for _, m := range inlineShell().FindAllStringSubmatch(code, 8) {
		lit := m[1]
		script := unquoteInline(lit)
		if script != "" {
			a.nested(script, cl.src, 0)
		}
	}
}

var inlineEscapes = lazyre.New(`\\(.)`)

// unquoteInline strips a string literal's quotes and backslash escapes.
func unquoteInline(lit string) string {
	if len(lit) < 2 {
		return ""
	}
	return inlineEscapes().ReplaceAllString(lit[1:len(lit)-1], "$1")
}
