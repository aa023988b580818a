package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// TestNetworkAccessInTheFile: network_access takes false, true or "allowlist"; anything
// else is a problem at the value's line and column naming the three choices.
func TestNetworkAccessInTheFile(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want api.NetworkAccess
	}{
		{"[sandbox_workspace_write]\nnetwork_access = false\n", api.NetworkOff},
		{"[sandbox_workspace_write]\nnetwork_access = true\n", api.NetworkOn},
		{"[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n", api.NetworkAllowlist},
	} {
		f, err := Parse("config.toml", []byte(tt.src))
		if err != nil {
			t.Fatalf("%q: %v", tt.src, err)
		}
		if n := f.SandboxWorkspaceWrite.Network(); n == nil || *n != tt.want {
			t.Errorf("%q: network %v, want %q", tt.src, n, tt.want)
		}
	}
	if f, err := Parse("config.toml", nil); err != nil || f.SandboxWorkspaceWrite.Network() != nil {
		t.Errorf("absent: %v %v", f.SandboxWorkspaceWrite.Network(), err)
	}
	for _, tt := range []struct {
		src       string
		line, col int
		shows     string
	}{
		{"[sandbox_workspace_write]\nnetwork_access = \"on\"\n", 2, 18, `"on"`},
		{"[sandbox_workspace_write]\nnetwork_access = \"Allowlist\"\n", 2, 18, `"Allowlist"`},
		{"\n[sandbox_workspace_write]\n  network_access = 1\n", 3, 20, "= 1 "},
		{"[sandbox_workspace_write]\nnetwork_access = [\"allowlist\"]\n", 2, 1, "allowlist"}, // a list: at its key
	} {
		_, err := Parse("config.toml", []byte(tt.src))
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) != 1 {
			t.Fatalf("%q: %v, want one problem", tt.src, err)
		}
		p := ce.Problems[0]
		if p.Line != tt.line || p.Column != tt.col || p.Key != "sandbox_workspace_write.network_access" {
			t.Errorf("%q: at %d:%d (%s), want %d:%d", tt.src, p.Line, p.Column, p.Key, tt.line, tt.col)
		}
		for _, want := range []string{tt.shows, "false", `"allowlist"`, "true"} {
			if !strings.Contains(p.Message, want) {
				t.Errorf("%q: message %q does not say %s", tt.src, p.Message, want)
			}
		}
	}
}

// TestNetworkTableInTheFile: [network]'s lists are checked with the egress proxy's rule
// parser; a bad entry is a problem naming it, at its key's line.
func TestNetworkTableInTheFile(t *testing.T) {
	good := `[network]
allowed_domains = ["api.anthropic.com", "*.npmjs.org", "203.0.113.5:443"]
denied_domains  = ["evil.example"]
ask_unknown     = false
allow_local     = true
`
	f, err := Parse("config.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Network.AllowedDomains, []string{"api.anthropic.com", "*.npmjs.org", "203.0.113.5:443"}) || *f.Network.AskUnknown || !*f.Network.AllowLocal {
		t.Errorf("parsed %+v", f.Network)
	}
	for _, tt := range []struct {
		src, entry string
		line       int
	}{
		{"[network]\nallowed_domains = [\"ok.example\", \"exa*mple.com\"]\n", "exa*mple.com", 2},
		{"[network]\n\ndenied_domains = [\"127.1\"]\n", "127.1", 3},
		{"[network]\nallowed_domains = [\"example.com:0\"]\n", "example.com:0", 2},
	} {
		_, err := Parse("config.toml", []byte(tt.src))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("%q: %v", tt.src, err)
		}
		p := ce.Problems[0]
		if p.Line != tt.line || !strings.Contains(p.Message, `"`+tt.entry+`"`) || !strings.Contains(p.Message, "*.example.com") {
			t.Errorf("%q: %d:%d %s", tt.src, p.Line, p.Column, p.Message)
		}
	}
	if _, err := Parse("config.toml", []byte("[network]\nallowed = []\n")); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("unknown [network] key: %v", err)
	}
}

// TestEffectiveNetwork: config show's view of the network: the value as config.toml
// writes it with the layer that set it, and the [network] keys.
func TestEffectiveNetwork(t *testing.T) {
	f, err := Parse("/c.toml", []byte("[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n[network]\nallowed_domains = [\"pypi.org\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	get := func(s []Setting, key string) Setting {
		for _, x := range s {
			if x.Key == key {
				return x
			}
		}
		t.Fatalf("no %s in %v", key, s)
		return Setting{}
	}
	s, err := Effective(f, "/c.toml", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := get(s, "sandbox_workspace_write.network_access"); n.Value != "allowlist" || n.Layer != LayerFile {
		t.Errorf("network_access %+v", n)
	}
	if a := get(s, "network.allowed_domains"); !slices.Equal(a.Value.([]string), []string{"pypi.org"}) || a.Layer != LayerFile {
		t.Errorf("allowed_domains %+v", a)
	}
	if a := get(s, "network.ask_unknown"); a.Value != true || a.Layer != LayerDefault {
		t.Errorf("ask_unknown %+v", a)
	}
	for env, want := range map[string]any{"allowlist": "allowlist", "true": true, "off": false} {
		s, err := Effective(f, "/c.toml", func(k string) string {
			if k == "AIRLOCK_NETWORK" {
				return env
			}
			return ""
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := get(s, "sandbox_workspace_write.network_access"); n.Value != want || n.Layer != LayerEnv {
			t.Errorf("AIRLOCK_NETWORK=%s: %+v", env, n)
		}
	}
	if _, err := Effective(f, "/c.toml", func(k string) string { return map[string]string{"AIRLOCK_NETWORK": "maybe"}[k] }, nil); err == nil || !strings.Contains(err.Error(), "allowlist") {
		t.Errorf("AIRLOCK_NETWORK=maybe: %v", err)
	}
}
