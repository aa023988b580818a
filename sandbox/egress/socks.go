package egress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	socks5 "github.com/armon/go-socks5"
)

type socksKey struct{}

// noResolve keeps the name as the client sent it (socks5h): the proxy resolves it
// itself, once, after the decision.
type noResolve struct{}

func (noResolve) Resolve(ctx context.Context, _ string) (context.Context, net.IP, error) {
	return ctx, nil, nil
}

// socksRules runs the decision for every SOCKS5 command; only CONNECT can pass. A
// refusal is answered 0x02, "connection not allowed by ruleset".
type socksRules struct {
	p   *Proxy
	ctx context.Context
}

func (r socksRules) Allow(_ context.Context, req *socks5.Request) (context.Context, bool) {
	dst := req.DestAddr
	host := dst.FQDN
	if host == "" && dst.IP != nil {
		host = dst.IP.String()
	}
	if req.Command != socks5.ConnectCommand {
		what := map[uint8]string{socks5.BindCommand: "BIND", socks5.AssociateCommand: "UDP ASSOCIATE"}[req.Command]
		_ = r.p.refuse(&attempt{rec: Record{Protocol: ProtoSOCKS5, Domain: host, Port: dst.Port}}, ReasonUnsupported,
			fmt.Sprintf("SOCKS5 %s is refused; only CONNECT (TCP) is proxied", what))
		return r.ctx, false
	}
	a, err := r.p.authorize(r.ctx, ProtoSOCKS5, host, dst.Port)
	if err != nil {
		return r.ctx, false
	}
	return context.WithValue(r.ctx, socksKey{}, a), true
}

var errNoDecision = errors.New("egress: SOCKS5 dial without a decision")

func (p *Proxy) socksDial(ctx context.Context, _, _ string) (net.Conn, error) {
	a, ok := ctx.Value(socksKey{}).(*attempt)
	if !ok {
		return nil, errNoDecision
	}
	return p.dial(ctx, a)
}

// serveSOCKS serves one SOCKS5 client; BIND and UDP ASSOCIATE are refused by the rules.
// A server per connection (a config copy) carries ctx to Decide: the library has no
// per-connection context, so a client that hangs up while Decide waits is noticed when
// the answer comes.
func (p *Proxy) serveSOCKS(ctx context.Context, c net.Conn) {
	s, err := socks5.New(&socks5.Config{
		Resolver: noResolve{},
		Rules:    socksRules{p: p, ctx: ctx},
		Logger:   slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
		Dial:     p.socksDial,
	})
	if err != nil {
		p.log.Error("egress: socks5 server", "err", err)
		c.Close()
		return
	}
	if err := s.ServeConn(c); err != nil {
		p.log.Debug("egress: socks5 client", "err", err)
	}
}
