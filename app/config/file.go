// Package config reads Airlock's trusted config.toml, validates it with
// the line and column of every mistake, layers it under flags and the environment, and
// keeps the last good configuration when the file on disk breaks.
//
// It only reads and layers values; each domain package resolves its own part.
package config

import "github.com/airlock-app/airlock/api"

// File is config.toml as written by the person. Pointers tell "absent" from "zero".
type File struct {
	// Profile names the profile (built in, or one of Profiles) whose settings apply
	// beneath the keys written in this file.
	Profile               *string                `toml:"profile"`
	Profiles              map[string]ProfileFile `toml:"profiles"`
	SandboxMode           *string                `toml:"sandbox_mode"`
	ApprovalPolicy        *string                `toml:"approval_policy"`
	ApprovalsReviewer     *string                `toml:"approvals_reviewer"`
	ExecutionMode         *string                `toml:"execution_mode"`
	SandboxWorkspaceWrite WorkspaceWrite         `toml:"sandbox_workspace_write"`
	Network               Network                `toml:"network"`
	Isolation             Isolation              `toml:"isolation"`
	Limits                Limits                 `toml:"limits"`
	Workspace             Workspace              `toml:"workspace"`
	Ops                   Ops                    `toml:"ops"`
	Approvals             Approvals              `toml:"approvals"`
	Permission            Permission             `toml:"permission"`
	Hooks                 Hooks                  `toml:"hooks"`
	Reviewer              Reviewer               `toml:"reviewer"`
	Dispatch              Dispatch               `toml:"dispatch"`
	API                   API                    `toml:"api"`
	Secrets               Secrets                `toml:"secrets"`
}

// WorkspaceWrite is [sandbox_workspace_write].
type WorkspaceWrite struct {
	WritableRoots []string `toml:"writable_roots"`
	// NetworkAccess is false, true or "allowlist" as written (nil: absent); Parse
	// refuses anything else. Read it with Network.
	NetworkAccess any `toml:"network_access"`
}

// Network returns network_access as the sandbox takes it (nil when absent or, in a
// File that Parse did not check, invalid).
func (w WorkspaceWrite) Network() *api.NetworkAccess {
	n, ok := networkValue(w.NetworkAccess)
	if !ok {
		return nil
	}
	return &n
}

// networkValue reads network_access as TOML writes it: false, true or "allowlist".
func networkValue(v any) (api.NetworkAccess, bool) {
	switch x := v.(type) {
	case bool:
		return api.NetworkFromBool(x), true
	case string:
		if x == string(api.NetworkAllowlist) {
			return api.NetworkAllowlist, true
		}
	}
	return "", false
}

// Network is [network]: what a run under network_access = "allowlist" may reach
// through the egress proxy. Entries are checked with the proxy's own rule parser.
type Network struct {
	AllowedDomains []string `toml:"allowed_domains"`
	DeniedDomains  []string `toml:"denied_domains"`
	AskUnknown     *bool    `toml:"ask_unknown"`
	AllowLocal     *bool    `toml:"allow_local"`
}

// Isolation is [isolation].
type Isolation struct {
	Backend   *string  `toml:"backend"`
	Protected []string `toml:"protected"`
}

// Limits is [limits]: the resource limits of each run and each MCP bash call (a
// department or a task may lower or raise them).
type Limits struct {
	Memory *string `toml:"memory"`
	Pids   *int    `toml:"pids"`
	CPU    *string `toml:"cpu"`
	// Required refuses to run a command where the limits cannot be applied.
	Required *bool `toml:"required"`
}

// Layer is the limits as the sandbox's resolution takes them (unset fields are zero).
func (l Limits) Layer() api.Limits {
	var out api.Limits
	if l.Memory != nil {
		out.Memory = *l.Memory
	}
	if l.Pids != nil {
		out.Pids = *l.Pids
	}
	if l.CPU != nil {
		out.CPU = *l.CPU
	}
	return out
}

// Workspace is [workspace]: runs may start inside these roots.
type Workspace struct {
	Roots []string `toml:"roots"`
}

// Ops is [ops].
type Ops struct {
	Strict *bool `toml:"strict"`
}

// Approvals is [approvals]: how a person at a terminal proves presence when answering
// what only a person may answer (P2, interactive-only, always grants, ops approve,
// authorize).
type Approvals struct {
	// TerminalProof is "os" (the default: the login password, checked by PAM in the
	// core) or "tty" (the weaker choice: having a terminal is enough, which any process
	// can fake with script(1)).
	TerminalProof *string `toml:"terminal_proof"`
	// PAMService names the PAM service in /etc/pam.d that checks the password; empty:
	// airlock when installed, else sudo, else login, else other.
	PAMService *string `toml:"pam_service"`
	// WaitUnattended makes a hook's question wait for --wait even when nothing can
	// answer in Airlock now (no window, tray, notification or approvals watcher); by
	// default the hook then answers at once (handed to the agent's prompt, or denied).
	WaitUnattended *bool `toml:"wait_unattended"`
}

// Permission is [permission].
type Permission struct {
	Tiers map[string]string `toml:"tiers"`
	Rules []Rule            `toml:"rules"`
	// RequestTimeout bounds how long a request waits for the person ("" or "0": forever).
	RequestTimeout string `toml:"request_timeout"`
}

// Rule is one [[permission.rules]] entry.
type Rule struct {
	Tool    string `toml:"tool"`
	Pattern string `toml:"pattern"`
	Action  string `toml:"action"`
}

// Hooks is [hooks].
type Hooks struct {
	BeforeToolUse []Hook `toml:"before_tool_use"`
	AfterToolUse  []Hook `toml:"after_tool_use"`
	// ClaudeBashSandbox false lets `airlock hook claude` leave Claude Code's own Bash on
	// the host, unconfined, instead of running each command through `airlock exec`
	// (default true).
	ClaudeBashSandbox *bool `toml:"claude_bash_sandbox"`
}

// Hook is one [[hooks.*]] entry.
type Hook struct {
	Command []string `toml:"command"`
	Tools   []string `toml:"tools"`
	Timeout string   `toml:"timeout"`
}

// Reviewer is [reviewer].
type Reviewer struct {
	Command []string `toml:"command"`
	Timeout string   `toml:"timeout"`
}

// Dispatch is [dispatch].
type Dispatch struct {
	Concurrency *int    `toml:"concurrency"`
	LogMaxAge   *string `toml:"log_max_age"`
	LogMaxTotal *string `toml:"log_max_total"`
	RunLogCap   *string `toml:"run_log_cap"`
	// RunMaxAge and RunMaxCount bound the run records kept: finished runs older than the
	// age go, and beyond the count per task the oldest go (never a run still active or
	// the last run of its task).
	RunMaxAge   *string `toml:"run_max_age"`
	RunMaxCount *int    `toml:"run_max_count"`
	// MaxBacklog caps the runs of one task queued, held or running at once under overlap
	// "queue" and "allow"; an occurrence beyond it is recorded skipped.
	MaxBacklog *int `toml:"max_backlog"`
}

// API is [api]: the optional loopback TCP listener (off unless an address is given).
type API struct {
	TCPAddress *string `toml:"tcp_address"`
}

// Secrets is [secrets]: where Airlock keeps its secrets (package app/secrets).
type Secrets struct {
	// Store is "keyring" (the default: the OS keyring) or "file" (a 0600 file in a 0700
	// directory under the data directory, for a machine without a Secret Service).
	Store *string `toml:"store"`
}

// SecretStore is the store chosen, "keyring" when absent.
func (f File) SecretStore() string {
	if f.Secrets.Store == nil {
		return "keyring"
	}
	return *f.Secrets.Store
}
