package egress

import (
	"context"
	"net"
	"strconv"
)

// DialContext connects to addr ("host:port") through the same decision a sandbox's
// connections get (lists, Decide, the rebinding-safe local-address check), for a client
// in this process: it has net.Dialer.DialContext's signature, so an http.Transport can
// make every connection of its requests, redirects included, through it. Each
// connection is one Record (Protocol ProtoDirect), reported when it is closed; a
// refused one fails with a *RefusedError (see RefusalText).
func (p *Proxy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, p.refuse(&attempt{rec: Record{Protocol: ProtoDirect, Domain: addr}}, ReasonInvalid, err.Error())
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, p.refuse(&attempt{rec: Record{Protocol: ProtoDirect, Domain: host}}, ReasonInvalid, "port "+strconv.Quote(ps)+" is not a number")
	}
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, p.refuse(&attempt{rec: Record{Protocol: ProtoDirect, Domain: host, Port: port}}, ReasonUnsupported, "only TCP connections are made ("+network+" asked)")
	}
	a, err := p.authorize(ctx, ProtoDirect, host, port)
	if err != nil {
		return nil, err
	}
	return p.dial(ctx, a)
}

// RefusalText explains a refused connection (an error wrapping a *RefusedError) to
// whoever reads it: that Airlock refused it, why, and how to allow it — the text a
// sandboxed client gets from the proxy. Any other error is said as the connection's
// failure.
func RefusalText(err error) string { return refusalText(err) }
