package sandbox

import (
	"slices"
	"testing"
)

// A run's own allowlist addition (an agent task's model API) widens only an allowlist
// policy, keeps the configured lists as they were, and says where it came from.
func TestWithRunAllowed(t *testing.T) {
	lists := NetworkLists{AllowedDomains: []string{"pypi.org"}, DeniedDomains: []string{"evil.test"}}
	for _, tc := range []struct {
		name    string
		network NetworkMode
		want    []string // the allowed domains after; nil: no lists at all
	}{
		{"allowlist", NetworkAllowlist, []string{"pypi.org", "api.example:8443"}},
		{"off stays off", NetworkOff, []string{"pypi.org"}},
		{"on needs no list", NetworkOn, []string{"pypi.org"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := lists
			p := Policy{Network: tc.network, Allowlist: &l}
			got := p.WithRunAllowed([]string{"api.example:8443"}, "the agent task's model API")
			if got.Network != tc.network || !slices.Equal(got.Allowlist.AllowedDomains, tc.want) || !slices.Equal(got.Allowlist.DeniedDomains, []string{"evil.test"}) {
				t.Errorf("WithRunAllowed = %v %+v", got.Network, got.Allowlist)
			}
			if !slices.Equal(l.AllowedDomains, []string{"pypi.org"}) {
				t.Errorf("the configured lists changed: %q", l.AllowedDomains)
			}
			if tc.network == NetworkAllowlist && got.Sources[KeyNetworkLists].Layer != LayerRun {
				t.Errorf("the addition's source: %+v", got.Sources)
			}
		})
	}
}
