package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		in     string
		want   string
		wantIP bool
		bad    bool
	}{
		{in: "Example.COM", want: "example.com"},
		{in: "example.com.", want: "example.com"},
		{in: "example.com..", bad: true},
		{in: ".example.com", bad: true},
		{in: "a..b.com", bad: true},
		{in: "", bad: true},
		{in: "bücher.example", want: "xn--bcher-kva.example"},
		{in: "BÜCHER.example", want: "xn--bcher-kva.example"},
		{in: "xn--bcher-kva.example", want: "xn--bcher-kva.example"},
		{in: "ｅｘａｍｐｌｅ．ｃｏｍ", want: "example.com"}, // full-width letters and dot
		{in: "１２７．０．０．１", want: "127.0.0.1", wantIP: true},
		{in: "127.0.0.1", want: "127.0.0.1", wantIP: true},
		{in: "[::1]", want: "::1", wantIP: true},
		{in: "::ffff:127.0.0.1", want: "127.0.0.1", wantIP: true},
		{in: "2001:DB8::1", want: "2001:db8::1", wantIP: true},
		{in: "fe80::1%eth0", bad: true},
		{in: "127.1", bad: true},
		{in: "2130706433", bad: true},
		{in: "0x7f.0x1", bad: true},
		{in: "0x7f000001", bad: true},
		{in: "1.2.3.0x4", bad: true},
		{in: "under_score.example", bad: true},
		{in: "exa mple.com", bad: true},
		{in: strings.Repeat("a", 64) + ".com", bad: true},
		{in: "0xcafe.com", want: "0xcafe.com"},
		{in: "123.example", want: "123.example"},
	}
	for _, tt := range tests {
		got, isIP, err := NormalizeHost(tt.in)
		if tt.bad {
			if !errors.Is(err, ErrInvalidHost) {
				t.Errorf("NormalizeHost(%q) = %q, %v, want an ErrInvalidHost", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want || isIP != tt.wantIP {
			t.Errorf("NormalizeHost(%q) = %q, %v, %v; want %q, %v", tt.in, got, isIP, err, tt.want, tt.wantIP)
		}
	}
}

func TestParseRuleErrors(t *testing.T) {
	for _, s := range []string{"*", "*.", "a.*.com", "*example.com", "example.*", "*.127.0.0.1", "example.com:0", "example.com:99999", "example.com:http", "[::1]:x", "127.1"} {
		if _, err := ParseRule(s); !errors.Is(err, ErrInvalidHost) {
			t.Errorf("ParseRule(%q) error = %v, want ErrInvalidHost", s, err)
		}
	}
	_, err := NewPolicy([]string{"ok.com", "a.*.com"}, nil, false)
	if err == nil || !strings.Contains(err.Error(), `"a.*.com"`) || !strings.Contains(err.Error(), "allowed_domains") {
		t.Errorf("NewPolicy error %v should name the list and the bad entry", err)
	}
}

func TestPolicyMatch(t *testing.T) {
	p, err := NewPolicy(
		[]string{"api.anthropic.com", "*.npmjs.org", "*.Example.COM.", "only443.test:443", "203.0.113.5", "[2001:db8::1]:8443", "*.bücher.example"},
		[]string{"evil.npmjs.org", "*.bad.example.com", "example.com:25"},
		false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		port int
		want ListMatch
	}{
		{"api.anthropic.com", 443, ListedAllowed},
		{"API.Anthropic.com.", 443, ListedAllowed},
		{"x.api.anthropic.com", 443, Unlisted}, // no wildcard: exact only
		{"anthropic.com", 443, Unlisted},
		{"npmjs.org", 443, ListedAllowed}, // *.x covers x
		{"registry.npmjs.org", 443, ListedAllowed},
		{"a.b.npmjs.org", 80, ListedAllowed},
		{"evilnpmjs.org", 443, Unlisted}, // suffix on a label boundary only
		{"evil.npmjs.org", 443, ListedDenied},
		{"bad.example.com", 443, ListedDenied}, // denied wildcard covers its apex too
		{"x.bad.example.com", 443, ListedDenied},
		{"good.example.com", 443, ListedAllowed},
		{"example.com", 25, ListedDenied},
		{"example.com", 587, ListedAllowed},
		{"only443.test", 443, ListedAllowed},
		{"only443.test", 80, Unlisted},
		{"203.0.113.5", 1234, ListedAllowed},
		{"::ffff:203.0.113.5", 1234, ListedAllowed},
		{"203.0.113.6", 443, Unlisted},
		{"2001:db8::1", 8443, ListedAllowed},
		{"2001:db8::1", 443, Unlisted},
		{"www.xn--bcher-kva.example", 443, ListedAllowed},
		{"WWW.BÜCHER.example", 443, ListedAllowed},
	}
	for _, tt := range tests {
		name, isIP, err := NormalizeHost(tt.host)
		if err != nil {
			t.Fatalf("NormalizeHost(%q): %v", tt.host, err)
		}
		if got := p.Match(name, isIP, tt.port); got != tt.want {
			t.Errorf("Match(%q, %d) = %v, want %v", tt.host, tt.port, got, tt.want)
		}
	}
}

func TestLocalReason(t *testing.T) {
	local := []string{
		"127.0.0.1", "127.255.0.9", "0.0.0.0", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"100.64.0.1", "100.127.255.254", "169.254.169.254", "224.0.0.1", "239.255.255.250", "255.255.255.255", "240.0.0.1",
		"::", "::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::127.0.0.1", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1",
		"64:ff9b::7f00:1", "64:ff9b::a00:1", "2002:7f00:1::1", "2002:c0a8:101::1", "fec0::1", "2001::1", "198.18.0.1",
	}
	for _, s := range local {
		if LocalReason(netip.MustParseAddr(s)) == "" {
			t.Errorf("LocalReason(%s) is empty, want it refused as local", s)
		}
	}
	public := []string{"1.1.1.1", "8.8.8.8", "100.63.255.255", "100.128.0.0", "172.32.0.1", "203.0.113.10", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8"}
	for _, s := range public {
		if why := LocalReason(netip.MustParseAddr(s)); why != "" {
			t.Errorf("LocalReason(%s) = %q, want public", s, why)
		}
	}
}

// FuzzNormalizeMatch: normalising is idempotent, never yields a name a wildcard could
// be smuggled through, and a name always matches its own rule and its own wildcard.
func FuzzNormalizeMatch(f *testing.F) {
	for _, s := range []string{"example.com", "Example.COM.", "bücher.example", "127.0.0.1", "[::1]", "::ffff:1.2.3.4", "１２７．０．０．１", "127.1", "a..b", "*.x", "xn--bcher-kva.example", "0x7f.1"} {
		f.Add(s, uint16(443))
	}
	f.Fuzz(func(t *testing.T, host string, port uint16) {
		name, isIP, err := NormalizeHost(host)
		if err != nil {
			return
		}
		again, isIP2, err := NormalizeHost(name)
		if err != nil || again != name || isIP2 != isIP {
			t.Fatalf("not idempotent: %q -> %q (%v) -> %q (%v, %v)", host, name, isIP, again, isIP2, err)
		}
		if strings.ContainsAny(name, "*/ \\@") || (!isIP && strings.Contains(name, ":")) || strings.HasSuffix(name, ".") {
			t.Fatalf("NormalizeHost(%q) = %q: a character a rule or URL would read differently", host, name)
		}
		if name != strings.ToLower(name) {
			t.Fatalf("NormalizeHost(%q) = %q is not lower case", host, name)
		}
		p := int(port)
		if p == 0 {
			p = 1
		}
		r, err := ParseRule(name)
		if err != nil {
			t.Fatalf("ParseRule(%q) of a normalised host: %v", name, err)
		}
		if !r.Matches(name, isIP, p) {
			t.Fatalf("rule %q does not match itself", name)
		}
		if !isIP {
			w, err := ParseRule("*." + name)
			if err != nil {
				t.Fatalf("ParseRule(*.%q): %v", name, err)
			}
			if !w.Matches(name, false, p) || !w.Matches("sub."+name, false, p) {
				t.Fatalf("*.%s does not cover its apex and subdomains", name)
			}
			if w.Matches("x"+name, false, p) {
				t.Fatalf("*.%s matches x%s", name, name)
			}
		}
		pol := &Policy{Allowed: []Rule{r}, Denied: []Rule{r}}
		if pol.Match(name, isIP, p) != ListedDenied {
			t.Fatalf("denied does not win for %q", name)
		}
	})
}
