package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// netp is a network layer value from the old boolean, for tests written with it.
func netp(on bool) *NetworkMode {
	n := api.NetworkFromBool(on)
	return &n
}

func netv(n NetworkMode) *NetworkMode { return &n }

// TestResolveNetworkThreeValues: network_access is one setting with three values, set by
// any layer, with the usual precedence and the mode's implications.
func TestResolveNetworkThreeValues(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		in   Inputs
		want NetworkMode
		from string
	}{
		{"default", Inputs{}, NetworkOff, LayerDefault},
		{"file allowlist", Inputs{File: Layer{Network: netv(NetworkAllowlist)}}, NetworkAllowlist, LayerFile},
		{"file on", Inputs{File: Layer{Network: netv(NetworkOn)}}, NetworkOn, LayerFile},
		{"env allowlist over file on", Inputs{File: Layer{Network: netv(NetworkOn)}, Env: envMap(map[string]string{EnvNetwork: "allowlist"})}, NetworkAllowlist, LayerEnv},
		{"env true (the old spelling) is on", Inputs{Env: envMap(map[string]string{EnvNetwork: "true"})}, NetworkOn, LayerEnv},
		{"env off over file allowlist", Inputs{File: Layer{Network: netv(NetworkAllowlist)}, Env: envMap(map[string]string{EnvNetwork: "off"})}, NetworkOff, LayerEnv},
		{"flag allowlist over env on", Inputs{Flags: Layer{Network: netv(NetworkAllowlist)}, Env: envMap(map[string]string{EnvNetwork: "on"})}, NetworkAllowlist, LayerFlag},
		{"flag on over file allowlist", Inputs{Flags: Layer{Network: netv(NetworkOn)}, File: Layer{Network: netv(NetworkAllowlist)}}, NetworkOn, LayerFlag},
		{"read-only forces an allowlist off", Inputs{Flags: Layer{Mode: sp("read-only"), Network: netv(NetworkAllowlist)}}, NetworkOff, LayerFlag},
		{"full-access implies on over an allowlist", Inputs{File: Layer{Mode: sp("full-access"), Network: netv(NetworkAllowlist)}}, NetworkOn, LayerFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := resolveCase(t, dir, &tt.in)
			if p.Network != tt.want || p.Sources[KeyNetwork].Layer != tt.from {
				t.Errorf("network = %q from %+v, want %q from %s", p.Network, p.Sources[KeyNetwork], tt.want, tt.from)
			}
			g, err := ResolveGlobal(tt.in)
			if err != nil || g.Network != p.Network {
				t.Errorf("ResolveGlobal says %q (%v), Resolve %q", g.Network, err, p.Network)
			}
		})
	}
	_, err := Resolve(Inputs{Cwd: dir, Env: envMap(map[string]string{EnvNetwork: "sometimes"})})
	if err == nil || !strings.Contains(err.Error(), "allowlist") || !strings.Contains(err.Error(), EnvNetwork) {
		t.Errorf("a bad AIRLOCK_NETWORK: %v", err)
	}
}

// TestProjectTightensTheNetwork: an untrusted project file moves the network only
// towards off (on → allowlist → off) and narrows the lists; a trusted one applies.
func TestProjectTightensTheNetwork(t *testing.T) {
	file := Layer{NetworkTable: NetworkTable{AllowedDomains: []string{"api.anthropic.com", "*.npmjs.org", "example.com"}, DeniedDomains: []string{"evil.example"}}}
	tests := []struct {
		name, project string
		base          NetworkMode
		want          NetworkMode
		allowed       []string
		denied        []string
		ignored       []string // keys the project asked for and did not get
	}{
		{"a project cannot turn an allowlist on", "[sandbox_workspace_write]\nnetwork_access = true\n", NetworkAllowlist, NetworkAllowlist, nil, nil, []string{KeyNetwork}},
		{"a project cannot turn off into an allowlist", "[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n", NetworkOff, NetworkOff, nil, nil, []string{KeyNetwork}},
		{"a project turns on into an allowlist", "[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n", NetworkOn, NetworkAllowlist, nil, nil, nil},
		{"a project turns an allowlist off", "[sandbox_workspace_write]\nnetwork_access = false\n", NetworkAllowlist, NetworkOff, nil, nil, nil},
		{"a project's \"on\" is not a TOML value of network_access", "[sandbox_workspace_write]\nnetwork_access = \"on\"\n", NetworkAllowlist, NetworkAllowlist, nil, nil, []string{"sandbox_workspace_write.network_access"}},
		{"allowed domains only shrink", "[network]\nallowed_domains = [\"API.Anthropic.com.\", \"pypi.org\"]\n", NetworkAllowlist, NetworkAllowlist,
			[]string{"api.anthropic.com"}, []string{"evil.example"}, []string{"network.allowed_domains"}},
		{"denied domains only grow", "[network]\ndenied_domains = [\"*.npmjs.org\"]\n", NetworkAllowlist, NetworkAllowlist,
			[]string{"api.anthropic.com", "*.npmjs.org", "example.com"}, []string{"evil.example", "*.npmjs.org"}, nil},
		{"ask_unknown may turn off, allow_local may not turn on", "[network]\nask_unknown = false\nallow_local = true\n", NetworkAllowlist, NetworkAllowlist,
			nil, nil, []string{"network.allow_local"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pp := writeProject(t, dir, tt.project)
			in := Inputs{Cwd: dir, Env: envMap(nil), File: file, Flags: Layer{Network: netv(tt.base)}, Project: []*ProjectPolicy{pp}}
			p, err := Resolve(in)
			if err != nil {
				t.Fatal(err)
			}
			if p.Network != tt.want {
				t.Errorf("network %q, want %q (%+v)", p.Network, tt.want, p.Sources[KeyNetwork])
			}
			if tt.allowed != nil && !slices.Equal(p.Allowlist.AllowedDomains, tt.allowed) {
				t.Errorf("allowed %q, want %q", p.Allowlist.AllowedDomains, tt.allowed)
			}
			if tt.denied != nil && !slices.Equal(p.Allowlist.DeniedDomains, tt.denied) {
				t.Errorf("denied %q, want %q", p.Allowlist.DeniedDomains, tt.denied)
			}
			var keys []string
			for _, ig := range p.Ignored {
				keys = append(keys, ig.Key)
			}
			if !slices.Equal(keys, tt.ignored) {
				t.Errorf("ignored %v, want %v", p.Ignored, tt.ignored)
			}
			// Trusted, the project applies in full (but a flag still wins).
			in.TrustProject = true
			in.Flags = Layer{}
			tp, err := Resolve(in)
			if err != nil {
				t.Fatal(err)
			}
			if pp.Layer.Network != nil && tp.Network != *pp.Layer.Network {
				t.Errorf("trusted: network %q, want the project's %q", tp.Network, *pp.Layer.Network)
			}
			if a := pp.Layer.NetworkTable.AllowedDomains; a != nil && !slices.Equal(tp.Allowlist.AllowedDomains, a) {
				t.Errorf("trusted: allowed %q, want the project's %q", tp.Allowlist.AllowedDomains, a)
			}
		})
	}
	// The lists: defaults, and the file's.
	p, err := Resolve(Inputs{Cwd: t.TempDir(), Env: envMap(nil)})
	if err != nil || p.Allowlist == nil || len(p.Allowlist.AllowedDomains) != 0 || !p.Allowlist.AskUnknown || p.Allowlist.AllowLocal {
		t.Errorf("default lists: %+v %v", p.Allowlist, err)
	}
}

// TestResolveRefusesABadDomainRule: a bad entry (from the file, or a trusted project)
// is an error naming it and its layer.
func TestResolveRefusesABadDomainRule(t *testing.T) {
	for _, bad := range []string{"exa*mple.com", "127.1", "example.com:99999", ""} {
		_, err := Resolve(Inputs{Cwd: t.TempDir(), Env: envMap(nil), FilePath: "/etc/airlock.toml",
			File: Layer{NetworkTable: NetworkTable{AllowedDomains: []string{"ok.example", bad}}}})
		if err == nil || !strings.Contains(err.Error(), "allowed_domains") || !strings.Contains(err.Error(), "/etc/airlock.toml") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestAllowlistHasNoNetworkYet: until the egress proxy is connected, an allowlist is no
// network at every layer — the application layer's checks, bubblewrap's namespace,
// seccomp's socket filter — and an escalation turns it on for the call.
func TestAllowlistHasNoNetworkYet(t *testing.T) {
	dir := t.TempDir()
	p, err := Resolve(Inputs{Cwd: dir, Env: envMap(nil), Flags: Layer{Network: netv(NetworkAllowlist)}})
	if err != nil {
		t.Fatal(err)
	}
	err = p.CheckNetwork("api.anthropic.com")
	d, ok := IsDenied(err)
	if !ok || d.Reason != ReasonNetwork || !strings.Contains(err.Error(), "proxy is not connected") || d.Grant == nil || !d.Grant.Network {
		t.Fatalf("CheckNetwork under allowlist = %v", err)
	}
	if _, err := p.AnalyzeCommand("curl https://api.anthropic.com", dir); err == nil {
		t.Error("curl passed the application layer under an allowlist without its proxy")
	}
	args := bwrapArgs(p, mountPlan{}, dir, -1, -1)
	if !slices.Contains(args, "--unshare-net") {
		t.Errorf("bwrap args under allowlist lack --unshare-net: %v", args)
	}
	esc, err := p.Escalate(Grant{Network: true})
	if err != nil || esc.Network != NetworkOn || esc.Sources[KeyNetwork].Layer != LayerEscalation {
		t.Errorf("escalation from an allowlist: %q %+v %v", esc.Network, esc.Sources[KeyNetwork], err)
	}
}

// TestProjectFileNetworkValues: a project file's network_access takes what config.toml
// takes (false, true, "allowlist"); anything else is ignored with the reason.
func TestProjectFileNetworkValues(t *testing.T) {
	for _, tt := range []struct {
		body string
		want *NetworkMode
	}{
		{"[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n", netv(NetworkAllowlist)},
		{"[sandbox_workspace_write]\nnetwork_access = false\n", netv(NetworkOff)},
		{"[sandbox_workspace_write]\nnetwork_access = true\n", netv(NetworkOn)},
		{"[sandbox_workspace_write]\nnetwork_access = 1\n", nil},
	} {
		pp := writeProject(t, t.TempDir(), tt.body)
		if (pp.Layer.Network == nil) != (tt.want == nil) || (tt.want != nil && *pp.Layer.Network != *tt.want) {
			t.Errorf("%q: network %v, want %v", tt.body, pp.Layer.Network, tt.want)
		}
		if tt.want == nil && (len(pp.Ignored) != 1 || !strings.Contains(pp.Ignored[0].Reason, "allowlist")) {
			t.Errorf("%q: ignored %v", tt.body, pp.Ignored)
		}
	}
}
