package rules

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// ErrInvalidHost is wrapped by every error NormalizeHost and ParseRule return for a
// name that is not a usable host.
var ErrInvalidHost = errors.New("invalid host")

// idnaProfile maps a name the way a resolver would look it up (UTS #46: case folding,
// full-width forms, IDNA 2008 validation) and refuses what DNS cannot carry.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.ValidateLabels(true),
	idna.VerifyDNSLength(true),
	idna.StrictDomainName(true),
	idna.Transitional(false),
)

// NormalizeHost returns the canonical form of a destination host, and whether it is an
// IP literal. Names come back in lower-case ASCII (punycode for international names)
// without a trailing dot; IP literals come back as netip prints them, IPv4-mapped IPv6
// addresses as their IPv4 form, without brackets.
func NormalizeHost(host string) (name string, isIP bool, err error) {
	h := strings.TrimSpace(host)
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return "", false, fmt.Errorf("%w: empty host", ErrInvalidHost)
	}
	if !utf8.ValidString(h) {
		return "", false, fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidHost, host)
	}
	if a, ok, err := parseIP(h); ok || err != nil {
		return a, ok, err
	}
	h = strings.TrimSuffix(h, ".")
	ascii, err := idnaProfile.ToASCII(h)
	if err != nil {
		return "", false, fmt.Errorf("%w: %q: %v", ErrInvalidHost, host, err)
	}
	// The mapping can turn full-width digits and dots into an IP literal.
	if a, ok, err := parseIP(ascii); ok || err != nil {
		return a, ok, err
	}
	if ascii == "" || strings.HasSuffix(ascii, ".") || strings.Contains(ascii, "..") {
		return "", false, fmt.Errorf("%w: %q has an empty label", ErrInvalidHost, host)
	}
	// A name must be its own normal form, or two spellings could mean two things.
	if again, err := idnaProfile.ToASCII(ascii); err != nil || again != ascii {
		return "", false, fmt.Errorf("%w: %q does not survive IDNA normalisation", ErrInvalidHost, host)
	}
	labels := strings.Split(ascii, ".")
	if looksNumeric(labels[len(labels)-1]) {
		return "", false, fmt.Errorf("%w: %q looks like an IP address in a non-standard form; write the address in dotted or IPv6 form", ErrInvalidHost, host)
	}
	return ascii, false, nil
}

// parseIP recognises an IP literal. A zoned IPv6 address is refused: a zone names an
// interface of this machine, which is never a destination of the proxy.
func parseIP(h string) (string, bool, error) {
	a, err := netip.ParseAddr(h)
	if err != nil {
		return "", false, nil
	}
	if a.Zone() != "" {
		return "", false, fmt.Errorf("%w: %q has an IPv6 zone", ErrInvalidHost, h)
	}
	return a.Unmap().String(), true, nil
}

// looksNumeric reports a top label that only a lenient address parser (inet_aton)
// would read as a number: decimal, octal or hexadecimal digits. No real TLD is one.
func looksNumeric(label string) bool {
	l := strings.TrimPrefix(strings.TrimPrefix(label, "0x"), "0X")
	if l == "" {
		return label != ""
	}
	if _, err := strconv.ParseUint(l, 10, 64); err == nil {
		return true
	}
	if l != label {
		if _, err := strconv.ParseUint(l, 16, 64); err == nil {
			return true
		}
	}
	return false
}
