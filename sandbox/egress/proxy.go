package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Request is what Decide is asked about: an unlisted destination.
type Request struct {
	// Domain is the normalised host (an IP literal when IsIP).
	Domain   string
	IsIP     bool
	Port     int
	Protocol Protocol
}

// Resolver resolves a name once; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Proxy.
type Config struct {
	// Allowed and Denied are allowed_domains and denied_domains (see ParseRule).
	Allowed, Denied []string
	// AllowLocal lets destinations that resolve to local addresses through.
	AllowLocal bool
	// AllowUnlisted lets every destination that denied_domains does not name through,
	// without asking Decide (network_access = true for a caller in this process, such
	// as the MCP web_fetch tool): the local-address check still applies.
	AllowUnlisted bool
	// Decide is asked about every unlisted destination, and the client waits for its
	// answer (the core raises a P1 network_domain request there). Nil refuses them.
	// Concurrent connections to the same destination each ask; remembering an answer
	// is the caller's business.
	Decide func(ctx context.Context, r Request) (Verdict, error)
	// Log receives one Record per connection. Nil discards them.
	Log func(Record)
	// Resolver resolves allowed names; nil is net.DefaultResolver.
	Resolver Resolver
	// Dial makes the outgoing connection; addr is always "IP:port", an address the
	// proxy has checked. Nil is a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives the proxy's own diagnostics; nil is slog.Default().
	Logger *slog.Logger
	// FirstByteTimeout bounds how long a new client may stay silent; zero is 30s.
	FirstByteTimeout time.Duration
}

// Proxy is the egress proxy. It is safe for concurrent use; one Proxy may serve several
// listeners.
type Proxy struct {
	cfg    Config
	policy *Policy
	log    *slog.Logger
	http   http.Handler
}

// ErrRefused is wrapped by the error of every refused destination.
var ErrRefused = errors.New("egress refused")

// RefusedError is a destination the proxy refused.
type RefusedError struct {
	Domain string
	Port   int
	Reason Reason
	Detail string
}

func (e *RefusedError) Error() string {
	s := fmt.Sprintf("egress to %s: %s", net.JoinHostPort(e.Domain, strconv.Itoa(e.Port)), e.Reason)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// New compiles the lists and builds the proxy; the error names a bad list entry.
func New(cfg Config) (*Proxy, error) {
	pol, err := NewPolicy(cfg.Allowed, cfg.Denied, cfg.AllowLocal)
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dial == nil {
		var d net.Dialer
		cfg.Dial = d.DialContext
	}
	if cfg.FirstByteTimeout == 0 {
		cfg.FirstByteTimeout = 30 * time.Second
	}
	p := &Proxy{cfg: cfg, policy: pol, log: cfg.Logger}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.http = p.newHTTP()
	return p, nil
}

// Serve accepts clients on ln until ctx ends or ln fails, and closes ln. Connections
// already open keep going until they end by themselves.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	hl := &chanListener{addr: ln.Addr(), conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{
		Handler:           p.http,
		ReadHeaderTimeout: p.cfg.FirstByteTimeout,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() { _ = srv.Serve(hl) }()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer hl.Close()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("egress proxy: accept: %w", err)
		}
		go p.route(ctx, c, hl)
	}
}

// route reads the first byte: 0x05 is a SOCKS5 greeting, anything else is HTTP.
func (p *Proxy) route(ctx context.Context, c net.Conn, hl *chanListener) {
	pc := &peekedConn{Conn: c, r: bufio.NewReader(c)}
	_ = c.SetReadDeadline(time.Now().Add(p.cfg.FirstByteTimeout))
	b, err := pc.r.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return
	}
	if b[0] == 0x05 {
		p.serveSOCKS(ctx, pc)
		return
	}
	select {
	case hl.conns <- pc:
	case <-hl.done:
		c.Close()
	}
}

// attempt is one destination on its way through the decision.
type attempt struct {
	rec   Record
	isIP  bool
	addrs []netip.Addr
}

// authorize runs the decision for host:port up to and including the local-address
// check. A refusal is logged here and returned as a *RefusedError.
func (p *Proxy) authorize(ctx context.Context, proto Protocol, host string, port int) (*attempt, error) {
	a := &attempt{rec: Record{Start: time.Now(), Protocol: proto, Domain: host, Port: port}}
	name, isIP, err := NormalizeHost(host)
	if err != nil {
		return nil, p.refuse(a, ReasonInvalid, err.Error())
	}
	if port < 1 || port > 65535 {
		return nil, p.refuse(a, ReasonInvalid, "port "+strconv.Itoa(port)+" is out of range")
	}
	a.rec.Domain, a.isIP = name, isIP
	switch p.policy.Match(name, isIP, port) {
	case ListedDenied:
		return nil, p.refuse(a, ReasonDeniedByList, "")
	case ListedAllowed:
		a.rec.Reason = ReasonAllowedByList
	default:
		if p.cfg.AllowUnlisted {
			a.rec.Reason = ReasonNetworkOn
			break
		}
		if isIP && !p.policy.AllowLocal {
			// No answer could let a local address through: nobody is asked about it.
			if why := localReason(netip.MustParseAddr(name)); why != "" {
				a.rec.IP = netip.MustParseAddr(name).Unmap()
				return nil, p.refuse(a, ReasonLocalAddress, a.rec.IP.String()+" is "+why)
			}
		}
		if p.cfg.Decide == nil {
			return nil, p.refuse(a, ReasonNotListed, "")
		}
		v, err := p.cfg.Decide(ctx, Request{Domain: name, IsIP: isIP, Port: port, Protocol: proto})
		switch {
		case err != nil:
			return nil, p.refuse(a, ReasonDecideFailed, err.Error())
		case v != Allow:
			return nil, p.refuse(a, ReasonDeniedByPerson, "")
		}
		a.rec.Reason = ReasonAllowedByPerson
	}
	// Resolved once, here; the dial uses exactly these addresses.
	if isIP {
		a.addrs = []netip.Addr{netip.MustParseAddr(name)}
	} else {
		addrs, err := p.cfg.Resolver.LookupNetIP(ctx, "ip", name)
		if err != nil {
			return nil, p.refuse(a, ReasonResolveFailed, err.Error())
		}
		if len(addrs) == 0 {
			return nil, p.refuse(a, ReasonResolveFailed, "no addresses")
		}
		a.addrs = addrs
	}
	if !p.policy.AllowLocal {
		// One local answer refuses the whole name: a mix of public and local answers
		// is what a rebinding attack looks like.
		for _, ip := range a.addrs {
			if why := localReason(ip); why != "" {
				a.rec.IP = ip.Unmap()
				return nil, p.refuse(a, ReasonLocalAddress, ip.Unmap().String()+" is "+why)
			}
		}
	}
	return a, nil
}

// refuse logs a refused attempt and returns its error.
func (p *Proxy) refuse(a *attempt, why Reason, detail string) error {
	a.rec.Verdict, a.rec.Reason, a.rec.Detail = Deny, why, detail
	a.rec.Duration = time.Since(a.rec.Start)
	p.emit(a.rec)
	return &RefusedError{Domain: a.rec.Domain, Port: a.rec.Port, Reason: why, Detail: detail}
}

func (p *Proxy) emit(r Record) {
	if p.cfg.Log != nil {
		p.cfg.Log(r)
	}
}

// dial connects to the checked addresses in order. The connection it returns counts
// bytes and reports the Record when it is closed.
func (p *Proxy) dial(ctx context.Context, a *attempt) (net.Conn, error) {
	var errs []error
	for _, ip := range a.addrs {
		ap := netip.AddrPortFrom(ip.Unmap(), uint16(a.rec.Port))
		c, err := p.cfg.Dial(ctx, "tcp", ap.String())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		a.rec.IP, a.rec.Verdict = ap.Addr(), Allow
		return &countedConn{Conn: c, rec: a.rec, emit: p.emit}, nil
	}
	err := errors.Join(errs...)
	a.rec.IP = a.addrs[0].Unmap()
	return nil, p.refuse(a, ReasonDialFailed, err.Error())
}

// countedConn is an outgoing connection: bytes written are "up", bytes read "down".
type countedConn struct {
	net.Conn
	rec      Record
	emit     func(Record)
	up, down atomic.Int64
	// io is held (shared) across each Read and Write with its count, so Close reports
	// only once none is between its system call and its count: the reply to a request
	// can be read, and the connection closed, before the writer has counted the request.
	io   sync.RWMutex
	once sync.Once
}

func (c *countedConn) Read(b []byte) (int, error) {
	c.io.RLock()
	defer c.io.RUnlock()
	n, err := c.Conn.Read(b)
	c.down.Add(int64(n))
	return n, err
}

func (c *countedConn) Write(b []byte) (int, error) {
	c.io.RLock()
	defer c.io.RUnlock()
	n, err := c.Conn.Write(b)
	c.up.Add(int64(n))
	return n, err
}

// Close reports the record once, after the calls in flight (which closing ends) counted.
func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.io.Lock()
		c.rec.BytesUp, c.rec.BytesDown = c.up.Load(), c.down.Load()
		c.io.Unlock()
		c.rec.Duration = time.Since(c.rec.Start)
		c.emit(c.rec)
	})
	return err
}

// CloseWrite and CloseRead keep TCP half-close working through the tunnel.
func (c *countedConn) CloseWrite() error {
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return c.Close()
}

// CloseRead: see CloseWrite.
func (c *countedConn) CloseRead() error {
	if hc, ok := c.Conn.(interface{ CloseRead() error }); ok {
		return hc.CloseRead()
	}
	return nil
}

// peekedConn is a client connection whose first bytes were read ahead.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite and CloseRead: see countedConn.
func (c *peekedConn) CloseWrite() error {
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return c.Close()
}

// CloseRead: see countedConn.
func (c *peekedConn) CloseRead() error {
	if hc, ok := c.Conn.(interface{ CloseRead() error }); ok {
		return hc.CloseRead()
	}
	return nil
}

// chanListener hands the HTTP server the connections route chose for it.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }
