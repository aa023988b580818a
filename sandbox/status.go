package sandbox

import (
	"context"
	"time"

	"github.com/airlock-app/airlock/api"
)

// Probe is one start-up check of the machine's isolation features (the wire type).
type Probe = api.SandboxProbe

// Status is what `airlock sandbox status` and the Sandbox tab show (the wire type); its
// Requested is a Backend's name.
type Status = api.SandboxStatus

// Probe names (Linux's; the indicator reads them on every platform).
const (
	ProbeBwrap    = "bubblewrap"
	ProbeUserNS   = "user namespaces"
	ProbeLandlock = "landlock"
	ProbeSeccomp  = "seccomp"
	ProbeKVM      = "kvm"
	// ProbeNetStack is the user-mode network stack of network-on runs (slirp4netns).
	ProbeNetStack = "network stack"
)

// ProbeTimeout bounds each start-up probe.
const ProbeTimeout = 3 * time.Second

// ProbeStatus runs the start-up probes (each bounded by ProbeTimeout) and chooses the
// backend for the requested setting.
func ProbeStatus(ctx context.Context, requested Backend) Status {
	if requested == "" {
		requested = BackendAuto
	}
	st := Status{Requested: string(requested)}
	probePlatform(ctx, &st)
	return st
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
