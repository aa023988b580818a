// Package agenttask builds what one run of an agent task starts: the coding agent's
// command line, its environment and the settings files Airlock writes for that run
// alone (never the user's ~/.claude, ~/.codex or opencode configuration), and the model
// API's host the run's allowlist gains. Each agent is pointed at Airlock: Claude Code's
// tool calls pass its hook (`airlock hook claude`), Codex and opencode get Airlock's
// MCP server (`airlock mcp`) in place of their own shell, and every agent's own
// permission prompts are off, so the only one asked is the person, through Airlock.
//
// It is a leaf of dispatch: it imports only api, and dispatch's runner calls it.
package agenttask

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-app/airlock/api"
)

// ErrInvalid is wrapped by every refusal of an agent spec.
var ErrInvalid = errors.New("invalid agent")

// ErrNoBinary is wrapped when the agent's executable cannot be found at a start.
var ErrNoBinary = errors.New("agent not installed")

// kind is what differs between the agents.
type kind struct {
	// name is the agent's name in words; bin its executable's usual name.
	name, bin string
	// install is how to install it.
	install string
	// apiBase and keySecret are the defaults of AgentSpec.APIBase and APIKeySecret;
	// keyEnv is the variable the agent reads its key from.
	apiBase, keySecret, keyEnv string
}

var kinds = map[string]kind{
	api.AgentClaude: {name: "Claude Code", bin: "claude", install: "npm i -g @anthropic-ai/claude-code",
		apiBase: "https://api.anthropic.com", keySecret: "ANTHROPIC_API_KEY", keyEnv: "ANTHROPIC_API_KEY"},
	api.AgentCodex: {name: "Codex", bin: "codex", install: "npm i -g @openai/codex",
		apiBase: "https://api.openai.com/v1", keySecret: "OPENAI_API_KEY", keyEnv: "OPENAI_API_KEY"},
	api.AgentOpencode: {name: "opencode", bin: "opencode", install: "npm i -g opencode-ai",
		apiBase: "https://api.openai.com/v1", keySecret: "OPENAI_API_KEY", keyEnv: "OPENAI_API_KEY"},
}

// Kinds lists the agent kinds, in the order the window offers them.
func Kinds() []string { return []string{api.AgentClaude, api.AgentCodex, api.AgentOpencode} }

// Name is the agent's name in words ("Claude Code"); the kind itself when unknown.
func Name(k string) string {
	if kd, ok := kinds[k]; ok {
		return kd.name
	}
	return k
}

// Validate checks s and fills in its defaults (the API base and the key's secret name).
// The error names the problem and what to give instead.
func Validate(s *api.AgentSpec) error {
	kd, ok := kinds[s.Kind]
	if !ok {
		return fmt.Errorf("%w: agent %q is not one Airlock can run: use claude, codex or opencode", ErrInvalid, s.Kind)
	}
	if strings.TrimSpace(s.Prompt) == "" {
		return fmt.Errorf("%w: the prompt is empty: give a file with the prompt text (--prompt-file FILE)", ErrInvalid)
	}
	if s.APIBase == "" {
		s.APIBase = kd.apiBase
	}
	u, err := url.Parse(s.APIBase)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" || u.User != nil {
		return fmt.Errorf("%w: API base %q is not an http(s) URL with a host (and no user name): give one like %s", ErrInvalid, s.APIBase, kd.apiBase)
	}
	if s.APIKeySecret == "" {
		s.APIKeySecret = kd.keySecret
	}
	if s.Binary != "" && !filepath.IsAbs(s.Binary) {
		return fmt.Errorf("%w: the agent's executable %q is not an absolute path: give its full path, or none to look %s up in PATH", ErrInvalid, s.Binary, kd.bin)
	}
	return nil
}

// Host is the rule the run's allowlist gains for the model API: its host, with the
// port when the URL names one.
func Host(s api.AgentSpec) (string, error) {
	u, err := url.Parse(s.APIBase)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("%w: API base %q has no host", ErrInvalid, s.APIBase)
	}
	if p := u.Port(); p != "" {
		return net.JoinHostPort(u.Hostname(), p), nil
	}
	return u.Hostname(), nil
}

// Input is what one run of an agent task starts from.
type Input struct {
	Spec  api.AgentSpec
	RunID uint
	// Dir is the run's own directory, where the agent's settings and its home go.
	Dir string
	// Workdir is the workspace the agent works in (the run's working directory), whose
	// instructions file (CLAUDE.md) the agent reads; "" when not known.
	Workdir string
	// Airlock is the path of the airlock executable the agent's hook and MCP server run.
	Airlock string
	// PATH is the run's PATH, where the agent is looked up when Spec.Binary is "".
	PATH string
	// Wait is how long a question may wait for the person (the task's hold deadline):
	// the agent's hook and tool-call timeouts are at least that.
	Wait time.Duration
}

// Plan is what the run starts.
type Plan struct {
	Argv []string
	// Env is added to the run's environment (over the task's own).
	Env map[string]string
	// KeyEnv is the variable the API key goes in, read from the keyring secret
	// Spec.APIKeySecret.
	KeyEnv string
	// Files are written under Input.Dir before the start (name relative to it → content).
	Files map[string]string
	// Host is the model API's allowlist rule.
	Host string
	// Writable are the directories under Input.Dir (relative to it) the agent writes:
	// its home and its own state. The rest — the settings, MCP and opencode
	// configuration Airlock wrote — stays read-only to the run, so the agent cannot
	// rewrite the hooks and permissions that make Airlock decide its calls.
	Writable []string
}

// Prepare builds the plan of one run.
func Prepare(in Input) (Plan, error) {
	s := in.Spec
	if err := Validate(&s); err != nil {
		return Plan{}, err
	}
	kd := kinds[s.Kind]
	bin, err := lookup(s, kd, in.PATH)
	if err != nil {
		return Plan{}, err
	}
	if err := checkVersion(s.Kind, bin); err != nil {
		return Plan{}, err
	}
	if s.Kind == api.AgentOpencode {
		if err := checkOpencodeRepo(in.Workdir); err != nil {
			return Plan{}, err
		}
	}
	host, err := Host(s)
	if err != nil {
		return Plan{}, err
	}
	if in.Airlock == "" {
		return Plan{}, errors.New("the airlock executable the agent's hook and MCP server run was not found beside Airlock's own nor in PATH")
	}
	// How long a call may wait for the person (the task's hold deadline), and the
	// agent's timeout of that call, a minute longer: the agent must not give up first.
	wait := int(max(in.Wait, time.Minute).Seconds())
	timeout := wait + 60
	home := filepath.Join(in.Dir, "home")
	p := Plan{
		Env: map[string]string{
			// The agent finds nothing of the user's: its home is the run's.
			"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
			"XDG_DATA_HOME": filepath.Join(home, ".local", "share"), "XDG_STATE_HOME": filepath.Join(home, ".local", "state"),
			"XDG_CACHE_HOME": filepath.Join(home, ".cache"),
		},
		KeyEnv: kd.keyEnv, Files: map[string]string{"home/.keep": ""}, Host: host, Writable: []string{"home"},
	}
	mcp := map[string]any{"command": in.Airlock, "args": []string{"mcp"}}
	switch s.Kind {
	case api.AgentClaude:
		// The hook's own --wait is the task's hold deadline (its default, 50 s, would
		// answer "ask" to a question the person may still answer at breakfast).
		hook := func(timeout int) []map[string]any {
			return []map[string]any{{"type": "command", "command": api.ShellQuote(in.Airlock) + " hook claude --wait " + strconv.Itoa(wait) + "s", "timeout": timeout}}
		}
		settings := map[string]any{
			"hooks": map[string]any{
				// Every tool, Airlock's MCP tools included: the hook asks Airlock, which
				// may wait for the person as long as the task's hold deadline.
				"PreToolUse": []map[string]any{{"matcher": "*", "hooks": hook(timeout)}},
				// What ran, and what failed, goes to the audit beside the decision.
				"PostToolUse":        []map[string]any{{"matcher": "*", "hooks": hook(60)}},
				"PostToolUseFailure": []map[string]any{{"matcher": "*", "hooks": hook(60)}},
			},
			// Claude's own prompts are off: nobody is there to answer them, and Airlock
			// (through the hook, which still blocks what it denies) decides.
			"permissions":                       map[string]any{"defaultMode": "bypassPermissions"},
			"skipDangerousModePermissionPrompt": true,
			// Said here, where it outranks the settings of the (writable) config dir.
			"disableAllHooks": false,
		}
		p.Files["claude-settings.json"] = jsonText(settings)
		p.Files["mcp.json"] = jsonText(map[string]any{"mcpServers": map[string]any{"airlock": mcp}})
		p.Files["claude/.keep"] = ""
		p.Writable = append(p.Writable, "claude")
		// --setting-sources "": none of the settings files Claude Code would find on its
		// own — the user's (the run's config dir, which the agent writes), the project's
		// and the local .claude/settings*.json of the workspace, which a repository
		// carries and which could add hooks of its own, allow tools or turn hooks off.
		// Only --settings (the run's) is loaded; CLAUDE.md is still read, as text.
		p.Argv = []string{bin, "-p", "--setting-sources", "", "--settings", filepath.Join(in.Dir, "claude-settings.json"),
			"--mcp-config", filepath.Join(in.Dir, "mcp.json"), "--strict-mcp-config",
			"--permission-mode", "bypassPermissions", "--output-format", "stream-json", "--verbose"}
		if s.Model != "" {
			p.Argv = append(p.Argv, "--model", s.Model)
		}
		if in.Workdir != "" {
			// The workspace's CLAUDE.md, which the project source off no longer loads, is
			// read as an additional directory's: instructions, not settings.
			p.Argv = append(p.Argv, "--add-dir", in.Workdir)
			p.Env["CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD"] = "1"
		}
		p.Argv = append(p.Argv, "--", s.Prompt)
		p.Env["CLAUDE_CONFIG_DIR"] = filepath.Join(in.Dir, "claude")
		p.Env["ANTHROPIC_BASE_URL"] = s.APIBase
		p.Env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
		p.Env["DISABLE_AUTOUPDATER"] = "1"
		p.Env["MCP_TOOL_TIMEOUT"] = strconv.Itoa(timeout * 1000) // Airlock's tools may wait for the person
		// Claude refuses bypassPermissions as root outside a sandbox it knows of; this is one.
		p.Env["IS_SANDBOX"] = "1"
	case api.AgentCodex:
		p.Files["codex/.keep"] = ""
		p.Writable = append(p.Writable, "codex")
		c := func(k, v string) []string { return []string{"-c", k + "=" + v} }
		p.Argv = []string{bin, "exec", "--skip-git-repo-check"}
		if s.Model != "" {
			p.Argv = append(p.Argv, "-m", s.Model)
		}
		for _, kv := range [][]string{
			c("model_provider", tomlString("airlock")),
			c("model_providers.airlock.name", tomlString("Airlock task "+strconv.FormatUint(uint64(in.RunID), 10))),
			c("model_providers.airlock.base_url", tomlString(s.APIBase)),
			c("model_providers.airlock.env_key", tomlString(kd.keyEnv)),
			c("model_providers.airlock.wire_api", tomlString("responses")),
			// Codex asks nobody: Airlock decides each call, its MCP tools by themselves
			// and the one tool of Codex's own no setting removes — apply_patch, which its
			// default models offer (inside code mode's exec too) — through the hook
			// below, file by file. Codex's own sandbox is off: it cannot nest in the
			// run's, which is what confines the patches the person allowed.
			c("approval_policy", tomlString("never")),
			c("sandbox_mode", tomlString("danger-full-access")),
			c("features.hooks", "true"),
			// Codex runs a call whose hook failed or timed out: the hook's own --wait,
			// the task's hold deadline, ends a minute before Codex's timeout, and the
			// hook denies what is unanswered by then.
			c("hooks.PreToolUse", `[{matcher = "^apply_patch$", hooks = [{type = "command", command = `+
				tomlString(api.ShellQuote(in.Airlock)+" hook codex --wait "+strconv.Itoa(wait)+"s")+`, timeout = `+strconv.Itoa(timeout)+`}]}]`),
			// Its own shell off, so every command goes through Airlock's bash tool.
			c("features.shell_tool", "false"),
			c("features.unified_exec", "false"),
			// Every other tool of its own that reads, fetches or runs something off: the
			// image viewer (reads any file), web search, image generation, apps, the
			// browser and computer use, goals, the clock's sleep, questions to a user
			// nobody is there to answer.
			c("features.view_image", "false"),
			{"-c", `web_search="disabled"`}, // Codex's key, not Airlock's tool of that name
			c("features.image_generation", "false"),
			c("features.apps", "false"),
			c("features.browser_use", "false"),
			c("features.computer_use", "false"),
			c("features.in_app_browser", "false"),
			c("features.tool_suggest", "false"),
			c("features.goals", "false"),
			c("features.sleep_tool", "false"),
			c("tools.experimental_request_user_input.enabled", "false"),
			// Nothing but the model API: no plugin sync, no analytics (github.com,
			// chatgpt.com at start, refused by the allowlist or asked about).
			c("features.plugins", "false"),
			c("analytics.enabled", "false"),
			c("mcp_servers.airlock.command", tomlString(in.Airlock)),
			c("mcp_servers.airlock.args", `["mcp"]`),
			// Codex passes an MCP server only these: the ask-only channel, and the run's
			// egress proxy, without which Airlock's bash has no allowed host either.
			c("mcp_servers.airlock.env_vars", `["AIRLOCK_ASK_SOCKET", "AIRLOCK_SANDBOX_NETWORK", "AIRLOCK_HOME", "XDG_RUNTIME_DIR", "HOME", `+
				`"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"]`),
			c("mcp_servers.airlock.default_tools_approval_mode", tomlString("approve")),
			c("mcp_servers.airlock.tool_timeout_sec", strconv.Itoa(timeout)),
		} {
			p.Argv = append(p.Argv, kv...)
		}
		// The run's hook is trusted without Codex's review, which would otherwise keep
		// it from running: the only hooks enabled are the run's own (a repository's
		// project configuration is an untrusted, disabled layer, plugins are off).
		p.Argv = append(p.Argv, "--dangerously-bypass-hook-trust", "--", s.Prompt)
		p.Env["CODEX_HOME"] = filepath.Join(in.Dir, "codex")
	case api.AgentOpencode:
		openai := map[string]any{"options": map[string]any{"baseURL": s.APIBase, "apiKey": "{env:" + kd.keyEnv + "}"}}
		cfg := map[string]any{
			"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
			"provider": map[string]any{"openai": openai},
			// Its own prompts off, and every tool of its own denied (denied tools are not
			// offered to the model): Airlock's MCP tools take their place, and Airlock
			// decides each call. The last rule that matches wins, and "*" sorts first.
			"permission": map[string]any{"*": "deny", "airlock_*": "allow"},
			"mcp": map[string]any{"airlock": map[string]any{
				"type": "local", "command": []string{in.Airlock, "mcp"}, "enabled": true, "timeout": timeout * 1000}},
		}
		if in.Workdir != "" {
			// The workspace's instructions, which the project configuration off no longer
			// reads: as text, read by opencode inside the sandbox.
			cfg["instructions"] = []string{filepath.Join(in.Workdir, "AGENTS.md")}
		}
		p.Argv = []string{bin, "run"}
		if s.Model != "" {
			model := "openai/" + s.Model
			// Declared, so that a model opencode's catalogue lacks (a compatible server's)
			// is one it runs; the session's title is asked of it too, not of a model the
			// API base may not serve.
			openai["models"] = map[string]any{s.Model: map[string]any{}}
			cfg["model"], cfg["small_model"] = model, model
			p.Argv = append(p.Argv, "--model", model)
		}
		p.Files["opencode.json"] = jsonText(cfg)
		// opencode installs its plugin package from registry.npmjs.org into its
		// configuration directory at each start, unless that directory's node_modules
		// and lock already name it (opencode 1.18): the run needs no plugin, and its
		// allowlist names no registry.
		p.Files["home/.config/opencode/node_modules/.keep"] = ""
		p.Files["home/.config/opencode/package-lock.json"] = jsonText(map[string]any{
			"packages": map[string]any{"": map[string]any{"dependencies": map[string]any{"@opencode-ai/plugin": "*"}}}})
		p.Env["OPENCODE_CONFIG"] = filepath.Join(in.Dir, "opencode.json")
		// A workspace's own opencode.json (the repository's, or one an earlier run wrote)
		// would be merged over the run's and could give opencode its tools back.
		p.Env["OPENCODE_DISABLE_PROJECT_CONFIG"] = "1"
		// No external plugin (of the run's configuration directories). The workspace's
		// own, which neither switch keeps out in opencode 1.18, are refused before the
		// start (checkOpencodeRepo).
		p.Env["OPENCODE_PURE"] = "1"
		// Nothing but the model API: no update check, no models.dev catalogue, no
		// language-server downloads, no default plugins, no sharing.
		p.Env["OPENCODE_DISABLE_AUTOUPDATE"] = "1"
		p.Env["OPENCODE_DISABLE_MODELS_FETCH"] = "1"
		p.Env["OPENCODE_DISABLE_LSP_DOWNLOAD"] = "1"
		p.Env["OPENCODE_DISABLE_DEFAULT_PLUGINS"] = "1"
		p.Env["OPENCODE_DISABLE_SHARE"] = "1"
		p.Argv = append(p.Argv, "--", s.Prompt)
	}
	return p, nil
}

// Write makes dir anew (private to the user) and writes the plan's files in it.
// Whatever was there goes first, and nothing is written through a link: an earlier run
// with the same id (a database started afresh) had that directory writable, and may
// have left a claude-settings.json that points at the user's ~/.bashrc.
func (p Plan) Write(dir string) error {
	if err := os.RemoveAll(dir); err != nil { // a link itself is removed, not followed
		return fmt.Errorf("the agent's run directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("the agent's run directory: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("the agent's run directory: %w", err)
	}
	names := make([]string, 0, len(p.Files))
	for name := range p.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		path := filepath.Join(dir, name)
		// Inside the directory just made, nothing is there but what this loop makes.
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("the agent's run directory: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return fmt.Errorf("the agent's settings: %w", err)
		}
		_, werr := f.WriteString(p.Files[name])
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("the agent's settings %s: %w", name, err)
		}
	}
	return nil
}

// Describe is the plan's command line for the run's log, the prompt shortened.
func (p Plan) Describe() string {
	argv := append([]string(nil), p.Argv...)
	if n := len(argv); n > 0 {
		if pr := argv[n-1]; len(pr) > 60 {
			argv[n-1] = pr[:57] + "..."
		}
	}
	return api.ShellJoin(argv)
}

// lookup finds the agent's executable: Spec.Binary, else its name in PATH.
func lookup(s api.AgentSpec, kd kind, path string) (string, error) {
	if s.Binary != "" {
		if st, err := os.Stat(s.Binary); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: %s (%s) is not an executable file: install it with `%s`, or give another path with --agent-bin", ErrNoBinary, s.Binary, kd.name, kd.install)
		}
		return s.Binary, nil
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		f := filepath.Join(d, kd.bin)
		if st, err := os.Stat(f); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w: %s (%s) is not in the run's PATH (%s): install it with `%s`, or give its path with `airlock task edit NAME --agent-bin PATH`", ErrNoBinary, kd.bin, kd.name, path, kd.install)
}

func jsonText(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // maps of strings, numbers and booleans always marshal
	}
	return string(b) + "\n"
}

// tomlString quotes s as a TOML basic string (what Codex's -c parses).
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
