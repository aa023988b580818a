package sandbox

import (
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// linuxStatus is a Linux machine's probes: every one passes except those named in failing.
func linuxStatus(backend string, failing ...string) Status {
	st := Status{Platform: "linux", Requested: string(BackendAuto), Backend: backend}
	for _, name := range []string{ProbeBwrap, ProbeUserNS, ProbeLandlock, ProbeSeccomp, ProbeNetStack, ProbeLimits} {
		p := Probe{Name: name, OK: true, Detail: name + " works"}
		for _, f := range failing {
			if f == name {
				p = Probe{Name: name, Detail: name + " is missing", Fix: "fix " + name}
			}
		}
		st.Probes = append(st.Probes, p)
	}
	return st
}

func TestIndicate(t *testing.T) {
	ws := Policy{Mode: ModeWorkspaceWrite, Network: NetworkOff}
	full := Policy{Mode: ModeFullAccess, Network: NetworkOff, Sources: map[string]Source{KeyMode: {Layer: LayerFile, Detail: "config.toml"}}}
	on := Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn}
	allow := Policy{Mode: ModeWorkspaceWrite, Network: NetworkAllowlist}
	appOnly := linuxStatus(BackendNameApp, ProbeBwrap, ProbeUserNS, ProbeLandlock)
	appOnly.Warning = appOnlyWarning
	requestedApp := linuxStatus(BackendNameApp)
	requestedApp.Requested = string(BackendApp)
	refused := linuxStatus("", ProbeBwrap, ProbeUserNS, ProbeLandlock)
	refused.Requested, refused.Error = string(BackendOS), "no OS backend"
	seatbelt := Status{Platform: "darwin", Backend: BackendNameSeatbelt, Probes: []Probe{{Name: "seatbelt", OK: true}}}
	for _, tc := range []struct {
		name   string
		st     Status
		p      Policy
		level  string
		words  string
		reason string // in one of the reasons
		fix    string // in the way out
	}{
		{"every promise holds", linuxStatus(BackendNameBwrap), ws, api.IndicatorGreen, "bubblewrap", "", ""},
		{"network on with its stack", linuxStatus(BackendNameBwrap), on, api.IndicatorGreen, "bubblewrap", "", ""},
		{"Seatbelt, no Linux probes", seatbelt, ws, api.IndicatorGreen, "Seatbelt", "", ""},
		{"full-access under bubblewrap", linuxStatus(BackendNameBwrap), full, api.IndicatorRed, "not sandboxed", "full-access (config.toml)", `sandbox_mode = "workspace-write"`},
		{"the app-only backend", appOnly, ws, api.IndicatorRed, "not sandboxed", "no OS sandbox", "fix bubblewrap"},
		{"backend app requested", requestedApp, ws, api.IndicatorRed, "not sandboxed", "application layer", `backend = "auto"`},
		{"backend os with none", refused, ws, api.IndicatorRed, "sandbox unavailable", "every run is refused", "fix bubblewrap"},
		{"Landlock without user namespaces", linuxStatus(BackendNameLandlock, ProbeUserNS), ws, api.IndicatorAmber, "Landlock (degraded)", "no user namespaces", "fix user namespaces"},
		{"Landlock without bubblewrap", linuxStatus(BackendNameLandlock, ProbeBwrap, ProbeUserNS), ws, api.IndicatorAmber, "Landlock (degraded)", "bubblewrap is missing (bubblewrap is missing)", "fix bubblewrap"},
		{"allowlist under Landlock", linuxStatus(BackendNameLandlock, ProbeUserNS), allow, api.IndicatorAmber, "Landlock (degraded)", `network_access = allowlist needs bubblewrap's network namespace`, ""},
		{"network on without slirp4netns", linuxStatus(BackendNameBwrap, ProbeNetStack), on, api.IndicatorAmber, "bubblewrap (degraded)", "network stack is missing", "fix network stack"},
		{"network off needs no slirp4netns", linuxStatus(BackendNameBwrap, ProbeNetStack), ws, api.IndicatorGreen, "bubblewrap", "", ""},
		{"limits not applied", linuxStatus(BackendNameBwrap, ProbeLimits), ws, api.IndicatorAmber, "bubblewrap (degraded)", "resource limits is missing", "fix resource limits"},
		{"full-access from the environment", linuxStatus(BackendNameBwrap), Policy{Mode: ModeFullAccess, Sources: map[string]Source{KeyMode: {Layer: LayerEnv, Detail: "env AIRLOCK_SANDBOX_MODE"}}},
			api.IndicatorRed, "not sandboxed", "full-access (env AIRLOCK_SANDBOX_MODE)", "unset AIRLOCK_SANDBOX_MODE"},
		{"full-access hides nothing behind amber", linuxStatus(BackendNameLandlock, ProbeUserNS), full, api.IndicatorRed, "not sandboxed", "Landlock fallback", `sandbox_mode = "workspace-write"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Indicate(tc.st, tc.p)
			if got.Level != tc.level || got.Words != tc.words {
				t.Fatalf("Indicate = %s %q, want %s %q (%+v)", got.Level, got.Words, tc.level, tc.words, got)
			}
			if tc.level == api.IndicatorGreen {
				if len(got.Reasons) != 0 || got.Fix != "" {
					t.Errorf("green with reasons: %+v", got)
				}
				return
			}
			if !strings.Contains(strings.Join(got.Reasons, "\n"), tc.reason) {
				t.Errorf("reasons %q do not say %q", got.Reasons, tc.reason)
			}
			if !strings.Contains(got.Fix, tc.fix) {
				t.Errorf("fix %q does not say %q", got.Fix, tc.fix)
			}
		})
	}
}
