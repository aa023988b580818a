package preflight

import (
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/airlock-app/airlock/internal/realpath"

	"github.com/airlock-app/airlock/sandbox/lazyre"
)

// selfApproval flags commands that would answer Airlock's own questions: its approval,
// authorization, grant, config and secret commands; writes to its configuration,
// database, socket or the keyring; D-Bus calls to its tray or the secret service; and
// synthetic input that could click its popup.
func (a *analyzer) selfApproval(cl call) {
	switch p := cl.prog; {
	case p == "airlock" || p == "airlock-desktop":
		if r, ok := airlockCommand(cl.args); ok {
			a.add(CategorySelfApproval, r, cl.src)
		}
		return
	case fileWriters[p]:
		for _, v := range cl.args {
			v = strings.TrimPrefix(v, "of=")
			if what, ok := a.airlockPath(v); ok {
				a.add(CategorySelfApproval, p+" changes "+what, cl.src)
				return
			}
		}
	case p == "secret-tool":
		if pos := positionals(cl.args, set("--label")); len(pos) > 0 {
			switch pos[0] {
			case "store", "clear":
				a.add(CategorySelfApproval, "secret-tool "+pos[0]+" changes the keyring", cl.src)
				return
			case "lookup", "search":
				if mentions(cl.args, "airlock") {
					a.add(CategorySelfApproval, "secret-tool reads Airlock's secrets from the keyring", cl.src)
					return
				}
			}
		}
	case p == "security":
		if pos := positionals(cl.args, nil); len(pos) > 0 {
			v := pos[0]
			if strings.HasPrefix(v, "add-") || strings.HasPrefix(v, "delete-") || strings.HasPrefix(v, "set-") ||
				(strings.HasPrefix(v, "find-") && mentions(cl.args, "airlock")) {
				a.add(CategorySelfApproval, "security "+v+" touches the keychain", cl.src)
				return
			}
		}
	case p == "keyring":
		if pos := positionals(cl.args, set("-b", "--keyring-backend", "-p", "--keyring-path")); len(pos) > 0 && (pos[0] == "set" || pos[0] == "del" || mentions(pos, "airlock")) {
			a.add(CategorySelfApproval, "keyring "+pos[0]+" touches the keyring", cl.src)
			return
		}
	case p == "dbus-send" || p == "gdbus" || p == "busctl" || p == "qdbus" || p == "dbus-monitor":
		for _, v := range cl.args {
			l := strings.ToLower(v)
			if strings.Contains(l, "secret") || strings.Contains(l, "airlock") || strings.Contains(l, "statusnotifier") ||
				strings.Contains(l, "notifications") || strings.Contains(l, "dbusmenu") {
				a.add(CategorySelfApproval, p+" talks D-Bus to Airlock's tray, notifications or the keyring", cl.src)
				return
			}
		}
	case syntheticInput[p]:
		a.add(CategorySelfApproval, p+" sends synthetic keyboard or mouse input, which could answer Airlock's popup", cl.src)
		return
	case interpreters[p]:
		for _, v := range cl.args {
			if airlockCLIText().MatchString(v) {
				a.add(CategorySelfApproval, p+" runs Airlock's approval commands", cl.src)
				return
			}
			if what, ok := a.airlockPath(v); ok && (strings.Contains(v, "open") || strings.Contains(v, "connect") || strings.Contains(v, "write") || strings.Contains(v, "sqlite")) {
				a.add(CategorySelfApproval, p+" opens "+what, cl.src)
				return
			}
		}
	}
	if p := cl.prog; p != "ls" && p != "stat" && p != "file" && p != "test" && p != "[" {
		for _, v := range cl.args {
			if strings.Contains(v, "airlock.sock") || strings.Contains(v, "airlock.db") && (sqliteTools[p] || p == "curl") {
				what := "local API socket"
				if strings.Contains(v, "airlock.db") {
					what = "database"
				}
				a.add(CategorySelfApproval, p+" talks to Airlock's "+what, cl.src)
				return
			}
		}
	}
}

var fileWriters = set("tee", "cp", "mv", "install", "ln", "rm", "truncate", "dd", "sed", "touch", "chmod",
	"chown", "rsync", "unlink", "shred", "perl", "sqlite3", "litecli", "sqlite-utils", "mkdir", "rmdir", "vi", "vim",
	"nvim", "nano", "emacs", "ed", "ex", "patch", "tar", "unzip", "scp", "curl", "wget", "sponge", "socat", "nc", "ncat", "netcat")

var sqliteTools = set("sqlite3", "litecli", "sqlite-utils", "datasette", "usql")

var syntheticInput = set("xdotool", "ydotool", "wtype", "xte", "xvkbd", "dotool", "osascript", "cliclick")

var interpreters = set("python", "python3", "python2", "perl", "ruby", "node", "nodejs", "php", "lua", "bun", "deno", "tclsh", "pwsh")

var airlockCLIText = lazyre.New(`\bairlock(-desktop)?['",\s]+(approvals|authorize|places|grants|config|secret|ops['",\s]+approve)\b`)

// airlockCommand reports whether airlock's argv runs one of its approval, authorization,
// grant, config or secret commands (reads such as `approvals list` excepted).
func airlockCommand(args []string) (string, bool) {
	pos := positionals(args, set("--socket", "--home", "--config"))
	if len(pos) == 0 {
		return "", false
	}
	for _, v := range args {
		if v == "--help" || v == "-h" {
			return "", false
		}
	}
	verb := ""
	if len(pos) > 1 {
		verb = pos[1]
	}
	readOnly := verb == "list" || verb == "ls" || verb == "show" || verb == "get" || verb == "status" || verb == "help"
	switch pos[0] {
	case "approvals", "grants", "places", "config":
		if readOnly && !(pos[0] == "config" && verb == "get" && mentions(pos, "secret")) {
			return "", false
		}
		return "runs `airlock " + strings.TrimSpace(pos[0]+" "+verb) + "`, which answers or changes Airlock's own permissions", true
	case "authorize", "secret", "secrets":
		return "runs `airlock " + pos[0] + "`, which only the person may run", true
	case "ops":
		if verb == "approve" {
			return "runs `airlock ops approve`, which only the person may run", true
		}
	}
	return "", false
}

func mentions(args []string, s string) bool {
	for _, v := range args {
		if strings.Contains(strings.ToLower(v), s) {
			return true
		}
	}
	return false
}

// airlockPath reports whether a path is one of Airlock's own files or directories, or
// the settings that make a coding agent ask Airlock (editing them turns Airlock off for
// it), and names it.
func (a *analyzer) airlockPath(p string) (string, bool) {
	switch {
	case p == "":
		return "", false
	case strings.Contains(p, "airlock.db"):
		return "Airlock's own database", true
	case strings.Contains(p, "airlock.sock"):
		return "Airlock's own local API socket", true
	case strings.Contains(p, "AIRLOCK_HOME"):
		return "Airlock's own home directory (AIRLOCK_HOME)", true
	case strings.Contains(p, ".config/airlock") || strings.Contains(p, "airlock/config.toml") || strings.Contains(p, "XDG_CONFIG_HOME/airlock"):
		return "Airlock's own configuration", true
	case strings.Contains(p, ".local/share/airlock") || strings.Contains(p, "XDG_DATA_HOME/airlock"):
		return "Airlock's own data directory", true
	case strings.Contains(p, "XDG_RUNTIME_DIR/airlock") || strings.HasPrefix(p, "/run/user/") && strings.Contains(p, "/airlock"):
		return "Airlock's own runtime directory", true
	case strings.Contains(p, "keyrings/") || strings.Contains(p, "Library/Keychains"):
		return "Airlock's own keyring", true
	case agentHookSettings(p):
		return "the Claude Code settings that send the agent's tool calls to Airlock (" + path.Base(p) + ")", true
	case agentSettingsDir(p):
		return "the Claude Code settings directory (" + p + "), whose settings send the agent's tool calls to Airlock", true
	}
	if what, ok := a.agentSettingsOnDisk(p); ok {
		return what, true
	}
	if strings.HasPrefix(p, "/") {
		c := path.Clean(p)
		for _, ap := range a.opts.AirlockPaths {
			ap = path.Clean(ap)
			if c == ap || strings.HasPrefix(c, ap+"/") {
				return "Airlock's own files (" + ap + ")", true
			}
		}
	}
	return "", false
}

// agentHookSettings reports whether p is a Claude Code settings file, user, project or
// managed (where `airlock hook claude` is installed).
func agentHookSettings(p string) bool {
	c := path.Clean(p)
	return strings.HasSuffix(c, ".claude/settings.json") || strings.HasSuffix(c, ".claude/settings.local.json") ||
		strings.HasSuffix(c, "claude-code/managed-settings.json")
}

// agentSettingsDir reports whether p names a .claude directory itself: copying,
// moving or linking into it, or replacing it, writes its settings.
func agentSettingsDir(p string) bool {
	c := path.Clean(p)
	return c == ".claude" || strings.HasSuffix(c, "/.claude")
}

// agentSettingsOnDisk resolves p on disk and reports whether it is, or is in, a Claude
// Code settings location under another name: a link to ~/.claude/settings.json, or the
// target of a .claude that is itself a link (.claude -> cfg: cfg/settings.json is the
// project's settings).
func (a *analyzer) agentSettingsOnDisk(p string) (string, bool) {
	abs := a.absolute(p)
	if abs == "" {
		return "", false
	}
	if a.fsResolves++; a.fsResolves > maxFSResolves {
		a.tooComplex(fmt.Sprintf("it names more than %d paths to resolve", maxFSResolves), p)
		return "", false
	}
	real, _, err := realpath.Resolve(abs, realpath.Options{})
	if err != nil {
		return "", false
	}
	const what = "the Claude Code settings that send the agent's tool calls to Airlock ("
	if agentHookSettings(real) || agentSettingsDir(real) {
		return what + p + ", through a symbolic link to " + real + ")", true
	}
	for _, dir := range a.agentDirs() {
		if real == dir || path.Dir(real) == dir && (path.Base(real) == "settings.json" || path.Base(real) == "settings.local.json") {
			return what + p + ", which a linked .claude directory points to)", true
		}
	}
	return "", false
}

// agentDirs are the real directories that .claude links of the home directory and of
// the working directory and its parents point to (computed once per analysis).
func (a *analyzer) agentDirs() []string {
	if a.agentDirsDone {
		return a.agentDirsAre
	}
	a.agentDirsDone = true
	var dirs []string
	if a.opts.Home != "" {
		dirs = append(dirs, a.opts.Home)
	}
	if cwd := a.opts.Cwd; strings.HasPrefix(cwd, "/") {
		for d := path.Clean(cwd); ; d = path.Dir(d) {
			dirs = append(dirs, d)
			if d == "/" || len(dirs) > 64 {
				break
			}
		}
	}
	for _, d := range dirs {
		link := path.Join(d, ".claude")
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			continue
		}
		if real, _, err := realpath.Resolve(link, realpath.Options{}); err == nil {
			a.agentDirsAre = append(a.agentDirsAre, real)
		}
	}
	return a.agentDirsAre
}
