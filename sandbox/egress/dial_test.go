package egress

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"testing"

	"github.com/airlock-app/airlock/sandbox/egress/egresstest"
)

// TestDialContextDecides: a connection this process makes through DialContext gets the
// same decision as a sandbox's: an allowed name connects to exactly the address that was
// checked, denied_domains win even over AllowUnlisted, an unlisted name is refused
// without Decide (asked with it, let through under AllowUnlisted), a name or literal
// resolving to loopback or a private address is refused before any dial (a local
// literal before anyone is asked), and UDP is refused. Every attempt is one Record.
func TestDialContextDecides(t *testing.T) {
	ln := egresstest.Greeter(t, "hi")
	res := &fakeResolver{answers: map[string][][]netip.Addr{
		"allowed.test": {addrs("203.0.113.10")},
		"denied.test":  {addrs("203.0.113.11")},
		"unknown.test": {addrs("203.0.113.12")},
		"rebind.test":  {addrs("203.0.113.13", "127.0.0.1")},
		"lan.test":     {addrs("192.168.1.5")},
	}}
	for _, tt := range []struct {
		name          string
		cfg           Config
		network, addr string
		want          Reason // "" = connected
	}{
		{"allowed", Config{Allowed: []string{"allowed.test"}}, "tcp", "allowed.test:80", ""},
		{"denied wins", Config{Allowed: []string{"*.test"}, Denied: []string{"denied.test"}}, "tcp", "denied.test:80", ReasonDeniedByList},
		{"denied wins over network on", Config{Denied: []string{"denied.test"}, AllowUnlisted: true}, "tcp", "denied.test:80", ReasonDeniedByList},
		{"unlisted without Decide", Config{Allowed: []string{"allowed.test"}}, "tcp", "unknown.test:80", ReasonNotListed},
		{"unlisted, person says no", Config{Decide: func(context.Context, Request) (Verdict, error) { return Deny, nil }}, "tcp", "unknown.test:80", ReasonDeniedByPerson},
		{"unlisted, person says yes", Config{Decide: func(context.Context, Request) (Verdict, error) { return Allow, nil }}, "tcp", "unknown.test:80", ""},
		{"network on", Config{AllowUnlisted: true}, "tcp", "unknown.test:80", ""},
		{"loopback literal, network on", Config{AllowUnlisted: true}, "tcp", "127.0.0.1:80", ReasonLocalAddress},
		{"localhost-ish literal", Config{AllowUnlisted: true}, "tcp", "[::ffff:127.0.0.1]:80", ReasonLocalAddress},
		{"rebinding answer", Config{AllowUnlisted: true}, "tcp", "rebind.test:80", ReasonLocalAddress},
		{"private answer", Config{Allowed: []string{"lan.test"}}, "tcp", "lan.test:80", ReasonLocalAddress},
		{"private answer, allow_local", Config{Allowed: []string{"lan.test"}, AllowLocal: true}, "tcp", "lan.test:80", ""},
		{"loopback literal, nobody asked", Config{Decide: func(context.Context, Request) (Verdict, error) {
			t.Error("asked about a loopback address that no answer could let through")
			return Allow, nil
		}}, "tcp", "127.0.0.1:80", ReasonLocalAddress},
		{"udp", Config{AllowUnlisted: true}, "udp", "unknown.test:53", ReasonUnsupported},
		{"no port", Config{AllowUnlisted: true}, "tcp", "unknown.test", ReasonInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			d := &routedDialer{routes: map[string]string{}}
			for _, ip := range []string{"203.0.113.10:80", "203.0.113.12:80", "192.168.1.5:80", "203.0.113.13:80"} {
				d.routes[ip] = ln.Addr().String()
			}
			cfg := tt.cfg
			cfg.Resolver, cfg.Dial, cfg.Log = res, d.Dial, rec.Log
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c, err := p.DialContext(context.Background(), tt.network, tt.addr)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if b, _ := io.ReadAll(c); string(b) != "hi" {
					t.Errorf("read %q", b)
				}
				c.Close()
			} else {
				var re *RefusedError
				if !errors.As(err, &re) || !errors.Is(err, ErrRefused) || re.Reason != tt.want {
					t.Fatalf("got %v (%v), want a refusal: %s", c, err, tt.want)
				}
				if len(d.dials()) != 0 {
					t.Errorf("ESCAPE: a refused destination was dialed: %v", d.dials())
				}
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.recs) != 1 || rec.recs[0].Protocol != ProtoDirect {
				t.Errorf("records: %+v", rec.recs)
			}
		})
	}
}
