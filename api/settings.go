package api

// The window's Settings tabs (Approvals, Permissions, Hooks): what the façade answers.
// Only the window shows them; they are declared here with the rest of the wire so the
// generated bindings and the Go types are one definition.

// TierRow is one tool's tier as the Permissions tab lists it.
type TierRow struct {
	Tool string `json:"tool"`
	Tier string `json:"tier"`
	// Default is the tier the tool has when config.toml says nothing ("" for a tool
	// the defaults do not list: it asks as P1).
	Default string `json:"default"`
	// From is the layer that set Tier: default, file (config.toml) or project.
	From string `json:"from"`
	// Fixed says the tool never drops below P2, whatever the file says.
	Fixed bool `json:"fixed"`
	// Warning is a red line about the tier in words (a shell tool at P0), "" for none.
	Warning string `json:"warning,omitempty"`
}

// RuleRow is one [[permission.rules]] entry of config.toml, in file order.
type RuleRow struct {
	Index   int    `json:"index"`
	Tool    string `json:"tool"`
	Pattern string `json:"pattern"`
	Action  string `json:"action"`
}

// PermissionsView is what the Approvals and Permissions tabs show: the policy and
// reviewer in force with their layer, the tier of every known tool, the rules, and the
// remembered grants.
type PermissionsView struct {
	ApprovalPolicy     string        `json:"approval_policy"`
	ApprovalPolicyFrom string        `json:"approval_policy_from"`
	Reviewer           string        `json:"reviewer"`
	ReviewerFrom       string        `json:"reviewer_from"`
	ReviewerCommand    []string      `json:"reviewer_command"`
	OpsStrict          bool          `json:"ops_strict"`
	OpsStrictFrom      string        `json:"ops_strict_from"`
	Tiers              []TierRow     `json:"tiers"`
	Rules              []RuleRow     `json:"rules"`
	Grants             []GrantRecord `json:"grants"`
	// GrantsError is set when the grants could not be read (the rest still shows).
	GrantsError string `json:"grants_error,omitempty"`
	// Ignored are project-policy settings that were not applied, in words.
	Ignored []string `json:"ignored"`
	// Projects are the project policy files where runs and agents work, with what each
	// tightens and what it asked for that was ignored.
	Projects []ProjectLayer `json:"projects"`
}

// HookRow is one of Airlock's own [[hooks.*]] entries in config.toml.
type HookRow struct {
	When    string   `json:"when"` // before_tool_use | after_tool_use
	Command []string `json:"command"`
	Tools   []string `json:"tools"` // empty: every tool
	Timeout string   `json:"timeout,omitempty"`
}

// AgentHook says whether a coding agent is wired to Airlock, where that is configured,
// and how to wire it.
type AgentHook struct {
	Agent     string `json:"agent"`     // "Claude Code", "Codex"
	Kind      string `json:"kind"`      // hook | mcp
	Installed bool   `json:"installed"` // found in File
	File      string `json:"file"`      // the agent's configuration file
	// Detail says what was found (or why the file could not be read).
	Detail string `json:"detail"`
	// Meaning says what this wiring gives, in words.
	Meaning string `json:"meaning"`
	// Install is what to run or add to File to install it.
	Install string `json:"install"`
}

// HooksView is the Hooks tab: Airlock's own hooks from config.toml, and which coding
// agents ask Airlock (the Claude Code PreToolUse hook, the MCP server).
type HooksView struct {
	Hooks  []HookRow   `json:"hooks"`
	Agents []AgentHook `json:"agents"`
}

// ProjectLayer is one project policy file as the window shows it: what it tightens and
// what it asked for that was ignored.
type ProjectLayer struct {
	Path    string   `json:"path"`
	Applied []string `json:"applied"`
	Ignored []string `json:"ignored"`
}
