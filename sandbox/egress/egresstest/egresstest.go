// Package egresstest is what the tests of the egress proxy's callers share: a "test
// domain" is a made-up name that DNS resolves to a documentation address (203.0.113.0/24,
// not a local one, so the proxy's local-address check stays on), and Dial routes those
// addresses to a real server on this machine's loopback.
package egresstest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"
)

// DNS answers each test domain with its addresses; any other name does not exist. It is
// an egress.Resolver.
type DNS map[string][]string

// LookupNetIP implements egress.Resolver.
func (d DNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ss, ok := d[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ss {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("egresstest: %s answers %q: %w", host, s, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// Documentation is the range the test domains resolve to (TEST-NET-3).
var Documentation = netip.MustParsePrefix("203.0.113.0/24")

// Dial is an egress.Config.Dial that connects every address in Documentation to server
// (a test server's "127.0.0.1:port"), dials the others as they are when direct, and
// fails them otherwise without sending a packet.
func Dial(server string, direct bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			return nil, fmt.Errorf("egresstest: %q is not an address: %w", addr, err)
		}
		var d net.Dialer
		switch {
		case Documentation.Contains(ap.Addr()):
			return d.DialContext(ctx, network, server)
		case direct:
			return d.DialContext(ctx, network, addr)
		}
		return nil, fmt.Errorf("test network: no route to %s", addr)
	}
}

// Greeter is a TCP server on loopback that writes greeting to every connection and
// closes it; it stops with the test.
func Greeter(t testing.TB, greeting string) net.Listener {
	t.Helper()
	return GreeterOn(t, "127.0.0.1", greeting)
}

// GreeterOn is Greeter listening on ip.
func GreeterOn(t testing.TB, ip, greeting string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(greeting))
			c.Close()
		}
	}()
	return ln
}

// OwnAddress is a non-loopback IPv4 address of this machine (the source of its default
// route): what a sandbox with the network on must not reach (a server listening on all
// interfaces answers there). The test skips when the machine has none. An outside host
// is NewOutside.
func OwnAddress(t testing.TB) string {
	t.Helper()
	if c, err := net.Dial("udp4", "1.1.1.1:9"); err == nil { // no packet is sent: this only picks the route
		ip := c.LocalAddr().(*net.UDPAddr).IP
		c.Close()
		if !ip.IsLoopback() && !ip.IsUnspecified() {
			return ip.String()
		}
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no non-loopback IPv4 address to stand for an outside host")
	return ""
}
