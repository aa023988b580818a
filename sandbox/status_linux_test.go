package sandbox

import (
	"context"
	"strings"
	"testing"
)

func TestProbeStatusThisMachine(t *testing.T) {
	st := ProbeStatus(context.Background(), BackendAuto)
	for _, name := range []string{ProbeBwrap, ProbeUserNS, ProbeLandlock, ProbeSeccomp, ProbeKVM, ProbeNetStack} {
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

// TestNetworkStatus: the status says what network_access = true gives with each
// backend, and never promises a network namespace of the run's own where none is made.
func TestNetworkStatus(t *testing.T) {
	stackOK := Probe{Name: ProbeNetStack, OK: true}
	stackMissing := Probe{Name: ProbeNetStack, Fix: "install slirp4netns: apt install slirp4netns"}
	tests := []struct {
		backend   string
		stack     Probe
		guarantee string // in Guarantees ("" none about the network on)
		limit     string // in Limitations
	}{
		{BackendNameBwrap, stackOK, "network on is a network namespace of the run's own", "reaches what any outside host could"},
		{BackendNameBwrap, stackMissing, "", "network_access = true runs are refused: slirp4netns"},
		{BackendNameLandlock, stackOK, "", "network_access = true runs are refused: Landlock gives no network namespace"},
		{BackendNameApp, stackOK, "", "the host's network as it is"},
	}
	for _, tt := range tests {
		st := Status{Backend: tt.backend}
		st.Guarantees, st.Limitations = guarantees(tt.backend, 6)
		networkStatus(&st, tt.stack)
		all := strings.Join(st.Guarantees, "\n")
		if tt.guarantee != "" && !strings.Contains(all, tt.guarantee) {
			t.Errorf("%s (stack %v): guarantees lack %q:\n%s", tt.backend, tt.stack.OK, tt.guarantee, all)
		}
		if tt.guarantee == "" && strings.Contains(all, "network on is") {
			t.Errorf("%s (stack %v): promises the network on:\n%s", tt.backend, tt.stack.OK, all)
		}
		if lim := strings.Join(st.Limitations, "\n"); !strings.Contains(lim, tt.limit) {
			t.Errorf("%s (stack %v): limitations lack %q:\n%s", tt.backend, tt.stack.OK, tt.limit, lim)
		}
	}
	// What an allowlist gives: the proxy under bubblewrap, nothing elsewhere.
	for _, b := range []string{BackendNameBwrap, BackendNameLandlock, BackendNameApp} {
		st := Status{Backend: b}
		networkStatus(&st, stackOK)
		promised := strings.Contains(strings.Join(st.Guarantees, "\n"), `"allowlist" is a network namespace of the run's own whose only way out is Airlock's egress proxy`)
		if promised != (b == BackendNameBwrap) {
			t.Errorf("%s: promises the allowlist's proxy: %v", b, promised)
		}
		if b != BackendNameBwrap && !strings.Contains(strings.Join(st.Limitations, "\n"), `"allowlist" gives no network with this backend`) {
			t.Errorf("%s: limitations do not say an allowlist gives no network:\n%s", b, strings.Join(st.Limitations, "\n"))
		}
	}
	if st := ProbeStatus(context.Background(), BackendAuto); st.Backend == BackendNameBwrap && slirpPath() != "" && !st.Probe(ProbeNetStack).OK {
		t.Errorf("slirp4netns is installed but its probe failed: %+v", st.Probe(ProbeNetStack))
	}
}
