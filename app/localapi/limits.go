package localapi

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlock-app/airlock/api"
)

// Timeouts bound how long reading one request may take. They bound reading only: a
// handler's response (an await of the person's answer, which may last hours, or an
// event stream) is never cut by them.
type Timeouts struct {
	Header time.Duration // the request line and headers (default 10 s)
	Body   time.Duration // the body, once the headers are in (default 30 s)
	Idle   time.Duration // a kept-alive connection between two requests (default 2 min)
}

func (t Timeouts) withDefaults() Timeouts {
	if t.Header <= 0 {
		t.Header = 10 * time.Second
	}
	if t.Body <= 0 {
		t.Body = 30 * time.Second
	}
	if t.Idle <= 0 {
		t.Idle = 2 * time.Minute
	}
	return t
}

// NewHTTPServer is the http.Server of every listener of the local API (the unix socket,
// loopback TCP, a sandbox's ask-only channel): h behind the read timeouts t.
//
// The body's timeout is a read deadline set when the handler starts and cleared as
// soon as the body has been read: http.Server.ReadTimeout would stay on the
// connection, and net/http cancels a request's context when the connection's
// background read fails, so an await would end when it passed.
func NewHTTPServer(h http.Handler, t Timeouts) *http.Server {
	t = t.withDefaults()
	return &http.Server{Handler: bodyDeadline(h, t.Body), ReadHeaderTimeout: t.Header, IdleTimeout: t.Idle, MaxHeaderBytes: 64 << 10}
}

func bodyDeadline(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(d)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, clear: func() { _ = rc.SetReadDeadline(time.Time{}) }}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody clears the body's read deadline once the body has ended: a deadline
// also applies to the read in flight, so the server's background read that watches for
// the caller hanging up starts without one. A body that fails (the deadline passed)
// keeps it, so the server's draining of the rest fails at once too.
type deadlineBody struct {
	io.ReadCloser
	once  sync.Once
	clear func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(b.clear)
	}
	return n, err
}

// Limits bound what the callers of one listener may hold open.
type Limits struct {
	// PerCaller caps the connections one caller holds open (0: no cap). A caller is
	// the peer's pid on the unix socket; every connection of any other listener (a
	// sandbox's ask-only channel, loopback TCP) is the same caller. Beyond it a
	// connection is answered 429 with the reason, and closed.
	PerCaller int
	// Who names the caller in a refusal and in the log ("this sandbox", "pid 42").
	Who func(caller string) string
	// Reserve stops accepting while the process has fewer free descriptors than its
	// reserve (FreeDescriptors): a sandbox's channel stops before the person's socket
	// does. Connections wait in the kernel's queue meanwhile.
	Reserve bool
	// OneCaller says the listener is one caller's alone (a sandbox's channel): a
	// refusal is then written before the next connection is accepted, so a flood is
	// slowed to the pace its own refusals are read, and no one else waits for it.
	OneCaller bool
	// Name is the listener in the log ("ask-only channel of run 12").
	Name string
	// OnCap is called once each time a caller reaches its cap (not for each refusal
	// that follows while it stays near it, until it is down to half): the core audits
	// it.
	OnCap func(caller string, open int)
}

// Guard wraps l: accept errors such as EMFILE back off instead of spinning and are
// logged once with a count, and the limits hold.
func Guard(l net.Listener, lim Limits) net.Listener {
	if lim.Who == nil {
		lim.Who = func(c string) string {
			if c == "" {
				return "this caller"
			}
			return c
		}
	}
	if lim.Name == "" {
		lim.Name = "local API"
	}
	return &guarded{Listener: l, lim: lim, open: map[string]int{}, refused: map[string]int{},
		refusers: make(chan struct{}, 32), done: make(chan struct{})}
}

type guarded struct {
	net.Listener
	lim Limits

	mu      sync.Mutex
	open    map[string]int
	refused map[string]int // callers at their cap: refusals since they reached it

	refusers  chan struct{} // goroutines writing a refusal
	done      chan struct{}
	closeOnce sync.Once
}

func (g *guarded) Close() error {
	g.closeOnce.Do(func() { close(g.done) })
	return g.Listener.Close()
}

// Accept returns the next connection within the limits.
func (g *guarded) Accept() (net.Conn, error) {
	var failures int
	var firstErr error
	var since time.Time
	backoff := 5 * time.Millisecond
	for {
		if g.lim.Reserve {
			if err := g.waitForReserve(); err != nil {
				return nil, err
			}
		}
		c, err := g.Listener.Accept()
		if err != nil {
			if !transientAccept(err) {
				return nil, err
			}
			if failures == 0 {
				firstErr, since = err, time.Now()
				slog.Warn(g.lim.Name+": cannot accept connections; backing off (logged again when it recovers)", "error", err)
			}
			failures++
			select {
			case <-g.done:
				return nil, net.ErrClosed
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		if failures > 0 {
			slog.Warn(g.lim.Name+": accepting again", "failed_accepts", failures, "for", time.Since(since).Round(time.Millisecond), "error", firstErr)
			failures, backoff = 0, 5*time.Millisecond
		}
		caller := callerOf(c)
		if gc, ok := g.admit(c, caller); ok {
			return gc, nil
		}
		g.refuse(c, caller)
	}
}

// transientAccept reports whether an accept error passes (descriptors or memory run
// out, a connection reset before it was accepted): the listener itself is fine.
func transientAccept(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (g *guarded) waitForReserve() error {
	var waited time.Time
	for FreeDescriptors() < DescriptorReserve() {
		if waited.IsZero() {
			waited = time.Now()
			slog.Warn(g.lim.Name+": not accepting while the core is short of file descriptors (kept for the person's own surfaces)",
				"free", FreeDescriptors(), "reserve", DescriptorReserve())
		}
		select {
		case <-g.done:
			return net.ErrClosed
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !waited.IsZero() {
		slog.Warn(g.lim.Name+": accepting again", "paused", time.Since(waited).Round(time.Millisecond))
	}
	return nil
}

func callerOf(c net.Conn) string {
	if pc, ok := c.(*peerConn); ok {
		return "pid " + strconv.Itoa(pc.peer.PID)
	}
	return ""
}

func (g *guarded) admit(c net.Conn, caller string) (net.Conn, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lim.PerCaller > 0 && g.open[caller] >= g.lim.PerCaller {
		n, at := g.refused[caller]
		g.refused[caller] = n + 1
		if !at {
			slog.Warn(g.lim.Name+": a caller reached its cap of open connections; refusing more until some close (logged again with the count)",
				"caller", g.lim.Who(caller), "cap", g.lim.PerCaller)
			if g.lim.OnCap != nil {
				go g.lim.OnCap(caller, g.open[caller])
			}
		}
		return nil, false
	}
	g.open[caller]++
	held.Add(1)
	return &guardedConn{Conn: c, g: g, caller: caller}, true
}

func (g *guarded) release(caller string) {
	held.Add(-1)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open[caller]--
	if g.open[caller] <= 0 {
		delete(g.open, caller)
	}
	// The episode ends well below the cap, so a caller hovering at it is logged and
	// audited once, not each time one of its connections closes.
	if n, at := g.refused[caller]; at && g.open[caller] <= g.lim.PerCaller/2 {
		delete(g.refused, caller)
		slog.Warn(g.lim.Name+": a caller is well below its cap of open connections again", "caller", g.lim.Who(caller), "refused", n)
	}
}

// refuse answers a connection beyond its caller's cap with 429 and the reason. It
// reads the request head first (briefly), so the caller sees the answer rather than a
// reset. A listener of one caller writes it at once; another hands it to one of a few
// goroutines, or, when they are all busy, just closes the connection.
func (g *guarded) refuse(c net.Conn, caller string) {
	if g.lim.OneCaller {
		g.writeRefusal(c, caller)
		return
	}
	select {
	case g.refusers <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-g.refusers }()
		g.writeRefusal(c, caller)
	}()
}

func (g *guarded) writeRefusal(c net.Conn, caller string) {
	{
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		br := bufio.NewReader(io.LimitReader(c, 16<<10))
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" || line == "\n" {
				break
			}
		}
		body, _ := json.Marshal(api.Errorf(http.StatusTooManyRequests, api.CodeTooMany,
			fmt.Sprintf("%s already holds %d connections open to Airlock, the most it may: this one is refused", g.lim.Who(caller), g.lim.PerCaller),
			"finish or close some first (an await holds its connection until the person answers): ask one question at a time"))
		fmt.Fprintf(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}
}

// guardedConn gives its caller's slot back when it closes.
type guardedConn struct {
	net.Conn
	g      *guarded
	caller string
	once   sync.Once
}

func (c *guardedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.g.release(c.caller) })
	return err
}

// unwrapConn is the connection a guardedConn wraps (the peerConn ConnContext reads).
func unwrapConn(c net.Conn) net.Conn {
	if gc, ok := c.(*guardedConn); ok {
		return gc.Conn
	}
	return c
}

// held counts the connections guarded listeners hold open, for FreeDescriptors
// between two counts of the process's descriptors.
var held atomic.Int64

var fdCount struct {
	sync.Mutex
	at    time.Time
	open  int
	held  int64
	limit int
}

// RaiseFileLimit raises the process's soft limit of open files to its hard limit (each
// open request holds a descriptor) and returns the limit now in force. Go raises it at
// start on most systems already; this makes it so everywhere and says what it is.
func RaiseFileLimit() (int, error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("read the open-file limit: %w", err)
	}
	if rl.Cur < rl.Max {
		want := rl
		want.Cur = rl.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err == nil {
			rl = want
		}
	}
	fdCount.Lock()
	fdCount.at = time.Time{} // count again with the new limit
	fdCount.Unlock()
	return int(min(rl.Cur, 1<<30)), nil
}

// FreeDescriptors estimates how many more files the process may open: its soft limit
// less those open, counted at most every 100 ms (in between, the connections guarded
// listeners accepted since are subtracted). It is large when it cannot be counted.
func FreeDescriptors() int {
	fdCount.Lock()
	defer fdCount.Unlock()
	if time.Since(fdCount.at) > 100*time.Millisecond {
		var rl unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil {
			return 1 << 30
		}
		fdCount.limit = int(min(rl.Cur, 1<<30))
		fdCount.open = openDescriptors()
		fdCount.held = held.Load()
		fdCount.at = time.Now()
	}
	if fdCount.open < 0 {
		return 1 << 30
	}
	return fdCount.limit - fdCount.open - int(held.Load()-fdCount.held)
}

// DescriptorReserve is how many descriptors are kept for the person's own surfaces (the
// unix socket, the window, the database) when sandboxes ask: an eighth of the limit,
// at least 256.
func DescriptorReserve() int {
	fdCount.Lock()
	limit := fdCount.limit
	fdCount.Unlock()
	return max(256, limit/8)
}

// openDescriptors counts the process's open descriptors (-1 when it cannot).
func openDescriptors() int {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		f, err := os.Open(dir)
		if err != nil {
			continue
		}
		n := 0
		for {
			names, err := f.Readdirnames(4096)
			n += len(names)
			if err != nil {
				break
			}
		}
		f.Close()
		return n
	}
	return -1
}
