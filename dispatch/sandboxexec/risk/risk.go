// Package risk classifies shell commands for the auto execution mode: which ones are
// high-risk enough to run in the micro-VM (preflight findings, package installs, a
// downloaded script piped into an interpreter, programs from the workspace). It links no
// database, so the CLI's MCP server uses it too.
package risk

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlock-app/airlock/permission/preflight"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// packageManagers maps a program to the subcommands that install packages (nil: any use).
var packageManagers = map[string][]string{
	"apt": {"install", "reinstall", "upgrade", "full-upgrade", "dist-upgrade", "build-dep"}, "apt-get": {"install", "reinstall", "upgrade", "dist-upgrade", "build-dep"},
	"aptitude": {"install", "reinstall", "upgrade"}, "dnf": {"install", "reinstall", "upgrade", "groupinstall"}, "yum": {"install", "reinstall", "update", "upgrade", "groupinstall"},
	"zypper": {"install", "in", "update", "up"}, "pacman": {"-S", "-Sy", "-Syu", "-U", "--sync"}, "apk": {"add", "upgrade"},
	"pip": {"install"}, "pip3": {"install"}, "pipx": {"install", "run"}, "uv": {"pip", "tool"}, "poetry": {"add", "install"},
	"npm": {"install", "i", "ci", "add", "exec"}, "pnpm": {"install", "i", "add", "dlx"}, "yarn": {"install", "add", "dlx"}, "bun": {"install", "i", "add", "x"},
	"npx": nil, "bunx": nil, "gem": {"install"}, "cargo": {"install"}, "go": {"install", "get"}, "brew": {"install", "reinstall", "upgrade"},
	"conda": {"install", "create"}, "mamba": {"install", "create"}, "composer": {"install", "require", "global"}, "snap": {"install"},
	"flatpak": {"install"}, "dpkg": {"-i", "--install"}, "rpm": {"-i", "-U", "--install", "--upgrade"}, "nix-env": {"-i", "--install"},
}

// interpreters read a script from stdin when given no script argument.
var interpreters = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true,
	"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true}

var downloaders = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true}

// Reason says why a command is high-risk for the auto execution mode (so it runs in the
// micro-VM), or "" when it may run on the host: a preflight finding (the P2 classifier:
// destructive, system, data loss, cloud mutation, or a command that cannot be analysed),
// a package install, a downloaded script piped into an interpreter (`curl … | sh`), or a
// program run from inside the workspace (not an installed, known binary).
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
	for _, c := range script.Commands {
		prog := c.Program()
		if prog == "" {
			continue
		}
		args, _ := c.Values(1)
		if subs, ok := packageManagers[prog]; ok && installs(subs, args) {
			return "package install" + Quoted(c.Source)
		}
		if strings.HasPrefix(prog, "python") && len(args) >= 3 && args[0] == "-m" && args[1] == "pip" && args[2] == "install" {
			return "package install" + Quoted(c.Source)
		}
		if downloaders[prog] && download == "" {
			download = c.Source
		}
		if interpreters[prog] && readsStdin(args) && pipedTo == "" {
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
