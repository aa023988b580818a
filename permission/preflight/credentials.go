package preflight

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/airlock-app/airlock/internal/realpath"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// Credential reads. The sandbox hides the credential paths of sandbox.CredentialPaths
// from every run but full-access; a command that runs on the host (a coding agent's own
// shell through its hook, or a full-access run) reads them like any file, and what it
// prints goes to the model. Such a read is P2 whatever tool does it: the person sees it
// every time, and no "always" is offered.
//
// The rules, in short:
//   - Any argument (or `name=value`, `@file` part of one) or input redirection that names
//     a credential path makes the command a read, unless the program only handles names
//     or metadata (echo, ls, stat, chmod, …) or uses a key without showing it (ssh -i,
//     ssh-keygen, curl --cert). A listing shows no secret, so `ls ~/.ssh` stays P1.
//   - Public files stay quiet: ~/.ssh/*.pub, known_hosts, authorized_keys, config.
//   - Recursive readers (tar c, cp -r, rsync, zip -r, grep -r, scp -r) of a directory
//     that holds credentials (~, ~/.config, /home, /) read them too.
//   - Globs and {a,b} alternatives match when they could name a credential path.
//   - Commands that print a stored credential without any path (gh auth token, aws
//     configure get …secret…, gcloud auth print-access-token, kubectl config view --raw,
//     git credential fill, pass show, gpg --export-secret-keys) are reads too.

// credentialWhat names what each credential path holds, for the finding's reason.
// TestCredentialWhatCoversTheSandbox keeps it in step with sandbox.CredentialPaths.
var credentialWhat = map[string]string{
	".ssh":                               "SSH keys",
	".gnupg":                             "GPG private keys",
	".aws":                               "AWS credentials",
	".azure":                             "Azure credentials",
	".config/gcloud":                     "Google Cloud credentials",
	".kube":                              "Kubernetes credentials",
	".docker/config.json":                "container registry logins",
	".netrc":                             "login passwords",
	".git-credentials":                   "git passwords and tokens",
	".config/gh":                         "the GitHub CLI's token",
	".password-store":                    "the password store",
	".local/share/keyrings":              "the keyring",
	".pki":                               "certificates and their private keys",
	".mozilla":                           "the Firefox profile (saved passwords, cookies)",
	".config/google-chrome":              "the Chrome profile (saved passwords, cookies)",
	".config/chromium":                   "the Chromium profile (saved passwords, cookies)",
	".npmrc":                             "the npm token",
	".pypirc":                            "the PyPI token",
	".vault-token":                       "the Vault token",
	".terraform.d/credentials.tfrc.json": "Terraform Cloud tokens",
	".cargo/credentials.toml":            "the crates.io token",
	".config/op":                         "the 1Password CLI's sessions",
	".gem/credentials":                   "the RubyGems key",
}

// credentialRels are the credential paths relative to the home directory, split into
// components (from the sandbox's list, so both always hide and flag the same paths).
var credentialRels = func() [][]string {
	const fakeHome = "/h"
	var out [][]string
	for _, p := range sandbox.CredentialPaths(fakeHome) {
		out = append(out, strings.Split(strings.TrimPrefix(p, fakeHome+"/"), "/"))
	}
	return out
}()

// publicSSH are the files under ~/.ssh that hold nothing secret.
var publicSSH = set("known_hosts", "known_hosts.old", "authorized_keys", "authorized_keys2", "config")

// namesOnly are programs that handle a credential path's name or metadata, or use a key
// without showing it: naming a credential path to them reads nothing out.
var namesOnly = set("echo", "printf", "ls", "dir", "vdir", "stat", "file", "test", "[", "[[", "realpath",
	"readlink", "dirname", "basename", "cd", "pushd", "popd", "mkdir", "touch", "chmod", "chown", "chgrp",
	"du", "df", "tree", "exa", "eza", "lsd", "wc", "ssh", "ssh-add", "ssh-keygen", "ssh-copy-id", "rm",
	"rmdir", "unlink", "shred", "type", "which", "command", "true", "false", "getfacl", "setfacl",
	"lsattr", "chattr", "namei", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "sum",
	"export", "unset", "local", "declare", "readonly", "sleep", "kill", "find")

// keyUse are the flags whose value a program uses as a key, certificate or credential
// file without printing it (ssh's -i through scp, curl's client certificate).
var keyUse = map[string]map[string]bool{
	"scp":     set("-i", "-F"),
	"sftp":    set("-i", "-F"),
	"sshfs":   set("-F"),
	"curl":    set("--cert", "-E", "--key", "--cacert", "--capath", "--netrc-file", "--proxy-cert", "--proxy-key"),
	"wget":    set("--certificate", "--private-key", "--ca-certificate"),
	"kubectl": set("--kubeconfig"),
	"helm":    set("--kubeconfig"),
	"k9s":     set("--kubeconfig"),
}

// passCommands are pass's subcommands that do not print a password (any other first
// word is the name of one to show).
var passCommands = set("ls", "list", "find", "search", "grep", "insert", "add", "generate", "edit", "rm", "remove",
	"delete", "mv", "rename", "cp", "copy", "init", "git", "help", "version", "otp")

// credentialInput flags an input redirection from a credential path (< ~/.ssh/id_rsa,
// also on a compound command or in $(< …)).
func (a *analyzer) credentialInput(c shellcmd.Command) {
	for _, r := range c.Redirects {
		if r.Op == "<" || r.Op == "<>" {
			if what, ok := a.credentialTarget(text(r.Target), false); ok {
				a.add(CategoryCredentialRead, "reads "+what, c.Source)
			}
		}
	}
}

// credentialRead flags a simple command that reads a credential path or prints a stored
// credential. Wrappers were already seen through: cl is the command that runs.
func (a *analyzer) credentialRead(cl call) {
	c := cl.cmd
	if slices.Contains(c.Wrappers, "xargs") && !namesOnly[cl.prog] && a.xargsReads == "" {
		a.xargsReads = c.Source
	}
	if r, ok := printsCredential(cl); ok {
		a.add(CategoryCredentialRead, r, c.Source)
		return
	}
	if a.fileOptionRead(cl) {
		return
	}
	if cl.prog == "find" {
		a.findCredentials(cl)
		return
	}
	if runsCommandString(cl) {
		return // the command it runs is classified on its own
	}
	if namesOnly[cl.prog] {
		if a.namedCredential == "" {
			for _, arg := range cl.args {
				if _, ok := a.credentialNamed(arg, false); ok {
					a.namedCredential = c.Source
					break
				}
			}
		}
		return
	}
	recursive := recursiveReader(cl)
	skip := keyUse[cl.prog]
	for i := 0; i < len(cl.args); i++ {
		arg := cl.args[i]
		if skip[arg] {
			i++
			continue
		}
		if name, _, ok := strings.Cut(arg, "="); ok && skip[name] {
			continue
		}
		for _, cand := range candidates(arg) {
			if what, ok := a.credentialTarget(cand, recursive); ok {
				a.add(CategoryCredentialRead, "reads "+what, c.Source)
				return
			}
		}
	}
}

// findCredentials flags find over a credential directory when it runs a command on
// what it finds (find ~/.ssh -exec cat {} +); listing the names is not a read.
func (a *analyzer) findCredentials(cl call) {
	argv := findExec(cl.args)
	reads := false
	next := true
	for _, w := range argv {
		if next && !namesOnly[path.Base(w)] {
			reads = true
		}
		next = w == ";"
	}
	for _, arg := range cl.args {
		if strings.HasPrefix(arg, "-") || arg == "!" || arg == "(" {
			break // the start points come first
		}
		if what, ok := a.credentialTarget(arg, reads); ok {
			if reads {
				a.add(CategoryCredentialRead, "reads "+what, cl.src)
			} else if a.namedCredential == "" {
				a.namedCredential = cl.src
			}
			return
		}
	}
}

// credentialPipe flags credential paths named by one command and read by xargs in
// another (find ~/.ssh -type f | xargs cat, echo ~/.aws/credentials | xargs cat).
func (a *analyzer) credentialPipe(src string) {
	if a.namedCredential != "" && a.xargsReads != "" {
		a.add(CategoryCredentialRead, "reads, through xargs, the credential files that `"+a.namedCredential+"` names", src)
	}
}

// runsCommandString reports whether a command's arguments are a command line that is
// parsed and classified on its own (sh -c, eval, su -c, watch, ssh HOST CMD, …).
func runsCommandString(cl call) bool {
	if cl.prog == "eval" {
		return true
	}
	if shellProgram(cl.prog) {
		return cl.shortFlag("c")
	}
	_, _, ok := innerString(cl)
	return ok
}

// candidates are the parts of an argument that may be a path: the argument itself, and
// what follows "=" (if=FILE, --file=FILE), "@" (curl -d @FILE) or ":" (KEY:FILE).
// Only parts that start like a path count, and at most maxCandidates of them: the
// arguments are the agent's, and must not make the check quadratic.
func candidates(arg string) []string {
	if len(arg) > maxPathLen {
		return nil // longer than any path the system opens
	}
	out := []string{arg}
	if len(arg) > 2 && arg[0] == '-' && arg[1] != '-' {
		// An attached value: -f$HOME/.ssh/id_rsa, -xf~/.netrc (fileOptions knows the
		// letters of the programs it lists; any other program gets the first path-like tail).
		if i := strings.IndexAny(arg[2:], "~/$."); i >= 0 {
			out = append(out, arg[2+i:])
		}
	}
	for i := 1; i < len(arg) && len(out) < maxCandidates; i++ {
		switch arg[i-1] {
		case '=', '@':
			// --file=FILE, if=FILE, @FILE: any value without spaces may be a path, relative
			// ones included.
			if !strings.ContainsAny(arg[i:], " \t\n") {
				out = append(out, arg[i:])
			}
		case ':', ',':
			if strings.IndexByte("~/$.", arg[i]) >= 0 && !strings.ContainsAny(arg[i:], " \t\n") { // a path, not a command line
				out = append(out, arg[i:])
			}
		}
	}
	return out
}

const (
	maxPathLen    = 4096 // PATH_MAX
	maxCandidates = 8
	maxBraces     = 8 // more {…} groups than a person writes for a path: not expanded
)

// recursiveReader reports whether a command reads whole directory trees: archivers,
// copies and searches with their recursive flags.
func recursiveReader(cl call) bool {
	switch cl.prog {
	case "tar", "bsdtar", "gtar":
		if len(cl.args) == 0 {
			return false
		}
		first := cl.args[0]
		return cl.has("--create", "--append", "-c", "-r", "-u") || !strings.HasPrefix(first, "-") && strings.ContainsAny(first, "cru") ||
			strings.HasPrefix(first, "-") && !strings.HasPrefix(first, "--") && strings.ContainsAny(first[1:], "cru")
	case "zip", "cp", "scp", "grep", "egrep", "fgrep":
		return cl.shortFlag("rRa") || cl.has("--recursive", "--archive", "--recurse-paths", "--dereference-recursive") || cl.hasPrefix("--directories=recurse", "--recursive=")
	case "rsync", "7z", "7za", "rclone", "restic", "borg", "duplicity", "ag", "ack":
		return true
	case "rg":
		return cl.has("--hidden", "-.", "-uu", "-uuu") || cl.shortFlag("u")
	}
	return false
}

// credentialTarget reports whether a path names a credential path (for a recursive
// reader, also a directory that holds one), and says which, as "SSH keys (~/.ssh/id_rsa)".
func (a *analyzer) credentialTarget(t string, recursive bool) (string, bool) {
	if t == "" || len(t) > maxPathLen {
		return "", false
	}
	if what, ok := a.credentialNamed(t, recursive); ok {
		return what, true
	}
	alts := expandBraces(t, 16)
	// The same path as the kernel resolves it, symbolic links on disk followed (a link
	// in the workspace to ~/.ssh, `..` after a link, a working directory reached
	// through one).
	for _, alt := range alts {
		abs := a.absolute(alt)
		if abs == "" || strings.ContainsAny(abs, "*?[") {
			continue
		}
		if a.fsResolves++; a.fsResolves > maxFSResolves {
			a.tooComplex(fmt.Sprintf("it names more than %d paths to resolve", maxFSResolves), t)
			return "", false
		}
		real, _, err := realpath.Resolve(abs, realpath.Options{})
		if err != nil {
			continue
		}
		if what, ok := a.credentialPath(real, recursive); ok {
			return what + ", through a symbolic link", true
		}
	}
	return "", false
}

// credentialNamed is credentialTarget by the path's text alone (what a program that
// only handles names is given: nothing on disk is looked at).
func (a *analyzer) credentialNamed(t string, recursive bool) (string, bool) {
	if t == "" || len(t) > maxPathLen {
		return "", false
	}
	for _, alt := range expandBraces(t, 16) {
		if what, ok := a.credentialPath(alt, recursive); ok {
			return what, true
		}
	}
	return "", false
}

// maxFSResolves bounds the paths one analysis resolves on disk.
const maxFSResolves = 4096

// absolute is t as an absolute path on this machine, the kernel's links of /proc and
// /dev followed ("" when its base is not known).
func (a *analyzer) absolute(t string) string {
	switch {
	case t == "~" || strings.HasPrefix(t, "~/"):
		if a.opts.Home == "" {
			return ""
		}
		t = a.opts.Home + t[1:]
	case strings.HasPrefix(t, "$HOME") || strings.HasPrefix(t, "${HOME}"):
		if a.opts.Home == "" {
			return ""
		}
		t = a.opts.Home + strings.TrimPrefix(strings.TrimPrefix(t, "${HOME}"), "$HOME")
	case strings.HasPrefix(t, "~") || strings.HasPrefix(t, "$"):
		return ""
	case !strings.HasPrefix(t, "/"):
		here := a.realCwd()
		if here == "" {
			return ""
		}
		t = here + "/" + t
	}
	if strings.Contains(t, "/proc/") || strings.Contains(t, "/dev/") {
		resolved, _, known := a.procPath(t)
		if !known || !strings.HasPrefix(resolved, "/") {
			return ""
		}
		t = resolved
	}
	return t
}

// realCwd is currentCwd without symbolic links (what /proc/self/cwd shows), "" when
// unknown.
func (a *analyzer) realCwd() string {
	cwd := a.currentCwd()
	switch {
	case strings.HasPrefix(cwd, "~") || strings.HasPrefix(cwd, "$HOME"):
		if a.opts.Home == "" {
			return ""
		}
		cwd = a.opts.Home + strings.TrimPrefix(strings.TrimPrefix(cwd, "~"), "$HOME")
	case !strings.HasPrefix(cwd, "/"):
		return ""
	}
	if a.realCwdOf != cwd {
		// After `cd a` the walk starts from where the last directory resolved to.
		p, opt := cwd, realpath.Options{}
		if rest, ok := strings.CutPrefix(cwd, a.realCwdOf+"/"); ok && a.realCwdOf != "" && !strings.Contains(rest, "..") {
			p, opt.Base = a.realCwdIs+"/"+rest, a.realCwdIs
		}
		a.realCwdOf, a.realCwdIs = cwd, cwd
		if r, _, err := realpath.Resolve(p, opt); err == nil {
			a.realCwdIs = r
		}
	}
	return a.realCwdIs
}

func (a *analyzer) credentialPath(t string, recursive bool) (string, bool) {
	rel, shown, ok := a.homeRel(t)
	if !ok {
		if recursive && a.holdsHomes(t) {
			return "every home directory's credentials (" + t + ")", true
		}
		return "", false
	}
	parts := []string{}
	if rel != "" {
		parts = strings.Split(rel, "/")
	}
	for _, cred := range credentialRels {
		n := min(len(parts), len(cred))
		match, glob := true, false
		for i := 0; i < n; i++ {
			if m, g := componentMatch(parts[i], cred[i]); !m {
				match = false
				break
			} else if g {
				glob = true
			}
		}
		if !match {
			continue
		}
		name := strings.Join(cred, "/")
		what := credentialWhat[name]
		if what == "" {
			what = "credentials"
		}
		switch {
		case len(parts) > len(cred):
			if name == ".ssh" && publicName(parts[len(cred):]) {
				continue
			}
		case len(parts) == len(cred):
		case glob && len(parts) > 0:
			// ~/.n* could be ~/.netrc itself, and ~/.config/* ~/.config/gcloud.
		case recursive:
			return "the credentials under " + shown + " (" + what + ", …)", true
		default:
			continue
		}
		return what + " (" + shown + ")", true
	}
	return "", false
}

// publicName reports whether the rest of a path under ~/.ssh names only public files.
func publicName(rest []string) bool {
	if len(rest) != 1 {
		return false
	}
	n := rest[0]
	if strings.HasSuffix(n, ".pub") && !strings.ContainsAny(strings.TrimSuffix(n, ".pub"), "[") {
		return true // *.pub and id_*.pub match public keys only
	}
	return publicSSH[n]
}

// componentMatch matches one path component against one of a credential path,
// reporting whether a glob was involved.
func componentMatch(pat, name string) (match, glob bool) {
	if !strings.ContainsAny(pat, "*?[") {
		return pat == name, false
	}
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pat, ".") {
		return false, true // the shell's globs skip hidden names (cat ~/* reads no ~/.netrc)
	}
	ok, err := path.Match(pat, name)
	return ok || err != nil, true // a malformed pattern is not given the benefit of the doubt
}

// homeRel returns a path's place under a home directory: the person's (~, $HOME,
// ${HOME}, the configured home, or a relative path after `cd ~` or in a working
// directory there) or another user's (~user, /home/user, /root, /Users/user).
func (a *analyzer) homeRel(t string) (rel, shown string, ok bool) {
	if !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "~") && !strings.HasPrefix(t, "$") && a.cwd == "" {
		if here := a.startCwd(); here != "" {
			t = here + "/" + t
		}
	}
	if strings.HasPrefix(t, "/") {
		if strings.Contains(t, "/proc/") || strings.Contains(t, "/dev/") {
			// /proc/self/cwd/../../.ssh/id_rsa: the kernel's links are followed before
			// `..` is applied, as the kernel does.
			resolved, tail, known := a.procPath(t)
			if !known {
				return a.anywhereRel(t, tail)
			}
			t = resolved
		}
		if strings.HasPrefix(t, "/") {
			t = path.Clean(t)
		}
	}
	if r, ok := a.inHome(t); ok {
		return r, shownRel("~", r), true
	}
	if strings.HasPrefix(t, "~") {
		user, r, _ := strings.Cut(t[1:], "/")
		if validName(strings.ReplaceAll(user, "-", "_")) {
			r = strings.TrimPrefix(path.Clean("/"+r), "/")
			return r, shownRel("~"+user, r), true
		}
		return "", "", false
	}
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	for _, base := range []string{"/home/", "/Users/", "/var/home/"} {
		if rest, found := strings.CutPrefix(t, base); found {
			user, r, _ := strings.Cut(rest, "/")
			if user != "" {
				return r, shownRel(base+user, r), true
			}
		}
	}
	if t == "/root" || strings.HasPrefix(t, "/root/") {
		r := strings.TrimPrefix(strings.TrimPrefix(t, "/root"), "/")
		return r, shownRel("/root", r), true
	}
	return "", "", false
}

func shownRel(home, rel string) string {
	if rel == "" {
		return home
	}
	return home + "/" + rel
}

// holdsHomes reports whether a directory contains home directories (/, /home, /Users,
// or a parent of the configured home).
func (a *analyzer) holdsHomes(t string) bool {
	if !strings.HasPrefix(t, "/") {
		return false
	}
	t = path.Clean(t)
	switch t {
	case "/", "/home", "/Users", "/var/home":
		return true
	}
	return a.opts.Home != "" && strings.HasPrefix(a.opts.Home, t+"/")
}

// expandBraces expands {a,b} alternatives (bash brace expansion), up to limit results;
// past the limit the text is returned as it is.
func expandBraces(s string, limit int) []string {
	open := strings.IndexByte(s, '{')
	if open < 0 || strings.Count(s, "{") > maxBraces {
		return []string{s}
	}
	depth, end := 0, -1
	var commas []int
	for i := open; i < len(s) && end < 0; i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				end = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if end < 0 || len(commas) == 0 {
		return []string{s}
	}
	pre, post := s[:open], s[end+1:]
	var out []string
	start := open + 1
	for _, cut := range append(commas, end) {
		for _, tail := range expandBraces(pre+s[start:cut]+post, limit) {
			if len(out) >= limit {
				return append(out, s)
			}
			out = append(out, tail)
		}
		start = cut + 1
	}
	return out
}

// printsCredential reports commands that print a stored credential with no path on the
// command line.
func printsCredential(cl call) (string, bool) {
	sub := positionals(cl.args, nil)
	at := func(i int) string {
		if i < len(sub) {
			return sub[i]
		}
		return ""
	}
	switch cl.prog {
	case "gh":
		if at(0) == "auth" && (at(1) == "token" || at(1) == "status" && cl.has("--show-token", "-t")) {
			return "prints the GitHub CLI's token", true
		}
	case "aws":
		if at(0) == "configure" && (at(1) == "export-credentials" || at(1) == "get" && secretKey(at(2))) {
			return "prints AWS credentials", true
		}
		if at(0) == "ecr" && (at(1) == "get-login-password" || at(1) == "get-authorization-token") {
			return "prints a container registry password", true
		}
	case "gcloud":
		if at(0) == "auth" && (strings.HasPrefix(at(1), "print-") || at(1) == "application-default" && strings.HasPrefix(at(2), "print-")) {
			return "prints a Google Cloud token", true
		}
	case "az":
		if at(0) == "account" && at(1) == "get-access-token" {
			return "prints an Azure token", true
		}
	case "kubectl":
		if at(0) == "config" && at(1) == "view" && cl.has("--raw", "--flatten") {
			return "prints Kubernetes credentials", true
		}
	case "git":
		for i, s := range sub {
			if s == "credential" && i+1 < len(sub) && sub[i+1] == "fill" {
				return "prints a stored git password", true
			}
		}
	case "pass", "gopass":
		if at(0) == "show" || at(0) != "" && !passCommands[at(0)] {
			return "prints a password from the password store", true
		}
	case "secret-tool":
		if at(0) == "lookup" {
			return "prints a password from the keyring", true
		}
	case "security":
		if strings.HasPrefix(at(0), "find-") && strings.HasSuffix(at(0), "-password") && (cl.has("-w", "-g")) {
			return "prints a password from the keychain", true
		}
	case "gpg", "gpg2":
		if cl.has("--export-secret-keys", "--export-secret-subkeys") {
			return "prints GPG private keys", true
		}
	case "op":
		if at(0) == "read" || at(0) == "item" && at(1) == "get" && cl.hasPrefix("--reveal", "--fields") {
			return "prints a 1Password secret", true
		}
	case "vault":
		if at(0) == "print" && at(1) == "token" {
			return "prints the Vault token", true
		}
	}
	return "", false
}

// secretKey reports whether an aws configure key names a secret.
func secretKey(k string) bool {
	k = strings.ToLower(k)
	return strings.Contains(k, "secret") || strings.Contains(k, "session_token") || strings.Contains(k, "access_key")
}

// FileRead classifies a file tool's read of p: read_file, or search_files with a regex
// (which reads the contents of every file under p). Reading a credential path is a
// credential read, and so is searching the contents of a directory that holds one (~,
// ~/.config, /home). Listing names — list_dir, a search by glob only — shows no secret
// and is not classified, as `ls ~/.ssh` is not. cwd resolves a relative path.
func FileRead(p, cwd string, contents, recursive bool, opts Options) []Finding {
	if !contents || p == "" {
		return nil
	}
	a := analyzer{opts: opts}
	if cwd != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "$") {
		p = path.Join(cwd, p)
	}
	verb := "read "
	if recursive {
		verb = "search "
	}
	if what, ok := a.credentialTarget(p, recursive); ok {
		a.add(CategoryCredentialRead, "reads "+what, verb+p)
	}
	return a.findings
}

// startCwd is the directory a relative path is relative to when no absolute cd was seen:
// the request's working directory and the relative cds after it ("" when unknown).
func (a *analyzer) startCwd() string {
	if a.opts.Cwd == "" || a.cwdLost {
		return ""
	}
	if a.relSet {
		return path.Join(a.opts.Cwd, a.rel)
	}
	return a.opts.Cwd
}

// currentCwd is where the command runs, as far as the line shows ("" when unknown).
func (a *analyzer) currentCwd() string {
	if a.cwd != "" {
		return a.cwd
	}
	return a.startCwd()
}

// maxLinks bounds how many of the kernel's links one path may go through.
const maxLinks = 16

// procPath follows the kernel's magic links in an absolute path — /dev/fd, /dev/stdin,
// /proc/self, /proc/<pid>/{cwd,root,fd/N} and their task/<tid> forms — component by
// component, so that `..` after a link goes where the kernel goes. cwd links of this
// shell lead to the command's directory, root links to /, fd links to what the line
// redirected that descriptor from. When a link leads somewhere the line does not show
// (another process's directory, an inherited descriptor), known is false and tail is
// what follows it.
func (a *analyzer) procPath(t string) (resolved string, tail []string, known bool) {
	comps := strings.Split(t, "/")
	var stack []string
	links := 0
	for i := 0; i < len(comps); i++ {
		c := comps[i]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		stack = append(stack, c)
		for {
			base, isLink, ok := a.magicLink(stack)
			if !isLink {
				break
			}
			if links++; links > maxLinks || !ok {
				return "", comps[i+1:], false
			}
			if !strings.HasPrefix(base, "/") {
				// $HOME/x, ~/x: the rest is applied lexically by the home matching.
				return base + "/" + strings.Join(comps[i+1:], "/"), nil, true
			}
			stack = stack[:0]
			for _, b := range strings.Split(base, "/") {
				if b != "" {
					stack = append(stack, b)
				}
			}
		}
	}
	return "/" + strings.Join(stack, "/"), nil, true
}

// magicLink reports whether the path in stack is one of the kernel's links, and where it
// leads (ok false: somewhere the line does not show).
func (a *analyzer) magicLink(stack []string) (base string, isLink, ok bool) {
	n := len(stack)
	switch {
	case n == 2 && stack[0] == "dev" && stack[1] == "fd":
		return "/proc/self/fd", true, true
	case n == 2 && stack[0] == "dev" && (stack[1] == "stdin" || stack[1] == "stdout" || stack[1] == "stderr"):
		return "/proc/self/fd/" + map[string]string{"stdin": "0", "stdout": "1", "stderr": "2"}[stack[1]], true, true
	case n < 3 || stack[0] != "proc":
		return "", false, false
	}
	pid := stack[1]
	self := pid == "self" || pid == "thread-self"
	if !self && !isDigits(pid) {
		return "", false, false
	}
	rest := stack[2:]
	if len(rest) >= 2 && rest[0] == "task" && isDigits(rest[1]) {
		rest = rest[2:] // /proc/self/task/<tid>/cwd is the thread's, the same directory
	}
	switch {
	case len(rest) == 1 && rest[0] == "root":
		return "/", true, true
	case len(rest) == 1 && rest[0] == "cwd":
		if cwd := a.realCwd(); self && cwd != "" {
			return cwd, true, true
		}
		return "", true, false
	case len(rest) == 2 && (rest[0] == "fd" || rest[0] == "map_files"):
		if target, found := a.fds[rest[1]]; self && found {
			return target, true, true
		}
		return "", true, false
	}
	return "", false, false
}

// anywhereRel matches the tail of a path whose base is not known (/proc/1234/cwd/…,
// an inherited descriptor) against the credential paths of any home directory: the base
// may be a home, or any directory below one, so every suffix of the tail is tried.
func (a *analyzer) anywhereRel(t string, tail []string) (rel, shown string, ok bool) {
	var parts []string
	for _, c := range tail {
		if c != "" && c != "." {
			parts = append(parts, c)
		}
	}
	tries := 0
	for i := range parts {
		if parts[i] == ".." || !a.startsCredential(parts[i]) {
			continue
		}
		if tries++; tries > maxTailTries {
			// More places a credential path could start than are tried: the path is
			// built to be expensive, which no reader of a file needs.
			return strings.Join(parts, "/"), t, true
		}
		r := strings.TrimPrefix(path.Clean("/"+strings.Join(parts[i:], "/")), "/")
		if _, matched := a.credentialRelMatch(r); matched {
			return r, t, true
		}
	}
	return "", "", false
}

// maxTailTries bounds the suffixes of one path anywhereRel matches.
const maxTailTries = 32

// startsCredential reports whether a path component may be the first of a credential
// path (.ssh, .config, a glob).
func (a *analyzer) startsCredential(c string) bool {
	for _, cred := range credentialRels {
		if m, _ := componentMatch(c, cred[0]); m {
			return true
		}
	}
	return false
}

// credentialRelMatch reports whether a home-relative path names a credential path.
func (a *analyzer) credentialRelMatch(rel string) (string, bool) {
	b := analyzer{opts: Options{Home: "/"}}
	return b.credentialPath("$HOME/"+rel, false)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
