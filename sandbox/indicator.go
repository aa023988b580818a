package sandbox

import (
	"github.com/airlock-app/airlock/api"
)

// Indicator is the sandbox in one colour and a few words (the wire type).
type Indicator = api.SandboxIndicator

var backendWords = map[string]string{
	BackendNameBwrap:    "bubblewrap",
	BackendNameLandlock: "Landlock",
	BackendNameSeatbelt: "Seatbelt",
	BackendNameApp:      "app layer only",
}

// BackendWords is a backend's name in words ("bwrap" → "bubblewrap").
func BackendWords(backend string) string {
	if w, ok := backendWords[backend]; ok {
		return w
	}
	return backend
}

// Indicate is the one honest summary of the sandbox that the window's footer, the tray
// icon and `airlock status` show: red when commands are not sandboxed (sandbox_mode
// full-access, the app-only backend) or cannot run (backend "os" with none available),
// amber when they are confined but a guarantee of p is missing on this machine (the
// Landlock fallback without namespaces, no network stack for the network p asks for,
// resource limits not applied), green only when every promise holds. st is the
// start-up probes' result, p the policy in force (its Mode and Network count).
func Indicate(st Status, p Policy) Indicator {
	var red, amber []string
	var redFix, amberFix string
	addRed := func(reason, fix string) {
		red = append(red, reason)
		if redFix == "" {
			redFix = fix
		}
	}
	addAmber := func(reason, fix string) {
		amber = append(amber, reason)
		if amberFix == "" {
			amberFix = fix
		}
	}
	probe := func(name string) (Probe, bool) {
		pr := st.Probe(name)
		return pr, pr.Name != "" // a probe this platform does not run is not a failure
	}
	if st.Error != "" {
		addRed("no OS sandbox is available and backend \"os\" is required: every run is refused", firstFixOf(st))
	}
	if p.Mode == ModeFullAccess {
		fix := `set sandbox_mode = "workspace-write" in config.toml (or pass --sandbox workspace-write)`
		switch p.Sources[KeyMode].Layer {
		case LayerEnv:
			fix = "unset AIRLOCK_SANDBOX_MODE (or set it to workspace-write)"
		case LayerFlag:
			fix = "run without --sandbox full-access (--sandbox workspace-write)"
		}
		addRed("sandbox_mode is full-access"+sourceSuffix(p, KeyMode)+": commands run with all of your user's access and nothing confines them", fix)
	}
	if st.Backend == BackendNameApp {
		fix := firstFixOf(st)
		if Backend(st.Requested) == BackendApp {
			fix = `set backend = "auto" under [sandbox] in config.toml, so the OS sandbox confines commands when it is available`
		}
		addRed("no OS sandbox confines commands: only the application layer checks them before they run", fix)
	}
	if st.Backend == BackendNameLandlock {
		reason := "Landlock fallback: bubblewrap cannot create its namespaces, so processes, the network and hidden paths are not isolated as with bubblewrap"
		fix := "install bubblewrap: apt install bubblewrap"
		if bw, ok := probe(ProbeBwrap); ok && !bw.OK {
			reason = "Landlock fallback: bubblewrap is missing (" + bw.Detail + "), so processes, the network and hidden paths are not isolated as with bubblewrap"
			fix = bw.Fix
		} else if ns, ok := probe(ProbeUserNS); ok && !ns.OK {
			reason = "Landlock fallback: no user namespaces (" + ns.Detail + ")"
			fix = ns.Fix
		}
		addAmber(reason, fix)
	}
	if st.Backend == BackendNameBwrap && p.Network.On() {
		if stack, ok := probe(ProbeNetStack); ok && !stack.OK {
			addAmber("network_access = true asks for a network namespace of the run's own, but "+stack.Detail, stack.Fix)
		}
	}
	if p.Network != NetworkOff && p.Mode != ModeFullAccess && (st.Backend == BackendNameLandlock || st.Backend == BackendNameSeatbelt) {
		addAmber("network_access = "+string(p.Network)+" needs bubblewrap's network namespace: with "+BackendWords(st.Backend)+" those runs get no network of their own",
			"install bubblewrap and slirp4netns (apt install bubblewrap slirp4netns) with unprivileged user namespaces allowed")
	}
	if lim, ok := probe(ProbeLimits); ok && !lim.OK && st.Error == "" && p.Mode != ModeFullAccess {
		addAmber(lim.Detail, lim.Fix)
	}
	switch {
	case len(red) > 0:
		words := "not sandboxed"
		if st.Error != "" && p.Mode != ModeFullAccess {
			words = "sandbox unavailable"
		}
		return Indicator{Level: api.IndicatorRed, Words: words, Reasons: append(red, amber...), Fix: redFix}
	case len(amber) > 0:
		return Indicator{Level: api.IndicatorAmber, Words: BackendWords(st.Backend) + " (degraded)", Reasons: amber, Fix: amberFix}
	default:
		return Indicator{Level: api.IndicatorGreen, Words: BackendWords(st.Backend)}
	}
}

// sourceSuffix names the layer that set key, " (config.toml)", or "" when unknown.
func sourceSuffix(p Policy, key string) string {
	if s, ok := p.Sources[key]; ok && s.Layer != "" {
		return " (" + s.String() + ")"
	}
	return ""
}

// firstFixOf is the first failing probe's way out.
func firstFixOf(st Status) string {
	for _, pr := range st.Probes {
		if !pr.OK && pr.Fix != "" {
			return pr.Fix
		}
	}
	return ""
}
