package localapi

import (
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/paths"
)

// The wire types of the API, shared by the core (which fills them) and the CLI and
// window (which show them). They live here so the CLI need not link the core.

// Status is what `airlock status` prints: what runs, where its data lives, and what is wrong.
type Status struct {
	Kind      string      `json:"kind"` // "desktop" or "daemon"
	PID       int         `json:"pid"`
	Version   string      `json:"version"`
	StartedAt time.Time   `json:"startedAt"`
	Uptime    string      `json:"uptime"`
	Paths     paths.Paths `json:"paths"`
	Config    ConfigView  `json:"config"`
	Keyring   KeyringView `json:"keyring"`
	// Previous is the start before this one; previous.clean false means it was killed.
	Previous *PreviousStart `json:"previous,omitempty"`
	// Sandbox is the backend runs get on this machine (absent while the probes run).
	Sandbox *SandboxSummary `json:"sandbox,omitempty"`
	// Approvals is how a person at a terminal proves presence.
	Approvals *ProofSummary `json:"approvals,omitempty"`
}

// ProofSummary is how a person at a terminal proves presence (api.ProofSummary, the
// answer of GET /v1/approvals/proof).
type ProofSummary = api.ProofSummary

// SandboxSummary is the sandbox's state in one line: the backend and what is wrong.
type SandboxSummary struct {
	Backend string `json:"backend"`
	Warning string `json:"warning,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ConfigView is the configuration's health and its effective values.
type ConfigView struct {
	Path     string           `json:"path"`
	Exists   bool             `json:"exists"`
	LoadedAt time.Time        `json:"loadedAt"`
	Error    *config.Error    `json:"error,omitempty"`
	Settings []config.Setting `json:"settings"`
}

// KeyringView says whether the OS keyring answers.
type KeyringView struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// PreviousStart describes the core's start before this one.
type PreviousStart struct {
	Kind      string     `json:"kind"`
	PID       int        `json:"pid"`
	StartedAt time.Time  `json:"startedAt"`
	StoppedAt *time.Time `json:"stoppedAt,omitempty"`
	Clean     bool       `json:"clean"` // false: it ended without a clean stop
}
