package egress

import "github.com/airlock-app/airlock/sandbox/egress/rules"

// The domain rules live in package rules (a leaf the configuration can import without
// the proxy); these names keep the proxy's API whole.
type (
	// Rule is one entry of allowed_domains or denied_domains (rules.Rule).
	Rule = rules.Rule
	// ListMatch says which list, if any, covers a destination (rules.ListMatch).
	ListMatch = rules.ListMatch
	// Policy is the compiled [network] section (rules.Policy).
	Policy = rules.Policy
)

// The list matches (rules.Unlisted, …).
const (
	Unlisted      = rules.Unlisted
	ListedAllowed = rules.ListedAllowed
	ListedDenied  = rules.ListedDenied
)

// ErrInvalidHost is rules.ErrInvalidHost.
var ErrInvalidHost = rules.ErrInvalidHost

// ParseRule is rules.ParseRule.
func ParseRule(s string) (Rule, error) { return rules.ParseRule(s) }

// NewPolicy is rules.NewPolicy.
func NewPolicy(allowed, denied []string, allowLocal bool) (*Policy, error) {
	return rules.NewPolicy(allowed, denied, allowLocal)
}

// NormalizeHost is rules.NormalizeHost.
func NormalizeHost(host string) (name string, isIP bool, err error) { return rules.NormalizeHost(host) }
