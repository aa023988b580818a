package localapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// NotRunningError says no app or daemon answers on the socket.
type NotRunningError struct {
	Socket string
	Found  string // what is at the socket's path when it is not a socket ("" otherwise)
	Err    error
}

func (e *NotRunningError) Error() string {
	msg := fmt.Sprintf("no Airlock app or daemon is running (nothing answers on %s): open the app, or start the headless core with `airlock daemon`", e.Socket)
	if e.Found != "" {
		msg += fmt.Sprintf("; first move %s away: it is %s, not a socket, and no core could listen there", e.Socket, e.Found)
	}
	return msg
}

func (e *NotRunningError) Unwrap() error { return e.Err }

// UnreachableError says an Airlock core runs (it holds the instance lock beside the
// socket) but does not answer on the socket: the socket was replaced (Found says by
// what), or the core is still starting.
type UnreachableError struct {
	Socket string
	PID    int    // the core's pid
	Found  string // what is at the socket's path when it is not a socket ("" otherwise)
	Err    error
}

func (e *UnreachableError) Error() string {
	if e.Found != "" {
		return fmt.Sprintf("an Airlock core runs (pid %d) but cannot be reached: %s is %s, not its socket. "+
			"Move that away (mv %s %s.moved), then restart the core (kill -TERM %d, then open the app or `airlock daemon`) so that it listens again",
			e.PID, e.Socket, e.Found, e.Socket, e.Socket, e.PID)
	}
	return fmt.Sprintf("an Airlock core runs (pid %d, it holds %s.lock) but does not answer on %s: it may still be starting, try again in a moment; "+
		"if it stays so, restart it (kill -TERM %d)", e.PID, e.Socket, e.Socket, e.PID)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Client talks to the local API over the unix socket, or to a sandbox's ask-only
// channel (NewAskClient).
type Client struct {
	socket string
	ask    bool // socket is the address of a sandbox's ask-only channel
	http   *http.Client
}

// ErrAskChannelGone is the error of a call on a sandbox's ask-only channel that nothing
// answers: the sandbox's run is over, or the core that served it stopped.
var ErrAskChannelGone = errors.New("the ask-only channel of this sandbox does not answer")

// ErrNotAskAddress is returned for an ask-only channel address that is not a loopback
// host:port (nor the micro-VM's channel address).
var ErrNotAskAddress = errors.New("not a loopback address:port")

// NewAskClient returns a client for a sandbox's ask-only channel at addr (the value of
// AIRLOCK_ASK_SOCKET: a loopback address of the sandbox's own network namespace, or in
// the micro-VM sandbox.MicroVMAskAddr, which leads to QEMU's). It serves only the
// broker's check, await and after routes.
func NewAskClient(addr string) (*Client, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || (!ap.Addr().IsLoopback() && addr != sandbox.MicroVMAskAddr) {
		return nil, fmt.Errorf("ask-only channel %q: %w", addr, ErrNotAskAddress)
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		},
		MaxIdleConns:    2,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{socket: addr, ask: true, http: &http.Client{Transport: tr}}, nil
}

// NewClient returns a client for the socket; it connects on first use.
func NewClient(socket string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns:    2,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{socket: socket, http: &http.Client{Transport: tr}}
}

// Do sends in (when not nil) as JSON and decodes the answer into out (when not nil).
// API errors come back as *api.Error; an absent server as *NotRunningError.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://airlock"+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.dialError(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("read answer of %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		return errorOf(method, path, resp.Status, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("decode answer of %s %s: %w", method, path, err)
		}
	}
	return nil
}

// errorOf is the *api.Error of a refused request: the server's body, or the status.
func errorOf(method, path, status string, code int, body []byte) *api.Error {
	e := &api.Error{Status: code}
	if json.Unmarshal(body, e) != nil || e.Message == "" {
		e.Message = fmt.Sprintf("%s %s: %s", method, path, status)
	}
	return e
}

func (c *Client) dialError(err error) error {
	if c.ask {
		return fmt.Errorf("%w (AIRLOCK_ASK_SOCKET=%s): %w", ErrAskChannelGone, c.socket, err)
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
		// Nothing answers; before saying that no core runs, look at what is there and
		// whether a core holds the instance lock.
		found := notASocket(c.socket)
		if pid, held := lockHolder(c.socket + ".lock"); held {
			return &UnreachableError{Socket: c.socket, PID: pid, Found: found, Err: err}
		}
		return &NotRunningError{Socket: c.socket, Found: found, Err: err}
	}
	if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EACCES) {
		return fmt.Errorf("cannot reach %s: permission denied (is it another user's Airlock, or are you inside an Airlock sandbox?): %w", c.socket, err)
	}
	return fmt.Errorf("talk to Airlock on %s: %w", c.socket, err)
}

// Events subscribes to the live event stream (api.EventStream), to the given topics
// (all when none). The channel closes when ctx ends or the server goes away. A refusal
// (an unknown topic) is the server's *api.Error.
func (c *Client) Events(ctx context.Context, topics ...string) (<-chan api.Event, error) {
	path, err := api.EventStream.URL()
	if err != nil {
		return nil, err
	}
	q, err := api.EncodeQuery(api.EventQuery{Topics: topics})
	if err != nil {
		return nil, err
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://airlock"+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.dialError(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, errorOf(http.MethodGet, path, resp.Status, resp.StatusCode, raw)
	}
	out := make(chan api.Event, 64)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		_ = readEvents(ctx, bufio.NewReader(resp.Body), out)
	}()
	return out, nil
}

// Call performs one route of the table: In goes as the JSON body, or as the URL query
// for GET and DELETE; the answer is decoded into Out. args fill the path's {name}
// segments in order. Errors are as Do's.
func Call[In, Out any](ctx context.Context, c *Client, r api.Route[In, Out], in In, args ...string) (Out, error) {
	var out Out
	path, err := r.URL(args...)
	if err != nil {
		return out, err
	}
	var body any = in
	if r.InQuery() {
		q, err := api.EncodeQuery(in)
		if err != nil {
			return out, err
		}
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		body = nil
	} else if _, none := any(in).(api.None); none {
		body = nil
	}
	var dst any = &out
	if _, none := any(out).(api.None); none {
		dst = nil
	}
	err = c.Do(ctx, r.Method, path, body, dst)
	return out, err
}

// notASocket says what is at path when it exists and is not a socket ("a regular file",
// "a directory", ...), else "".
func notASocket(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return ""
	}
	switch m := fi.Mode(); {
	case m&fs.ModeSocket != 0:
		return ""
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return "a " + m.Type().String() + " file"
	}
}

// lockHolder reports whether some process holds the flock on path, and its pid, from
// /proc/locks: reading it takes no lock, so it cannot make a core that is starting fail
// to take its own. Where /proc/locks does not exist (macOS), it reports none.
func lockHolder(path string) (int, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, false
	}
	raw, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, false
	}
	dev := uint64(st.Dev) // int32 on macOS
	for _, line := range strings.Split(string(raw), "\n") {
		// "1: FLOCK  ADVISORY  WRITE 4242 00:2f:131 0 EOF"; a waiter's line has "->".
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "FLOCK" {
			continue
		}
		id := strings.Split(f[5], ":")
		if len(id) != 3 {
			continue
		}
		maj, err1 := strconv.ParseUint(id[0], 16, 32)
		mnr, err2 := strconv.ParseUint(id[1], 16, 32)
		ino, err3 := strconv.ParseUint(id[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || ino != uint64(st.Ino) ||
			uint32(maj) != unix.Major(dev) || uint32(mnr) != unix.Minor(dev) {
			continue
		}
		pid, _ := strconv.Atoi(f[4])
		return pid, true
	}
	return 0, false
}
