package sandbox

import (
	"fmt"
	"strings"

	"github.com/airlock-app/airlock/api"
)

// Mode is the sandbox mode (`sandbox_mode`).
type Mode string

// The sandbox modes. Reads are never restricted, in any mode.
const (
	// ModeReadOnly allows no writes and no network.
	ModeReadOnly Mode = "read-only"
	// ModeWorkspaceWrite allows writes only inside the writable roots, and network only when enabled.
	ModeWorkspaceWrite Mode = "workspace-write"
	// ModeFullAccess applies no restriction; it is not a security boundary.
	ModeFullAccess Mode = "full-access"
)

// Backend selects the OS isolation layer (`isolation.backend`).
type Backend string

// The backend choices.
const (
	// BackendAuto picks the strongest available OS backend, else the application layer alone (with a loud warning).
	BackendAuto Backend = "auto"
	// BackendOS refuses to run without an OS backend.
	BackendOS Backend = "os"
	// BackendApp uses the application layer only.
	BackendApp Backend = "app"
)

// ExecutionMode is carried through for the micro-VM work (`execution_mode`); only local runs today.
type ExecutionMode string

// The execution modes.
const (
	ExecLocal   ExecutionMode = "local"
	ExecSandbox ExecutionMode = "sandbox"
	ExecAuto    ExecutionMode = "auto"
)

// Setting keys used in Policy.Sources (the config key names).
const (
	KeyMode          = "sandbox_mode"
	KeyNetwork       = "network_access"
	KeyNetworkLists  = "network"
	KeyWritableRoots = "writable_roots"
	KeyProtected     = "protected"
	KeyBackend       = "backend"
	KeyExecutionMode = "execution_mode"
)

// Layer names used in Source.Layer.
const (
	LayerFlag    = "flag"
	LayerEnv     = "env"
	LayerFile    = "file"
	LayerProject = "project"
	// LayerProfile is a chosen profile's value, beneath the keys of its level.
	LayerProfile = "profile"
	LayerDefault = "default"
	// LayerEscalation is one call's extra access, allowed by the person (Escalate).
	LayerEscalation = "escalation"
)

// Source says which layer set a resolved value, e.g. {Layer: "env", Detail: "env AIRLOCK_SANDBOX_MODE"}.
type Source struct {
	Layer  string `json:"layer"`
	Detail string `json:"detail"`
}

func (s Source) String() string {
	if s.Detail != "" {
		return s.Detail
	}
	return s.Layer
}

// Ignored is one project-policy setting that was not applied, and why.
type Ignored struct {
	File   string `json:"file"`
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

func (i Ignored) String() string { return fmt.Sprintf("%s: %s ignored: %s", i.File, i.Key, i.Reason) }

// NetworkMode is network_access: off, allowlist or on (api.NetworkAccess). Until the
// egress proxy is connected, "allowlist" runs exactly as "off" (a network namespace of
// the run's own with no way out): every backend and check asks Network.On(), never
// whether it is something other than off.
type NetworkMode = api.NetworkAccess

// The network_access values.
const (
	NetworkOff       = api.NetworkOff
	NetworkAllowlist = api.NetworkAllowlist
	NetworkOn        = api.NetworkOn
)

// ParseNetwork parses a network_access value (off, allowlist, on, or a boolean).
func ParseNetwork(s string) (NetworkMode, error) { return api.ParseNetworkAccess(s) }

// Policy is a resolved sandbox policy. Build it with Resolve.
type Policy struct {
	Mode Mode `json:"mode"`
	// Network is off, allowlist or on. "allowlist" has no network until the egress proxy
	// is connected (see NetworkMode); Allowlist then holds the [network] lists.
	Network NetworkMode `json:"network"`
	// Allowlist is the effective [network] table (nil unless Network is allowlist).
	Allowlist *NetworkLists `json:"allowlist,omitempty"`
	// EgressConnected is set by a caller that runs this policy's commands with the egress
	// proxy connected (ExecRequest.Egress): the application layer then leaves network
	// clients to the proxy, which judges every destination by the lists.
	EgressConnected bool `json:"-"`
	// Cwd is the real (symlink-free) working directory of the run.
	Cwd string `json:"cwd"`
	// WritableRoots are real absolute directories; in workspace-write the first is Cwd.
	// Empty in read-only; unused in full-access.
	WritableRoots []string `json:"writable_roots"`
	// Protected are absolute paths kept read-only (and uncreatable) inside the writable roots.
	Protected []string `json:"protected"`
	// ProtectedNames are path components protected anywhere inside a writable root by the
	// application layer (".git", ".airlock" and relative configured entries).
	ProtectedNames []string      `json:"protected_names"`
	Backend        Backend       `json:"backend"`
	ExecutionMode  ExecutionMode `json:"execution_mode"`
	// Limits are the resource limits every command of the run gets (each field set).
	Limits Limits `json:"limits"`
	// LimitsRequired refuses to run a command where Limits cannot be applied (no cgroup
	// Airlock can write); otherwise it runs with Result.Warning saying so.
	LimitsRequired bool `json:"limits_required,omitempty"`
	// Sources says which layer set each key (KeyMode, KeyNetwork, …).
	Sources map[string]Source `json:"sources"`
	// Ignored lists what project policy files asked for and did not get.
	Ignored []Ignored `json:"ignored,omitempty"`
	// Warnings are things the user should know (missing writable roots, …).
	Warnings []string `json:"warnings,omitempty"`
	// Hidden are paths every sandbox but full-access hides: Airlock's socket
	// directory, the session bus and keyring sockets, the SSH agent socket.
	// Resolve fills the defaults from the environment; ExecRequest.HiddenPaths adds more.
	Hidden []string `json:"hidden"`
	// Revealed are hidden credential paths one call may read through the application
	// layer (an escalation's Grant.Readable); the OS layer hides them regardless.
	Revealed []string `json:"revealed,omitempty"`
	// Unhidden are directories inside a hidden directory that this policy's commands
	// still see, at the OS layer too (WithUnhidden): an agent task's own run directory
	// inside the agent runs every other sandbox hides. Read-only but for the writable
	// roots within; what else the hidden directory holds, or comes to hold while a
	// command runs, stays hidden. bubblewrap, Landlock and Seatbelt show them; the
	// application layer keeps them hidden.
	Unhidden []string `json:"unhidden,omitempty"`
	// Home is the user's home directory, used to expand `~` in commands.
	Home string `json:"-"`
	// protectedReal holds where each Protected path resolves (Resolve fills it).
	protectedReal []string
	// protectedEntries are the configured protected entries setProtected expanded, so
	// Escalate protects them inside a granted root too.
	protectedEntries []string
}

// validModes lists the accepted spellings, for error messages.
const validModes = "read-only, workspace-write, full-access (alias danger-full-access)"

// ParseMode parses a sandbox mode, accepting the alias danger-full-access.
func ParseMode(s string) (Mode, error) {
	switch strings.TrimSpace(strings.ToLower(s)) {
	case "read-only":
		return ModeReadOnly, nil
	case "workspace-write":
		return ModeWorkspaceWrite, nil
	case "full-access", "danger-full-access":
		return ModeFullAccess, nil
	}
	return "", fmt.Errorf("invalid sandbox mode %q: valid choices are %s", s, validModes)
}

// strictness orders modes: a higher value is stricter.
func (m Mode) strictness() int {
	switch m {
	case ModeReadOnly:
		return 2
	case ModeWorkspaceWrite:
		return 1
	}
	return 0
}

// ParseBackend parses an isolation backend choice.
func ParseBackend(s string) (Backend, error) {
	switch b := Backend(strings.TrimSpace(strings.ToLower(s))); b {
	case BackendAuto, BackendOS, BackendApp:
		return b, nil
	}
	return "", fmt.Errorf("invalid isolation backend %q: valid choices are auto, os, app", s)
}

// ParseExecutionMode parses an execution mode.
func ParseExecutionMode(s string) (ExecutionMode, error) {
	switch m := ExecutionMode(strings.TrimSpace(strings.ToLower(s))); m {
	case ExecLocal, ExecSandbox, ExecAuto:
		return m, nil
	}
	return "", fmt.Errorf("invalid execution mode %q: valid choices are local, sandbox, auto", s)
}

// ParseBool parses a boolean setting the way the environment variables spell it.
func ParseBool(s string) (bool, error) {
	switch strings.TrimSpace(strings.ToLower(s)) {
	case "1", "true", "yes", "on", "enabled":
		return true, nil
	case "0", "false", "no", "off", "disabled":
		return false, nil
	}
	return false, fmt.Errorf("invalid boolean %q: valid choices are true/false, 1/0, yes/no, on/off", s)
}
