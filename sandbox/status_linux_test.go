package sandbox

import (
	"context"
	"strings"
	"testing"
)

func TestProbeStatusThisMachine(t *testing.T) {
	st := ProbeStatus(context.Background(), BackendAuto)
	for _, name := range []string{ProbeBwrap, ProbeUserNS, ProbeLandlock, ProbeSeccomp, ProbeKVM} {
		p := st.Probe(name)
		if p.Name == "" {
			t.Fatalf("probe %s missing: %+v", name, st.Probes)
		}
		if !p.OK && p.Fix == "" {
			t.Errorf("probe %s failed without a fix sentence: %+v", name, p)
		}
	}
	if st.Probe(ProbeBwrap).OK && st.Probe(ProbeUserNS).OK && st.Backend != BackendNameBwrap {
		t.Errorf("bwrap usable but backend = %s", st.Backend)
	}
	if st.Backend == BackendNameBwrap && !strings.Contains(st.Probe(ProbeBwrap).Detail, "bubblewrap") {
		t.Errorf("bwrap detail lacks its version: %q", st.Probe(ProbeBwrap).Detail)
	}
	if len(st.Guarantees) == 0 {
		t.Error("no guarantees listed")
	}
}

// TestProbeStatusWithoutBwrap removes bwrap from PATH, as `airlock sandbox status` would see it.
func TestProbeStatusWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	st := ProbeStatus(context.Background(), BackendAuto)
	bw := st.Probe(ProbeBwrap)
	if bw.OK || bw.Fix != "install bubblewrap: apt install bubblewrap" {
		t.Fatalf("bwrap probe without bwrap = %+v", bw)
	}
	if landlockABI() > 0 {
		if st.Backend != BackendNameLandlock || len(st.Limitations) == 0 {
			t.Fatalf("backend = %s limitations %q, want landlock with its limitations stated", st.Backend, st.Limitations)
		}
	}
	st = ProbeStatus(context.Background(), BackendApp)
	if st.Backend != BackendNameApp || st.Warning == "" {
		t.Fatalf("app backend status = %+v", st)
	}
}

func TestChooseBackend(t *testing.T) {
	ok := func(n string) Probe { return Probe{Name: n, OK: true} }
	bad := func(n string) Probe { return Probe{Name: n, Fix: "fix " + n} }
	tests := []struct {
		req                Backend
		bw, ns, ll, sc     Probe
		backend, wantError string
		warn               bool
	}{
		{BackendAuto, ok("b"), ok("n"), ok("l"), ok("s"), BackendNameBwrap, "", false},
		{BackendAuto, ok("b"), bad("n"), ok("l"), ok("s"), BackendNameLandlock, "", false},
		{BackendAuto, bad("b"), bad("n"), bad("l"), ok("s"), BackendNameApp, "", true},
		{BackendOS, bad("b"), bad("n"), bad("l"), ok("s"), "", "fix b", false},
		{BackendOS, bad("b"), bad("n"), ok("l"), ok("s"), BackendNameLandlock, "", false},
		{BackendApp, ok("b"), ok("n"), ok("l"), ok("s"), BackendNameApp, "", true},
	}
	for i, tt := range tests {
		st := Status{Requested: string(tt.req)}
		chooseBackend(&st, tt.bw, tt.ns, tt.ll, tt.sc)
		if st.Backend != tt.backend || (tt.wantError != "") != (st.Error != "") || !strings.Contains(st.Error, tt.wantError) || tt.warn != (st.Warning != "") {
			t.Errorf("case %d: status = %+v", i, st)
		}
		if tt.warn && tt.req == BackendAuto && !strings.HasPrefix(st.Warning, "WARNING") {
			t.Errorf("case %d: fallback warning is not loud: %q", i, st.Warning)
		}
	}
}
