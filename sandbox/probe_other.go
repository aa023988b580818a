//go:build !linux

package sandbox

import (
	"context"
	"os"
	"runtime"
)

// ProbeSeatbelt is the probe name of macOS's sandbox-exec.
const ProbeSeatbelt = "seatbelt"

// sandboxExec is macOS's Seatbelt launcher.
const sandboxExec = "/usr/bin/sandbox-exec"

func probePlatform(_ context.Context, st *Status) {
	st.Platform = runtime.GOOS
	p := Probe{Name: ProbeSeatbelt, Fix: "sandbox-exec is part of macOS; run on macOS 10.5 or later"}
	if _, err := os.Stat(sandboxExec); err == nil && runtime.GOOS == "darwin" {
		p.OK, p.Fix, p.Detail = true, "", sandboxExec+" is available"
	} else {
		p.Detail = "no OS sandbox backend on " + runtime.GOOS
	}
	st.Probes = []Probe{p}
	switch {
	case Backend(st.Requested) == BackendApp:
		st.Backend = BackendNameApp
		st.Warning = "isolation backend is \"app\": the OS does not confine commands"
	case p.OK:
		st.Backend = BackendNameSeatbelt
		st.Guarantees = []string{"writes only inside the writable roots minus protected paths; network denied unless enabled (Seatbelt)"}
		return
	case Backend(st.Requested) == BackendOS:
		st.Error = "isolation backend \"os\" is required but no OS backend is available: runs are refused"
	default:
		st.Backend = BackendNameApp
		st.Warning = appOnlyWarning
	}
	st.Guarantees, st.Limitations = appGuarantees, appLimitations
}
