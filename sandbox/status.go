package sandbox

import (
	"context"
	"time"
)

// Probe is one start-up check of the machine's isolation features.
type Probe struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Fix is a sentence saying what to do when OK is false.
	Fix string `json:"fix,omitempty"`
}

// Status is what `airlock sandbox status` and the Sandbox tab show.
type Status struct {
	Platform string  `json:"platform"`
	Probes   []Probe `json:"probes"`
	// Requested is the configured isolation backend (auto, os, app).
	Requested Backend `json:"requested"`
	// Backend is what commands will run under: bwrap, landlock, seatbelt or app.
	Backend string `json:"backend"`
	// Warning is a loud sentence when commands fall back to the application layer.
	Warning string `json:"warning,omitempty"`
	// Error is set when backend "os" is requested and none is available: runs are refused.
	Error string `json:"error,omitempty"`
	// Guarantees are the promises that hold with Backend; Limitations those that do not.
	Guarantees  []string `json:"guarantees"`
	Limitations []string `json:"limitations,omitempty"`
}

// ProbeTimeout bounds each start-up probe.
const ProbeTimeout = 3 * time.Second

// ProbeStatus runs the start-up probes (each bounded by ProbeTimeout) and chooses the
// backend for the requested setting.
func ProbeStatus(ctx context.Context, requested Backend) Status {
	if requested == "" {
		requested = BackendAuto
	}
	st := Status{Requested: requested}
	probePlatform(ctx, &st)
	return st
}

// Probe returns the probe with that name (zero Probe if absent).
func (s Status) Probe(name string) Probe {
	for _, p := range s.Probes {
		if p.Name == name {
			return p
		}
	}
	return Probe{}
}

const appOnlyWarning = "WARNING: no OS sandbox backend is available — a command runs only when the application layer's checks " +
	"account for everything it could do (interpreters, scripts and programs it does not model are refused). Install bubblewrap: apt install bubblewrap"

var appGuarantees = []string{
	"built-in tools and shell commands are checked before they run (write targets, protected paths, hidden paths, network clients)",
	"a command runs only when the analysis accounts for everything it could do: interpreters, scripts from the workspace and programs it does not model are refused",
}

var appLimitations = []string{
	"nothing confines a process once it runs: the protection is only as good as the analysis of the programs it lets run",
}
