package sandbox

import "github.com/airlock-app/airlock/api"

// Report is what `airlock check` shows: what isolation would do with a command
// without running it.
type Report struct {
	Policy   Policy   `json:"policy"`
	Analysis Analysis `json:"analysis"`
	// Denied is the first denial (nil when the application layer lets it run).
	Denied *IsolationDeniedError `json:"denied,omitempty"`
	// Backend is what would confine it, per the probes (Status.Backend).
	Backend string `json:"backend"`
	// BwrapArgs are bubblewrap's arguments when Backend is bwrap.
	BwrapArgs []string `json:"bwrap_args,omitempty"`
	// Error is a sandbox set-up failure (e.g. a protected path behind a symlink).
	Error string `json:"error,omitempty"`
}

// Check reports what isolation would do with argv in cwd ("" = the policy's
// Cwd) under the status st (from ProbeStatus), without running anything.
func (p Policy) Check(argv []string, cwd string, st Status) Report {
	r := Report{Policy: p, Backend: st.Backend}
	line := api.ShellJoin(argv)
	if len(argv) == 1 {
		line = argv[0] // `airlock check -- 'cmd | other'`: one argument is a shell command line
	}
	a, err := p.AnalyzeCommand(line, cwd)
	r.Analysis = a
	if d, ok := IsDenied(err); ok {
		r.Denied = d
	}
	if p.Mode == ModeFullAccess {
		r.Backend = BackendNameNone
		return r
	}
	if r.Backend == BackendNameBwrap {
		args, err := BwrapArgs(p, nil, cwd)
		if err != nil {
			r.Error = err.Error()
		}
		r.BwrapArgs = args
	}
	return r
}
