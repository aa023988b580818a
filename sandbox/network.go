package sandbox

import (
	"fmt"
	"slices"

	"github.com/airlock-app/airlock/sandbox/egress/rules"
)

// NetworkLists is the effective [network] table: what a run under network_access =
// "allowlist" may reach through the egress proxy. Until the proxy is connected such a
// run has no network at all, whatever the lists say.
type NetworkLists struct {
	// AllowedDomains and DeniedDomains are rules as the egress proxy parses them
	// (rules.ParseRule: "example.com", "*.example.com" with its apex, an address, ":port").
	AllowedDomains []string `json:"allowed_domains"`
	DeniedDomains  []string `json:"denied_domains"`
	// AskUnknown: an unlisted domain raises a request instead of failing.
	AskUnknown bool `json:"ask_unknown"`
	// AllowLocal lets destinations resolving to loopback, private or link-local addresses through.
	AllowLocal bool `json:"allow_local"`
}

// Rules compiles the lists with the egress proxy's parser.
func (l NetworkLists) Rules() (*rules.Policy, error) {
	return rules.NewPolicy(l.AllowedDomains, l.DeniedDomains, l.AllowLocal)
}

// NetworkTable is one layer's [network] table. A nil field is "not set by this layer".
type NetworkTable struct {
	AllowedDomains []string
	DeniedDomains  []string
	AskUnknown     *bool
	AllowLocal     *bool
}

func (t NetworkTable) isZero() bool {
	return t.AllowedDomains == nil && t.DeniedDomains == nil && t.AskUnknown == nil && t.AllowLocal == nil
}

// DefaultNetworkLists are the safe defaults: nothing allowed, unknown domains ask,
// local destinations refused.
func DefaultNetworkLists() NetworkLists {
	return NetworkLists{AllowedDomains: []string{}, DeniedDomains: []string{}, AskUnknown: true}
}

// ValidateNetworkRule checks one allowed_domains or denied_domains entry with the proxy's
// parser; the error names the entry and how to write it.
func ValidateNetworkRule(s string) error {
	_, err := rules.ParseRule(s)
	return err
}

// applyTable replaces what t sets (a trusted layer).
func (l *NetworkLists) applyTable(t NetworkTable) {
	if t.AllowedDomains != nil {
		l.AllowedDomains = slices.Clone(t.AllowedDomains)
	}
	if t.DeniedDomains != nil {
		l.DeniedDomains = slices.Clone(t.DeniedDomains)
	}
	if t.AskUnknown != nil {
		l.AskUnknown = *t.AskUnknown
	}
	if t.AllowLocal != nil {
		l.AllowLocal = *t.AllowLocal
	}
}

// ruleKey is a rule's canonical spelling, so that "Example.COM." and "example.com" are
// the same entry when a project narrows the list.
func ruleKey(s string) string {
	r, err := rules.ParseRule(s)
	if err != nil {
		return ""
	}
	return r.String()
}

// tighten applies what an untrusted project's table may change: allowed_domains only
// shrink (an entry stays when the project lists it too), denied_domains only grow,
// ask_unknown and allow_local only turn off. It returns what it refused, by key.
func (l *NetworkLists) tighten(t NetworkTable) map[string]string {
	refused := map[string]string{}
	if t.AllowedDomains != nil {
		keep := map[string]bool{}
		for _, s := range t.AllowedDomains {
			if k := ruleKey(s); k != "" {
				keep[k] = true
			}
		}
		var kept []string
		for _, s := range l.AllowedDomains {
			if keep[ruleKey(s)] {
				kept = append(kept, s)
				delete(keep, ruleKey(s))
			}
		}
		if len(keep) > 0 {
			extra := make([]string, 0, len(keep))
			for k := range keep {
				extra = append(extra, k)
			}
			slices.Sort(extra)
			refused["network.allowed_domains"] = fmt.Sprintf("%v not in the trusted allowed_domains: a project may only remove domains", extra)
		}
		if kept == nil {
			kept = []string{}
		}
		l.AllowedDomains = kept
	}
	for _, s := range t.DeniedDomains {
		if err := ValidateNetworkRule(s); err != nil {
			refused["network.denied_domains"] = err.Error()
			continue
		}
		if !slices.Contains(l.DeniedDomains, s) {
			l.DeniedDomains = append(slices.Clone(l.DeniedDomains), s)
		}
	}
	if t.AskUnknown != nil {
		if !*t.AskUnknown {
			l.AskUnknown = false
		} else if !l.AskUnknown {
			refused["network.ask_unknown"] = "asking about unknown domains is not tightening"
		}
	}
	if t.AllowLocal != nil {
		if !*t.AllowLocal {
			l.AllowLocal = false
		} else if !l.AllowLocal {
			refused["network.allow_local"] = "reaching local addresses is not tightening"
		}
	}
	return refused
}
