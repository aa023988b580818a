package preflight

import (
	"path"
	"strings"
)

// startupFiles are files in the home directory that something outside any sandbox runs
// or obeys later: the shells' start-up files, SSH's authorized keys and client config
// (ProxyCommand), the desktop's autostart and the user's systemd units. An agent that
// writes one has planted code that runs unconfined at the next login.
var startupFiles = set(".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
	".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".xprofile",
	".xinitrc", ".xsession", ".xsessionrc", ".pam_environment", ".config/fish/config.fish",
	".ssh/authorized_keys", ".ssh/authorized_keys2", ".ssh/config", ".ssh/rc", ".gitconfig", ".config/git/config")

// startupDirs hold such files; anything written under them counts.
var startupDirs = []string{".config/autostart/", ".config/systemd/user/", ".config/fish/conf.d/", ".local/share/systemd/user/", "Library/LaunchAgents/"}

// startupFile reports whether a write target is one of the home directory's start-up
// files, and names it as ~/…
func (a *analyzer) startupFile(t string) (string, bool) {
	rel, ok := a.inHome(t)
	if !ok || rel == "" {
		return "", false
	}
	if startupFiles[rel] {
		return "~/" + rel, true
	}
	for _, d := range startupDirs {
		if strings.HasPrefix(rel+"/", d) {
			return "~/" + rel, true
		}
	}
	return "", false
}

// inHome returns a path's place relative to the home directory ("" for the home itself).
// Relative paths count only when an earlier `cd` of the line moved home.
func (a *analyzer) inHome(t string) (string, bool) {
	s := strings.ReplaceAll(t, "${HOME}", "$HOME")
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		s = "$HOME" + s[1:]
	case a.opts.Home != "" && (s == a.opts.Home || strings.HasPrefix(s, a.opts.Home+"/")):
		s = "$HOME" + s[len(a.opts.Home):]
	case !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "$") && !strings.HasPrefix(s, "~") && a.cwd != "":
		if here, ok := a.inHome(a.cwd); ok {
			return strings.TrimPrefix(path.Clean("/"+here+"/"+s), "/"), true
		}
		return "", false
	}
	if s != "$HOME" && !strings.HasPrefix(s, "$HOME/") {
		return "", false
	}
	return strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(s, "$HOME")), "/"), true
}

// persistence flags commands that write a start-up file (by their write targets) and
// `crontab FILE`, which replaces the user's whole crontab with what the agent wrote.
func (a *analyzer) persistence(cl call) {
	switch p := cl.prog; p {
	case "crontab":
		if cl.has("-l", "-e", "-r", "--remove", "--help", "-V") || cl.shortFlag("lre") {
			return
		}
		if pos := positionals(cl.args, set("-u")); len(pos) > 0 {
			a.add(CategoryPersistence, "crontab "+pos[0]+" replaces every scheduled job of the user with commands that run outside any sandbox", cl.src)
		}
	case "sed", "perl", "ruby":
		if !cl.hasPrefix("-i", "--in-place") {
			return
		}
		for _, t := range cl.args {
			a.plantedIn(p+" -i", t, cl.src)
		}
	}
	for _, t := range writtenOperands(cl) {
		a.plantedIn(cl.prog, t, cl.src)
	}
}

// gitCommandKeys are git settings whose value git runs as a command (or that pull in
// other settings): setting one plants code that the person's next git command runs,
// outside any sandbox.
var gitCommandKeys = []string{"core.hookspath", "core.sshcommand", "core.pager", "core.editor", "core.fsmonitor",
	"core.askpass", "credential.helper", "include.path", "includeif.", "gpg.program", "gpg.ssh.program",
	"gpg.x509.program", "sequence.editor", "filter.", "diff.", "merge.", "pager.", "alias.", "uploadpack.packobjectshook"}

// gitConfig flags `git config KEY VALUE` (args: what follows "config") for a key that
// names a command.
func (a *analyzer) gitConfig(args call, src string) {
	if args.has("--get", "--get-all", "--get-regexp", "--list", "-l", "--unset", "--unset-all", "--remove-section",
		"--rename-section", "--show-origin", "--edit", "-e", "get", "list", "unset", "edit") {
		return
	}
	pos := positionals(args.args, set("--file", "-f", "--blob", "--type", "--default", "--comment", "--value"))
	if len(pos) > 0 && pos[0] == "set" {
		pos = pos[1:]
	}
	if len(pos) < 2 {
		return // reading a key
	}
	key := strings.ToLower(pos[0])
	for _, k := range gitCommandKeys {
		if key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(key, k) && runsCommand(k, key) {
			a.add(CategoryPersistence, "git config "+pos[0]+" sets a command that the person's next git command runs, outside any sandbox", src)
			return
		}
	}
}

// runsCommand says whether a key under a section prefix is the part that names a command
// (diff.NAME.textconv, not diff.renames).
func runsCommand(section, key string) bool {
	switch section {
	case "diff.", "merge.", "filter.":
		for _, s := range []string{".command", ".textconv", ".driver", ".clean", ".smudge", ".process"} {
			if strings.HasSuffix(key, s) {
				return true
			}
		}
		return false
	case "alias.":
		return true // an alias may start with ! and is a command the person types later
	}
	return true
}

// plantedIn adds a finding when target is a start-up file.
func (a *analyzer) plantedIn(who, target, src string) {
	if f, ok := a.startupFile(target); ok {
		what := "writes " + f + ", a start-up file obeyed outside any sandbox (at the next login, shell or SSH connection)"
		if who != "" {
			what = who + " " + what
		}
		a.add(CategoryPersistence, what, src)
	}
}

// FileWrite classifies a file tool's write (write_file, edit_file) to path, as a shell
// redirection to it would be: Airlock's own files and the agent's hook settings
// (self-approval), start-up files in the home directory (persistence) and critical
// system files. cwd resolves a relative path ("" leaves relative paths unchecked, except
// for names that are the same wherever they are).
func FileWrite(p, cwd string, opts Options) []Finding {
	if opts.Cwd == "" {
		opts.Cwd = cwd
	}
	a := analyzer{opts: opts}
	if cwd != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "$") {
		p = path.Join(cwd, p)
	}
	src := "write " + p
	if what, ok := a.airlockPath(p); ok {
		a.add(CategorySelfApproval, "writes "+what, src)
	}
	if f, ok := criticalFile(p); ok {
		a.add(CategorySystem, "overwrites the system file "+f, src)
	}
	a.plantedIn("", p, src)
	return a.findings
}
