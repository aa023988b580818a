package vm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/airlock-app/airlock/sandbox/vm/agent"
)

// ExecRequest is one command to run in the guest.
type ExecRequest struct {
	Argv    []string
	Cwd     string   // "" = /workspace
	Env     []string // the whole environment, KEY=VALUE ("" = a minimal PATH/HOME)
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Timeout time.Duration // 0 = none; the guest kills the command's whole process group
}

// ExecResult is how a command ended.
type ExecResult struct {
	ExitCode int  // 128+N after signal N
	Signal   int  // the signal that ended it, 0 if it exited
	TimedOut bool // killed by Timeout
}

// Client speaks the agent protocol over one connection.
type Client struct {
	enc    *json.Encoder
	wmu    sync.Mutex
	conn   io.Closer
	broken atomic.Bool // a write failed: the connection is gone

	mu       sync.Mutex
	waiters  map[string]chan agent.Message
	lastBeat time.Time
	ready    chan agent.Message
	closed   chan struct{}
	readErr  error
	nextID   int
}

// NewClient starts reading conn. Call WaitReady before Exec.
func NewClient(conn io.ReadWriteCloser) *Client {
	c := &Client{enc: json.NewEncoder(conn), conn: conn, waiters: map[string]chan agent.Message{},
		ready: make(chan agent.Message, 1), closed: make(chan struct{})}
	go c.read(conn)
	return c
}

func (c *Client) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		var m agent.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			continue
		}
		c.mu.Lock()
		c.lastBeat = time.Now()
		ch := c.waiters[m.ID]
		c.mu.Unlock()
		switch {
		case m.Type == agent.TypeReady:
			select {
			case c.ready <- m:
			default:
			}
		case ch != nil:
			ch <- m
		}
	}
	c.mu.Lock()
	c.readErr = sc.Err()
	if c.readErr == nil {
		c.readErr = io.EOF
	}
	c.mu.Unlock()
	close(c.closed)
}

// WaitReady waits for the agent's ready message and returns the guest's kernel release.
func (c *Client) WaitReady(ctx context.Context) (string, error) {
	select {
	case m := <-c.ready:
		if m.Version != agent.ProtocolVersion {
			return "", fmt.Errorf("guest agent speaks protocol %d, Airlock %d: rebuild the image (make sandbox-image)", m.Version, agent.ProtocolVersion)
		}
		return m.Kernel, nil
	case <-c.closed:
		return "", fmt.Errorf("guest agent connection closed before it was ready: %w", c.err())
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// LastHeard is when the agent last sent anything (heartbeats arrive every second).
func (c *Client) LastHeard() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastBeat
}

func (c *Client) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

func (c *Client) send(m agent.Message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	err := c.enc.Encode(m)
	if err != nil {
		c.broken.Store(true)
	}
	return err
}

// Alive reports whether the agent connection is still open.
func (c *Client) Alive() bool {
	select {
	case <-c.closed:
		return false
	default:
		return !c.broken.Load()
	}
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Exec runs one command and streams its output. Cancelling ctx kills the command in the guest.
func (c *Client) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	if len(req.Argv) == 0 {
		return ExecResult{}, errors.New("vm exec: empty command")
	}
	cwd, env := req.Cwd, req.Env
	if cwd == "" {
		cwd = GuestWorkspace
	}
	if env == nil {
		env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8"}
	}
	ch := make(chan agent.Message, 256)
	c.mu.Lock()
	c.nextID++
	id := "c" + strconv.Itoa(c.nextID)
	c.waiters[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiters, id)
		c.mu.Unlock()
	}()
	if err := c.send(agent.Message{Type: agent.TypeExec, ID: id, Argv: req.Argv, Cwd: cwd, Env: env, TimeoutMs: req.Timeout.Milliseconds()}); err != nil {
		return ExecResult{}, fmt.Errorf("vm exec: send: %w", err)
	}
	stdinDone := make(chan struct{})
	defer close(stdinDone)
	startStdin := func() {
		if req.Stdin == nil {
			c.send(agent.Message{Type: agent.TypeStdinClose, ID: id})
			return
		}
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := req.Stdin.Read(buf)
				if n > 0 {
					select {
					case <-stdinDone:
						return
					default:
					}
					if c.send(agent.Message{Type: agent.TypeStdin, ID: id, Data: append([]byte(nil), buf[:n]...)}) != nil {
						return
					}
				}
				if err != nil {
					c.send(agent.Message{Type: agent.TypeStdinClose, ID: id})
					return
				}
			}
		}()
	}
	killed := false
	var cancelErr error
	for {
		select {
		case m := <-ch:
			switch m.Type {
			case agent.TypeStarted:
				startStdin()
			case agent.TypeStdout:
				if req.Stdout != nil {
					req.Stdout.Write(m.Data)
				}
			case agent.TypeStderr:
				if req.Stderr != nil {
					req.Stderr.Write(m.Data)
				}
			case agent.TypeExit:
				res := ExecResult{ExitCode: m.Code, Signal: m.Signal, TimedOut: m.TimedOut}
				if m.Error != "" {
					return res, fmt.Errorf("vm exec %s: %s", req.Argv[0], m.Error)
				}
				if killed {
					return res, cancelErr
				}
				return res, nil
			}
		case <-ctx.Done():
			if !killed {
				killed, cancelErr = true, ctx.Err()
				c.send(agent.Message{Type: agent.TypeSignal, ID: id, Signal: int(syscall.SIGKILL)})
			}
			ctx = context.WithoutCancel(ctx)
		case <-c.closed:
			return ExecResult{ExitCode: 125}, fmt.Errorf("vm exec %s: the guest agent went away: %w", req.Argv[0], c.err())
		}
	}
}
