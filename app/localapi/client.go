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
	"syscall"
	"time"

	"github.com/airlock-app/airlock/api"
)

// NotRunningError says no app or daemon answers on the socket.
type NotRunningError struct {
	Socket string
	Err    error
}

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("no Airlock app or daemon is running (nothing answers on %s): open the app, or start the headless core with `airlock daemon`", e.Socket)
}

func (e *NotRunningError) Unwrap() error { return e.Err }

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
// host:port.
var ErrNotAskAddress = errors.New("not a loopback address:port")

// NewAskClient returns a client for a sandbox's ask-only channel at addr (the value of
// AIRLOCK_ASK_SOCKET: a loopback address of the sandbox's own network namespace). It
// serves only the broker's check, await and after routes.
func NewAskClient(addr string) (*Client, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
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
		return &NotRunningError{Socket: c.socket, Err: err}
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
