// Package vmrisk says which shell commands are high-risk enough for the micro-VM under
// execution_mode = "auto" (preflight findings, package installs, a downloaded script
// piped into an interpreter, programs from the workspace). It links no database, so
// `airlock exec`, the MCP server of airlock-agent and the dispatcher's executor share
// the one answer.
package vmrisk

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlock-app/airlock/permission/preflight"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// packageManagers maps a program to the subcommands that install packages (nil: any use).
// A package install fetches code and runs its install scripts, and writes caches outside
// the workspace: it belongs in the micro-VM.
var packageManagers = map[string][]string{
	// system
	"apt": {"install", "reinstall", "upgrade", "full-upgrade", "dist-upgrade", "build-dep", "satisfy"}, "apt-get": {"install", "reinstall", "upgrade", "dist-upgrade", "build-dep", "satisfy"},
	"aptitude": {"install", "reinstall", "upgrade", "safe-upgrade", "full-upgrade"}, "dnf": {"install", "reinstall", "upgrade", "update", "groupinstall", "localinstall"}, "yum": {"install", "reinstall", "update", "upgrade", "groupinstall", "localinstall"},
	"zypper": {"install", "in", "update", "up", "dist-upgrade", "dup"}, "pacman": {"-S", "-Sy", "-Syu", "-Syyu", "-Su", "-U", "--sync", "--upgrade"},
	"yay": {"-S", "-Sy", "-Syu", "-U"}, "paru": {"-S", "-Sy", "-Syu", "-U"}, "apk": {"add", "upgrade"}, "emerge": nil, "xbps-install": nil,
	"port": {"install", "upgrade"}, "pkg": {"install", "upgrade"}, "snap": {"install", "refresh"}, "flatpak": {"install", "update"},
	"dpkg": {"-i", "--install"}, "rpm": {"-i", "-U", "--install", "--upgrade"}, "nix-env": {"-i", "--install", "-u", "--upgrade"},
	"nix-shell": nil, "nix": {"profile", "run", "shell", "develop"}, "brew": {"install", "reinstall", "upgrade", "bundle"},
	// Python
	"pip": {"install"}, "pipx": {"install", "run", "upgrade", "inject"}, "uv": {"pip", "tool", "add", "sync"}, "uvx": nil,
	"poetry": {"add", "install", "update"}, "pdm": {"add", "install", "sync", "update"}, "pipenv": {"install", "sync", "update"}, "rye": {"add", "install", "sync"},
	"conda": {"install", "create", "update"}, "mamba": {"install", "create", "update"}, "micromamba": {"install", "create", "update"},
	// JavaScript
	"npm":  {"install", "i", "ci", "add", "exec", "x", "create", "update", "up", "upgrade", "rebuild", "install-test", "it", "install-ci-test", "cit"},
	"pnpm": {"install", "i", "add", "dlx", "create", "update", "up", "upgrade", "rebuild"}, "yarn": {"install", "add", "dlx", "create", "up", "upgrade", "global"},
	"bun": {"install", "i", "add", "x", "create", "update", "upgrade"}, "npx": nil, "bunx": nil, "pnpx": nil, "deno": {"install", "add"},
	// other languages
	"gem": {"install", "update"}, "bundle": {"install", "update", "add"}, "bundler": {"install", "update", "add"},
	"cargo": {"install", "binstall"}, "go": {"install", "get"}, "composer": {"install", "require", "global", "update"},
	"dotnet": {"tool", "add", "restore", "workload"}, "cpan": nil, "cpanm": nil, "luarocks": {"install"}, "opam": {"install", "upgrade"},
	"cabal": {"install", "v2-install"}, "stack": {"install"}, "rustup": {"install", "toolchain", "component", "target", "update"},
	"mise": {"install", "use"}, "asdf": {"install"}, "volta": {"install"}, "corepack": {"install", "prepare", "enable"},
}

// interpreters read a script from stdin when given no script argument: the shells
// (shellcmd.IsShell) and these.
var interpreters = map[string]bool{"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true}

func interpreter(prog string) bool {
	return shellcmd.IsShell(prog) || interpreters[prog]
}

var downloaders = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true}

// Reason says why a command is high-risk for the auto execution mode (so it runs in the
// micro-VM), or "" when it may run on the host: a preflight finding (the P2 classifier:
// destructive, system, data loss, cloud mutation, or a command that cannot be analysed),
// a package install (any ecosystem's), code fetched and run in one go (`curl … | sh`,
// `curl -o x.sh … && sh x.sh`, `go run mod@version`, `deno run https://…`), a command run
// through sudo/doas, or a program run from inside the workspace (not an installed, known
// binary).
func Reason(cmdline, workspace, home string) string {
	a := preflight.Analyze(cmdline, preflight.Options{Home: home})
	if len(a.Findings) > 0 {
		f := a.Findings[0]
		return "preflight: " + f.Reason + Quoted(f.Command)
	}
	script, err := shellcmd.Parse(cmdline)
	if err != nil {
		return "the command cannot be analysed: " + err.Error()
	}
	download, pipedTo := "", ""
	fetched := map[string]bool{} // files a downloader wrote earlier in the command line
	for _, c := range script.Commands {
		prog := versionless(c.Program())
		if prog == "" {
			continue
		}
		args, _ := c.Values(1)
		if subs, ok := packageManagers[prog]; ok && installs(subs, args) || installsToo(prog, args) {
			return "package install" + Quoted(c.Source)
		}
		if prog == "python" && (len(args) >= 3 && args[0] == "-m" && (args[1] == "pip" || args[1] == "pipx") && args[2] == "install" ||
			len(args) >= 2 && filepath.Base(args[0]) == "setup.py" && (args[1] == "install" || args[1] == "develop")) {
			return "package install" + Quoted(c.Source)
		}
		if prog == "uv" && len(args) >= 1 && args[0] == "run" && slices.ContainsFunc(args, func(a string) bool { return a == "--with" || strings.HasPrefix(a, "--with=") }) {
			return "package install" + Quoted(c.Source)
		}
		if f := ranFile(prog, c.Args); f != "" && fetched[filepath.Clean(f)] {
			return "runs a downloaded script" + Quoted(c.Source)
		}
		if why := remoteCode(prog, args); why != "" {
			return why + Quoted(c.Source)
		}
		if slices.Contains(c.Wrappers, "sudo") || slices.Contains(c.Wrappers, "doas") || prog == "su" || prog == "pkexec" {
			return "runs as another user (root unless told otherwise)" + Quoted(c.Source)
		}
		if downloaders[prog] {
			if download == "" {
				download = c.Source
			}
			for _, f := range downloadedFiles(prog, args) {
				fetched[filepath.Clean(f)] = true
			}
		}
		if interpreter(prog) && readsStdin(args) && pipedTo == "" {
			pipedTo = c.Source
		}
		if c.Args[0].Literal && strings.Contains(c.Args[0].Value, "/") && inWorkspace(c.Args[0].Value, workspace) {
			return "runs a program from the workspace" + Quoted(c.Source)
		}
	}
	if download != "" && pipedTo != "" {
		return "runs a downloaded script" + Quoted(download+" | "+pipedTo)
	}
	return ""
}

// installs reports whether args start a package install for a manager whose installing
// subcommands are subs (nil: every use installs something).
func installs(subs, args []string) bool {
	if subs == nil {
		return true
	}
	for _, a := range args {
		if slices.Contains(subs, a) {
			return true
		}
		if !strings.HasPrefix(a, "-") {
			return false // the first subcommand is not an install
		}
	}
	return false
}

// versionless is a program name without the version some installs append
// (pip3 and pip3.11 → pip, python3.12 → python).
func versionless(prog string) string {
	for _, base := range []string{"python", "pip"} {
		if rest, ok := strings.CutPrefix(prog, base); ok && strings.Trim(rest, "0123456789.") == "" {
			return base
		}
	}
	return prog
}

// installsToo covers installs the subcommand table cannot say: a bare `yarn` (installs the
// project's dependencies), `npm init NAME` (runs the create-NAME package), `make install`.
func installsToo(prog string, args []string) bool {
	switch prog {
	case "yarn":
		return len(args) == 0
	case "npm", "pnpm", "bun":
		return len(args) >= 2 && args[0] == "init" && !strings.HasPrefix(args[1], "-")
	case "make", "gmake":
		return slices.Contains(args, "install")
	}
	return false
}

// remoteCode says why a command fetches code and runs it (`go run mod@version`,
// `deno run https://…`), or "".
func remoteCode(prog string, args []string) string {
	switch prog {
	case "go":
		if len(args) >= 2 && args[0] == "run" && slices.ContainsFunc(args[1:], func(a string) bool { return !strings.HasPrefix(a, "-") && strings.Contains(a, "@") }) {
			return "runs a downloaded program"
		}
	case "deno", "bun":
		// deno runs a remote module under any subcommand; bun only under run and x.
		remote := slices.ContainsFunc(args, func(a string) bool {
			return strings.HasPrefix(a, "https://") || strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "npm:") || strings.HasPrefix(a, "jsr:")
		})
		if remote && (prog == "deno" && !strings.HasPrefix(args[0], "-") || args[0] == "run" || args[0] == "x") {
			return "runs a downloaded program"
		}
	}
	return ""
}

// downloadedFiles are the files curl or wget writes: -o/--output FILE, -O (the URL's last
// part), wget's default (the URL's last part).
func downloadedFiles(prog string, args []string) []string {
	var files, urls []string
	named := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (prog == "curl" && (a == "-o" || a == "--output")) || (prog == "wget" && (a == "-O" || a == "--output-document")):
			if i+1 < len(args) && args[i+1] != "-" {
				files = append(files, args[i+1])
			}
			named = true
			i++
		case strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") || strings.HasPrefix(a, "ftp://"):
			urls = append(urls, a)
		}
	}
	curlRemote := prog == "curl" && (slices.Contains(args, "-O") || slices.Contains(args, "--remote-name"))
	if prog == "wget" && !named || curlRemote {
		for _, u := range urls {
			if base := filepath.Base(strings.SplitN(u, "?", 2)[0]); base != "" && base != "/" && base != "." {
				files = append(files, base)
			}
		}
	}
	return files
}

// ranFile is the file a command runs: its program when given as a path, or the script
// an interpreter (or source/.) is given.
func ranFile(prog string, words []shellcmd.Word) string {
	if len(words) == 0 || !words[0].Literal {
		return ""
	}
	if strings.Contains(words[0].Value, "/") && !interpreter(prog) {
		return words[0].Value
	}
	if interpreter(prog) || prog == "source" || prog == "." {
		for _, w := range words[1:] {
			if !w.Literal {
				return ""
			}
			if !strings.HasPrefix(w.Value, "-") {
				return w.Value
			}
		}
	}
	return ""
}

// readsStdin reports whether an interpreter's arguments leave the script to stdin.
func readsStdin(args []string) bool {
	for _, a := range args {
		if a == "-" || a == "-s" {
			return true
		}
		if !strings.HasPrefix(a, "-") {
			return false
		}
	}
	return true
}

// inWorkspace reports whether a program path (relative to the workspace or absolute)
// lies inside the workspace.
func inWorkspace(prog, workspace string) bool {
	if workspace == "" {
		return false
	}
	p := prog
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	rel, err := filepath.Rel(workspace, filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(os.PathSeparator))
}

// Quoted is s in backquotes after a space, cut at 80 characters ("" when s is blank).
func Quoted(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 80 {
		s = s[:77] + "…"
	}
	return " `" + s + "`"
}
