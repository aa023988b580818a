// Package rules is the egress proxy's domain rules: parsing allowed_domains and
// denied_domains entries, normalising hosts, and matching a destination against the
// lists. It is a leaf without the proxy's dependencies, so the configuration and the
// sandbox's resolution validate [network] with the proxy's own parser without linking
// the proxy (its HTTP library costs most of a millisecond at start-up).
package rules

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Rule is one entry of allowed_domains or denied_domains.
type Rule struct {
	// Name is the normalised host, without the "*." of a wildcard.
	Name string
	// Wildcard: the rule was "*.Name" and matches Name and every name below it.
	Wildcard bool
	// IsIP: Name is an IP literal, matched only by the same address.
	IsIP bool
	// Port, when not zero, restricts the rule to that port.
	Port int
}

// String returns the rule as it is written in config.toml.
func (r Rule) String() string {
	s := r.Name
	if r.Wildcard {
		s = "*." + s
	}
	if r.Port != 0 {
		if strings.Contains(s, ":") {
			s = "[" + s + "]"
		}
		s += ":" + strconv.Itoa(r.Port)
	}
	return s
}

// ParseRule parses one list entry: "example.com", "*.example.com" (the apex included),
// "203.0.113.5", "2001:db8::1" or "[2001:db8::1]", each optionally with ":port".
func ParseRule(s string) (Rule, error) {
	raw := strings.TrimSpace(s)
	host, port := raw, 0
	switch {
	case strings.HasPrefix(raw, "[") && !strings.HasSuffix(raw, "]"):
		h, p, err := net.SplitHostPort(raw)
		if err != nil {
			return Rule{}, fmt.Errorf("%w: rule %q: %v", ErrInvalidHost, s, err)
		}
		n, err := parsePort(p)
		if err != nil {
			return Rule{}, fmt.Errorf("%w: rule %q: %v", ErrInvalidHost, s, err)
		}
		host, port = h, n
	case strings.Count(raw, ":") == 1:
		h, p, _ := strings.Cut(raw, ":")
		n, err := parsePort(p)
		if err != nil {
			return Rule{}, fmt.Errorf("%w: rule %q: %v", ErrInvalidHost, s, err)
		}
		host, port = h, n
	}
	wild := false
	if strings.HasPrefix(host, "*.") {
		wild, host = true, host[2:]
	}
	if strings.Contains(host, "*") {
		return Rule{}, fmt.Errorf("%w: rule %q: a wildcard is only allowed as a leading \"*.\" (write \"*.example.com\")", ErrInvalidHost, s)
	}
	name, isIP, err := NormalizeHost(host)
	if err != nil {
		return Rule{}, fmt.Errorf("rule %q: %w", s, err)
	}
	if wild && isIP {
		return Rule{}, fmt.Errorf("%w: rule %q: an IP address cannot have a wildcard", ErrInvalidHost, s)
	}
	return Rule{Name: name, Wildcard: wild, IsIP: isIP, Port: port}, nil
}

func parsePort(p string) (int, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return n, nil
}

// Matches reports whether the rule covers a normalised destination.
func (r Rule) Matches(name string, isIP bool, port int) bool {
	if r.Port != 0 && r.Port != port {
		return false
	}
	if r.IsIP != isIP {
		return false
	}
	if name == r.Name {
		return true
	}
	return r.Wildcard && strings.HasSuffix(name, "."+r.Name)
}

// ListMatch says which list, if any, covers a destination.
type ListMatch int

const (
	// Unlisted: neither list covers the destination.
	Unlisted ListMatch = iota
	// ListedAllowed: allowed_domains covers it and denied_domains does not.
	ListedAllowed
	// ListedDenied: denied_domains covers it (whatever allowed_domains says).
	ListedDenied
)

// Policy is the compiled [network] section.
type Policy struct {
	Allowed    []Rule
	Denied     []Rule
	AllowLocal bool
}

// NewPolicy compiles allowed_domains and denied_domains; the error names the first bad
// entry.
func NewPolicy(allowed, denied []string, allowLocal bool) (*Policy, error) {
	p := &Policy{AllowLocal: allowLocal}
	for _, s := range allowed {
		r, err := ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("allowed_domains: %w", err)
		}
		p.Allowed = append(p.Allowed, r)
	}
	for _, s := range denied {
		r, err := ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("denied_domains: %w", err)
		}
		p.Denied = append(p.Denied, r)
	}
	return p, nil
}

// Match classifies a normalised destination; denied_domains always win.
func (p *Policy) Match(name string, isIP bool, port int) ListMatch {
	for _, r := range p.Denied {
		if r.Matches(name, isIP, port) {
			return ListedDenied
		}
	}
	for _, r := range p.Allowed {
		if r.Matches(name, isIP, port) {
			return ListedAllowed
		}
	}
	return Unlisted
}
