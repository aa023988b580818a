package api

import (
	"fmt"
	"strings"
	"time"
)

// GetStatus is `airlock status`: what runs, where its data lives, and what is wrong.
var GetStatus = route[None, Status]("GET", "/v1/status")

// GetConfig is the running core's configuration: its health and its effective values.
var GetConfig = route[None, ConfigView]("GET", "/v1/config")

// Status is what `airlock status` prints: what runs, where its data lives, and what is wrong.
type Status struct {
	Kind      string      `json:"kind"` // "desktop" or "daemon"
	PID       int         `json:"pid"`
	Version   string      `json:"version"`
	StartedAt time.Time   `json:"started_at"`
	Uptime    string      `json:"uptime"`
	Paths     Paths       `json:"paths"`
	Config    ConfigView  `json:"config"`
	Keyring   KeyringView `json:"keyring"`
	// Previous is the start before this one; previous.clean false means it was killed.
	Previous *PreviousStart `json:"previous,omitempty"`
	// Sandbox is the backend runs get on this machine (absent while the probes run).
	Sandbox *SandboxSummary `json:"sandbox,omitempty"`
	// Approvals is how a person at a terminal proves presence.
	Approvals *ProofSummary `json:"approvals,omitempty"`
	// Attended says whether anything follows the approvals now (the window, the tray,
	// notifications, `airlock approvals watch`, or [approvals] wait_unattended): when
	// false, a hook's question that needs a person is answered at once instead of waiting.
	Attended bool `json:"attended"`
	// TCPAddress is the loopback address the local API also listens on, with a bearer
	// token ("" when it listens on its unix socket only); TCPFrom says where it was chosen
	// (--tcp, or config.toml's [api] tcp_address).
	TCPAddress string `json:"tcp_address,omitempty"`
	TCPFrom    string `json:"tcp_from,omitempty"`
}

// Paths are the places on disk (README, "Where data lives"): under AIRLOCK_HOME when it
// is set, else XDG.
type Paths struct {
	ConfigFile string `json:"config_file"` // config.toml (trusted, watched)
	DataDir    string `json:"data_dir"`    // database, sandbox runtime and images
	Database   string `json:"database"`    // airlock.db
	RunLogs    string `json:"run_logs"`    // one <run-id>.log per run
	SandboxDir string `json:"sandbox_dir"` // micro-VM runtime and images
	RuntimeDir string `json:"runtime_dir"` // the socket's 0700 directory
	Socket     string `json:"socket"`      // the local API's unix socket
	// AgentRuns holds one directory per run of an agent task (the agent's settings and
	// home): hidden from every sandbox but that run's, which sees its own directory alone.
	AgentRuns string `json:"agent_runs"`
}

// SandboxSummary is the sandbox's state in one line: the backend and what is wrong.
type SandboxSummary struct {
	Backend string `json:"backend"`
	Warning string `json:"warning,omitempty"`
	Error   string `json:"error,omitempty"`
	// Indicator is the same colour and words as the window's footer and the tray icon.
	Indicator SandboxIndicator `json:"indicator"`
}

// ConfigView is the configuration's health and its effective values.
type ConfigView struct {
	Path     string          `json:"path"`
	Exists   bool            `json:"exists"`
	LoadedAt time.Time       `json:"loaded_at"`
	Error    *ConfigError    `json:"error,omitempty"`
	Settings []ConfigSetting `json:"settings"`
	// Warnings are red lines of the configuration in words: a shell tool set to P0 in
	// [permission.tiers] (every command it runs runs without asking).
	Warnings []string `json:"warnings,omitempty"`
	// Pending is a change of config.toml that loosens the answer path and waits for the
	// person to confirm it (its keys keep their values in force until then).
	Pending *ConfigPending `json:"pending,omitempty"`
}

// ConfigPending is a reloaded config.toml whose looser keys wait for the person.
type ConfigPending struct {
	// Keys are the keys it loosens (approvals.terminal_proof, approval_policy, …).
	Keys []string `json:"keys"`
	// Digest is the SHA-256 of the file as read: a confirmation names it, so what the
	// person saw is what takes effect.
	Digest string    `json:"digest"`
	Since  time.Time `json:"since"`
	// Message says what waits and the ways to confirm it.
	Message string `json:"message"`
}

// ConfigConfirmIn confirms the waiting change of config.toml (Digest "": whatever
// waits now), with the proof of a person.
type ConfigConfirmIn struct {
	Digest string `json:"digest,omitempty"`
	Proof
}

// ConfirmConfig takes the waiting looser config.toml into force.
var ConfirmConfig = route[ConfigConfirmIn, ConfigView]("POST", "/v1/config/confirm")

// KeyringView says which secret store is in use and whether it answers.
type KeyringView struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Store is the secret store in use: "keyring" (the OS keyring) or "file" (chosen by
	// `[secrets] store = "file"`); Where is the keyring's service or the file's path.
	Store string `json:"store"`
	Where string `json:"where"`
}

// PreviousStart describes the core's start before this one.
type PreviousStart struct {
	Kind      string     `json:"kind"`
	PID       int        `json:"pid"`
	StartedAt time.Time  `json:"started_at"`
	StoppedAt *time.Time `json:"stopped_at,omitempty"`
	Clean     bool       `json:"clean"` // false: it ended without a clean stop
}

// ConfigLayer names where an effective value came from: flag, env, file, profile (a
// chosen profile, beneath the keys of its level) or default.
type ConfigLayer string

// ConfigSetting is one key's effective value and who set it.
type ConfigSetting struct {
	Key    string      `json:"key"`
	Value  any         `json:"value"`
	Layer  ConfigLayer `json:"layer"`
	Detail string      `json:"detail,omitempty"` // "AIRLOCK_SANDBOX_MODE", "--sandbox", the file path
}

// ConfigProblem is one mistake in config.toml, with where it is.
type ConfigProblem struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}

func (p ConfigProblem) String() string {
	if p.Line == 0 {
		return p.Message
	}
	return fmt.Sprintf("line %d, column %d: %s", p.Line, p.Column, p.Message)
}

// ConfigError is a config file that cannot be used, with every problem found in it.
type ConfigError struct {
	Path     string          `json:"path"`
	Problems []ConfigProblem `json:"problems"`
}

func (e *ConfigError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("%s: %s", e.Path, strings.Join(parts, "; "))
}
