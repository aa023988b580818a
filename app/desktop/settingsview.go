package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/permission"
)

// The Settings page's façade: it reads the effective configuration with its layers
// (ConfigView), and edits config.toml through app/config's editor, which keeps the
// person's comments and layout. After a write the core reloads the file at once, so the
// window sees the new value through config.changed (the file watcher would too, a
// moment later).

// valueKind is the type a settable key takes.
type valueKind int

const (
	kindChoice valueKind = iota
	kindBool
	kindList
	kindInt
	kindText
	// kindNetwork is network_access: false, "allowlist" or true.
	kindNetwork
	// kindDomains is a list of [network] rules (checked by Parse with the proxy's parser).
	kindDomains
)

// editable are the keys the window may set, with their type. Others (hooks, the
// reviewer's command, the API listener) are edited in the file by hand.
var editable = map[string]valueKind{
	// profile: config.toml refuses a name that is not a profile, naming the known ones.
	"profile":                                kindText,
	"sandbox_mode":                           kindChoice,
	"approval_policy":                        kindChoice,
	"approvals_reviewer":                     kindChoice,
	"execution_mode":                         kindChoice,
	"sandbox_workspace_write.writable_roots": kindList,
	"sandbox_workspace_write.network_access": kindNetwork,
	"network.allowed_domains":                kindDomains,
	"network.denied_domains":                 kindDomains,
	"network.ask_unknown":                    kindBool,
	"network.allow_local":                    kindBool,
	"isolation.backend":                      kindChoice,
	"isolation.protected":                    kindList,
	"workspace.roots":                        kindList,
	"ops.strict":                             kindBool,
	"dispatch.concurrency":                   kindInt,
	"dispatch.log_max_age":                   kindText,
	"dispatch.log_max_total":                 kindText,
	"dispatch.run_log_cap":                   kindText,
}

// SetSetting writes key = value into config.toml (value: text, on/off, a whole number
// or a list of text, as the key takes) and returns the configuration now in force. It
// refuses a key the window does not edit, a value of the wrong type or one config.toml
// would reject (nothing is written then), and a file changed on disk since Airlock last
// read it ("config.toml changed on disk; reload and try again"). A flag or environment
// variable that sets the key still wins: the returned view says so with its layer.
func (f *Facade) SetSetting(key string, value any) (api.ConfigView, error) {
	kind, ok := editable[key]
	if !ok {
		return api.ConfigView{}, fmt.Errorf("%s cannot be changed from the window; edit config.toml", key)
	}
	v, err := coerce(key, kind, value)
	if err != nil {
		return api.ConfigView{}, err
	}
	return f.editConfig([]string{key}, config.Set(v, strings.Split(key, ".")...))
}

// ResetSetting removes key from config.toml, so its default applies (unless a flag or
// an environment variable sets it), and returns the configuration now in force.
func (f *Facade) ResetSetting(key string) (api.ConfigView, error) {
	if _, ok := editable[key]; !ok {
		return api.ConfigView{}, fmt.Errorf("%s cannot be changed from the window; edit config.toml", key)
	}
	return f.editConfig([]string{key}, config.Unset(strings.Split(key, ".")...))
}

// Profiles lists the built-in profiles and config.toml's [profiles.NAME], with the one
// config.toml chose (choose one with SetSetting("profile", NAME), none with
// ResetSetting("profile")).
func (f *Facade) Profiles() (api.ProfileList, error) {
	if f.core == nil || f.core.Config == nil {
		return api.ProfileList{}, errNoCore
	}
	return f.core.Profiles(), nil
}

// SetTier sets a tool's tier (P0, P1 or P2) in [permission.tiers]; an empty tier
// removes the line, so the default tier applies again.
func (f *Facade) SetTier(tool, tier string) (api.PermissionsView, error) {
	tool = strings.TrimSpace(tool)
	if tool == "" {
		return api.PermissionsView{}, errors.New("name the tool whose tier to set (for example bash)")
	}
	edit := config.Unset("permission", "tiers", tool)
	if tier != "" {
		if _, ok := permission.ParseTier(tier); !ok {
			return api.PermissionsView{}, fmt.Errorf("tier %q: use P0 (silent), P1 (asks once) or P2 (asks every time)", tier)
		}
		edit = config.Set(tier, "permission", "tiers", tool)
	}
	if _, err := f.editConfig([]string{"permission.tiers." + tool}, edit); err != nil {
		return api.PermissionsView{}, err
	}
	return f.PermissionsView()
}

// AddRule appends a [[permission.rules]] entry: it comes last, so among allow and ask
// rules it wins (any deny still wins over every allow).
func (f *Facade) AddRule(tool, pattern, action string) (api.PermissionsView, error) {
	tool, pattern = strings.TrimSpace(tool), strings.TrimSpace(pattern)
	if tool == "" {
		return api.PermissionsView{}, errors.New("a rule needs the tool it applies to (for example bash)")
	}
	if action != "allow" && action != "ask" && action != "deny" {
		return api.PermissionsView{}, fmt.Errorf("action %q: choose allow, ask or deny", action)
	}
	fields := []config.Field{{Key: "tool", Value: tool}}
	if pattern != "" {
		fields = append(fields, config.Field{Key: "pattern", Value: pattern})
	}
	fields = append(fields, config.Field{Key: "action", Value: action})
	if _, err := f.editConfig([]string{"permission.rules"}, config.AppendTable(fields, "permission", "rules")); err != nil {
		return api.PermissionsView{}, err
	}
	return f.PermissionsView()
}

// RemoveRule removes the index-th (from 0) [[permission.rules]] entry of config.toml, as
// api.PermissionsView lists them. tool and pattern must match that entry, so a rule that
// moved meanwhile is never removed by mistake.
func (f *Facade) RemoveRule(index int, tool, pattern string) (api.PermissionsView, error) {
	rules := f.core.Config.State().File.Permission.Rules
	if index < 0 || index >= len(rules) || rules[index].Tool != tool || rules[index].Pattern != pattern {
		return api.PermissionsView{}, config.ErrChangedOnDisk
	}
	if _, err := f.editConfig([]string{"permission.rules"}, config.RemoveTable(index, "permission", "rules")); err != nil {
		return api.PermissionsView{}, err
	}
	return f.PermissionsView()
}

// editMu makes the window's edits one at a time: each reads the file after the previous
// one was written and reloaded, so two quick clicks are never taken for a change made
// by someone else.
var editMu sync.Mutex

// editConfig applies edits to config.toml, refusing when the file no longer says what
// the core has loaded (the window shows the loaded configuration), then reloads it.
func (f *Facade) editConfig(keys []string, edits ...config.Edit) (api.ConfigView, error) {
	if f.core == nil || f.core.Config == nil {
		return api.ConfigView{}, errNoCore
	}
	editMu.Lock()
	defer editMu.Unlock()
	st := f.core.Config.State()
	base, err := config.ReadSnapshot(st.Path)
	if err != nil {
		return api.ConfigView{}, err
	}
	if st.Error == nil {
		var onDisk config.File
		if base.Exists {
			onDisk, err = config.Parse(st.Path, base.Data)
		}
		inForce := st.File
		if waiting, _, ok := f.core.Config.PendingFile(); ok {
			inForce = waiting // the file as read; its looser keys wait for the person
		}
		if err != nil || !reflect.DeepEqual(onDisk, inForce) || base.Exists != st.Exists {
			// Saved by someone else since the core read it: the window is about to
			// receive the new values; the person decides again on those.
			return api.ConfigView{}, config.ErrChangedOnDisk
		}
	}
	if _, err := config.WriteEdited(st.Path, base, edits...); err != nil {
		return api.ConfigView{}, err
	}
	// The person set these keys in the window: they take effect even where they
	// loosen (anything else the file loosens still waits).
	f.core.Config.ReloadBy(keys...)
	return f.core.ConfigView(), nil
}

// coerce turns a value from the window (JSON: string, bool, number, list) into what
// key takes, with a sentence when it is the wrong kind.
func coerce(key string, kind valueKind, v any) (any, error) {
	switch kind {
	case kindChoice, kindText:
		s, ok := v.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("%s takes a word, not %v", key, v)
		}
		return strings.TrimSpace(s), nil
	case kindNetwork:
		// The window sends true/false (as the checkbox did) or a choice's name.
		if b, ok := v.(bool); ok {
			return b, nil
		}
		if s, ok := v.(string); ok {
			switch n := api.NetworkAccess(s); n {
			case api.NetworkOff, api.NetworkAllowlist, api.NetworkOn:
				return config.NetworkSetting(n), nil
			}
		}
		return nil, fmt.Errorf("%s is on or off or \"allowlist\", not %v", key, v)
	case kindDomains:
		items, err := textList(key, v, "domains")
		if err != nil {
			return nil, err
		}
		out := []string{}
		for _, s := range items {
			if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out, nil
	case kindBool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%s is on or off, not %v", key, v)
		}
		return b, nil
	case kindInt:
		switch n := v.(type) {
		case float64:
			if n != math.Trunc(n) {
				return nil, fmt.Errorf("%s takes a whole number, not %v", key, n)
			}
			return int(n), nil
		case int:
			return n, nil
		}
		return nil, fmt.Errorf("%s takes a whole number, not %v", key, v)
	case kindList:
		items, err := textList(key, v, "paths")
		if err != nil {
			return nil, err
		}
		out := []string{}
		seen := map[string]bool{}
		for _, s := range items {
			s = strings.TrimSpace(s)
			if s == "" || seen[s] {
				continue
			}
			if key != "isolation.protected" && !filepath.IsAbs(s) && s != "~" && !strings.HasPrefix(s, "~/") {
				return nil, fmt.Errorf("%s: %q is not a full path; write it from / or ~/", key, s)
			}
			seen[s] = true
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: unknown kind", key)
}

// api.PermissionsView reads the permission settings in force and the remembered grants.
// The window re-reads it on config.changed and permission.decided.
func (f *Facade) PermissionsView() (api.PermissionsView, error) {
	if f.core == nil || f.core.Broker == nil {
		return api.PermissionsView{}, errNoCore
	}
	eff := f.core.Broker.Settings()
	v := api.PermissionsView{
		ApprovalPolicy: string(eff.ApprovalPolicy), ApprovalPolicyFrom: eff.ApprovalPolicyFrom,
		Reviewer: string(eff.Reviewer), ReviewerFrom: eff.ReviewerFrom, ReviewerCommand: nonNil(eff.ReviewerCommand),
		OpsStrict: eff.OpsStrict, OpsStrictFrom: eff.OpsStrictFrom,
		Tiers: tierRows(eff), Rules: []api.RuleRow{}, Grants: []api.GrantRecord{}, Ignored: nonNil(eff.IgnoredFromProjects),
	}
	pctx, pcancel := context.WithTimeout(context.Background(), statusTimeout)
	v.Projects = f.core.ProjectLayers(pctx)
	pcancel()
	if v.Projects == nil {
		v.Projects = []app.ProjectLayer{}
	}
	for _, p := range v.Projects {
		v.Ignored = append(v.Ignored, p.Ignored...)
	}
	for i, r := range f.core.Config.State().File.Permission.Rules {
		v.Rules = append(v.Rules, api.RuleRow{Index: i, Tool: r.Tool, Pattern: r.Pattern, Action: r.Action})
	}
	grants, err := f.core.Grants(app.WindowCaller())
	if err != nil {
		v.GrantsError = err.Error()
	} else {
		v.Grants = grants
	}
	return v, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// tierRows lists every default tool and every configured one, sorted by tier then name.
func tierRows(eff permission.Effective) []api.TierRow {
	defaults := permission.DefaultTiers()
	table := permission.NewTierTable(eff.Tiers)
	tools := map[string]bool{}
	for t := range defaults {
		tools[t] = true
	}
	for t := range eff.Tiers {
		tools[t] = true
	}
	rows := make([]api.TierRow, 0, len(tools))
	for t := range tools {
		from := eff.TiersFrom[t]
		if from == "" {
			from = "default"
		}
		rows = append(rows, api.TierRow{Tool: t, Tier: string(table.For(t, "")), Default: string(defaults[t]), From: from,
			Fixed: t == permission.ToolOpsApply || t == permission.ToolOpsApprove, Warning: policy.ShellTierWarning(t, string(table.For(t, "")))})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Tier != rows[j].Tier {
			return rows[i].Tier < rows[j].Tier
		}
		return rows[i].Tool < rows[j].Tool
	})
	return rows
}

// RevokeGrant revokes a remembered allow: the next identical request asks again. It
// returns the permissions view without it.
func (f *Facade) RevokeGrant(id string) (api.PermissionsView, error) {
	if f.core == nil || f.core.Broker == nil {
		return api.PermissionsView{}, errNoCore
	}
	if _, err := f.core.RevokeGrant(app.WindowCaller(), id); err != nil {
		return api.PermissionsView{}, err
	}
	return f.PermissionsView()
}

// api.HooksView reads Airlock's hooks from the configuration in force and looks for
// Airlock in the coding agents' configuration files under the home directory.
func (f *Facade) HooksView() api.HooksView {
	v := api.HooksView{Hooks: []api.HookRow{}}
	if f.core != nil && f.core.Config != nil {
		file := f.core.Config.State().File
		for _, h := range file.Hooks.BeforeToolUse {
			v.Hooks = append(v.Hooks, api.HookRow{When: "before_tool_use", Command: nonNil(h.Command), Tools: nonNil(h.Tools), Timeout: h.Timeout})
		}
		for _, h := range file.Hooks.AfterToolUse {
			v.Hooks = append(v.Hooks, api.HookRow{When: "after_tool_use", Command: nonNil(h.Command), Tools: nonNil(h.Tools), Timeout: h.Timeout})
		}
	}
	home, _ := os.UserHomeDir()
	v.Agents = agentHooks(home)
	return v
}

// claudeHookSnippet is the PreToolUse entry `airlock hook claude --help` documents.
const claudeHookSnippet = `{"hooks": {"PreToolUse": [{"matcher": "Bash|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS|WebFetch|WebSearch|mcp__.*",
  "hooks": [{"type": "command", "command": "airlock hook claude", "timeout": 60}]}]}}`

// agentHooks looks for Airlock in the agents' configuration files under home.
func agentHooks(home string) []api.AgentHook {
	claudeSettings := filepath.Join(home, ".claude", "settings.json")
	claudeJSON := filepath.Join(home, ".claude.json")
	codexConfig := filepath.Join(home, ".codex", "config.toml")
	out := []api.AgentHook{
		{Agent: "Claude Code", Kind: "hook", File: claudeSettings,
			Meaning: "Every tool call Claude Code makes on this machine asks Airlock first (tiers, rules, grants, your popup). Claude Code itself is not sandboxed by this.",
			Install: "Add to " + claudeSettings + ":\n" + claudeHookSnippet},
		{Agent: "Claude Code", Kind: "mcp", File: claudeJSON,
			Meaning: "Claude Code can use Airlock's governed tools (bash runs in Airlock's sandbox).",
			Install: "claude mcp add airlock -- airlock mcp"},
		{Agent: "Codex", Kind: "mcp", File: codexConfig,
			Meaning: "Codex can use Airlock's governed tools (bash runs in Airlock's sandbox).",
			Install: "Add to " + codexConfig + ":\n[mcp_servers.airlock]\ncommand = \"airlock\"\nargs = [\"mcp\"]"},
	}
	out[0].Installed, out[0].Detail = claudeHookInstalled(claudeSettings)
	out[1].Installed, out[1].Detail = claudeMCPInstalled(claudeJSON)
	out[2].Installed, out[2].Detail = codexMCPInstalled(codexConfig)
	return out
}

// readAgentFile reads a small agent configuration file; found is false when it is absent.
func readAgentFile(path string) (data []byte, found bool, detail string) {
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, "no " + filepath.Base(path) + " yet"
	}
	if err == nil && info.Size() > 16<<20 {
		return nil, true, "too large to read"
	}
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, true, "cannot read it: " + err.Error()
	}
	return data, true, ""
}

func claudeHookInstalled(path string) (bool, string) {
	data, found, detail := readAgentFile(path)
	if data == nil {
		return false, detail
	}
	_ = found
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return false, "not valid JSON: " + err.Error()
	}
	for _, m := range s.Hooks["PreToolUse"] {
		for _, h := range m.Hooks {
			if strings.Contains(h.Command, "airlock hook claude") {
				matcher := m.Matcher
				if matcher == "" {
					matcher = "every tool"
				}
				return true, fmt.Sprintf("PreToolUse runs %q for %s", h.Command, matcher)
			}
		}
	}
	return false, "no PreToolUse hook runs airlock hook claude"
}

// mcpServer is one MCP server entry of an agent's configuration file.
type mcpServer struct {
	Command string   `json:"command" toml:"command"`
	Args    []string `json:"args" toml:"args"`
}

func claudeMCPInstalled(path string) (bool, string) {
	return mcpInstalled(path, func(data []byte) (map[string]mcpServer, error) {
		var s struct {
			MCPServers map[string]mcpServer `json:"mcpServers"` // Claude Code's key
		}
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		return s.MCPServers, nil
	}, "MCP server %q runs %s", "no MCP server runs airlock mcp (user scope)")
}

func codexMCPInstalled(path string) (bool, string) {
	return mcpInstalled(path, func(data []byte) (map[string]mcpServer, error) {
		var s struct {
			MCPServers map[string]mcpServer `toml:"mcp_servers"`
		}
		if err := toml.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("not valid TOML: %w", err)
		}
		return s.MCPServers, nil
	}, "[mcp_servers.%s] runs %s", "no [mcp_servers] entry runs airlock mcp")
}

// mcpInstalled reads an agent's configuration file with decode and says whether one of
// its MCP servers runs airlock mcp: found names the entry and its command line.
func mcpInstalled(path string, decode func([]byte) (map[string]mcpServer, error), found, missing string) (bool, string) {
	data, _, detail := readAgentFile(path)
	if data == nil {
		return false, detail
	}
	servers, err := decode(data)
	if err != nil {
		return false, err.Error()
	}
	for name, srv := range servers {
		if isAirlockMCP(srv.Command, srv.Args) {
			return true, fmt.Sprintf(found, name, strings.Join(append([]string{srv.Command}, srv.Args...), " "))
		}
	}
	return false, missing
}

func isAirlockMCP(command string, args []string) bool {
	base := filepath.Base(command)
	return (base == "airlock" || base == "airlock-agent") && len(args) > 0 && args[0] == "mcp"
}

// textList is a list setting's value from the window (a JSON array arrives as []any):
// its items, each text; what names the items in the error ("paths", "domains").
func textList(key string, v any, what string) ([]string, error) {
	switch l := v.(type) {
	case []string:
		return l, nil
	case []any:
		items := make([]string, 0, len(l))
		for _, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%s is a list of %s; %v is not text", key, what, x)
			}
			items = append(items, s)
		}
		return items, nil
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("%s is a list, not %v", key, v)
}
