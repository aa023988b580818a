package vm

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/airlock-app/airlock/sandbox"
)

// Machine is a booted VM as the pool uses it (*VM implements it).
type Machine interface {
	Exec(ctx context.Context, req ExecRequest) (ExecResult, error)
	Close() error
}

// BootFunc boots a VM for a configuration.
type BootFunc func(ctx context.Context, c Config) (Machine, error)

// Pool keeps one warm VM per (workspace, network) so the commands of a run reuse it, and
// shuts a VM down after it has been idle for Idle.
type Pool struct {
	base Config
	idle time.Duration
	boot BootFunc
	log  *slog.Logger

	mu     sync.Mutex
	vms    map[poolKey]*poolEntry
	closed bool
}

type poolKey struct {
	workspace string
	network   bool
	session   string // "" = shared by every caller of Exec
	// egress: the VM's network is its egress proxy's (Config.Egress), the proxy of the
	// command that booted it; a session (one dispatch run) keeps it for its commands.
	egress bool
	// ask: the VM serves an ask-only channel (Config.Ask), the one of the command that
	// booted it. Its requests carry that command's identity, which every caller of one
	// key must share: callers with an ask-only channel use a Session (one dispatch run,
	// one MCP session), never the pool's shared VMs.
	ask bool
}

type poolEntry struct {
	ready   chan struct{} // closed once booting ended
	m       Machine
	err     error
	busy    int
	timer   *time.Timer
	retired bool
}

// NewPool returns a pool that boots base with each workspace; boot nil = Boot.
func NewPool(base Config, idle time.Duration, boot BootFunc, log *slog.Logger) *Pool {
	if log == nil {
		log = slog.Default()
	}
	if boot == nil {
		boot = func(ctx context.Context, c Config) (Machine, error) {
			v, err := Boot(ctx, c, log)
			if err != nil {
				// Not v: a nil *VM in a Machine is not nil, and closing it would panic.
				return nil, err
			}
			return v, nil
		}
	}
	if idle <= 0 {
		idle = 5 * time.Minute
	}
	return &Pool{base: base, idle: idle, boot: boot, log: log, vms: map[poolKey]*poolEntry{}}
}

// Exec runs req in the warm VM of workspace (booting it when needed). A VM whose agent
// went away is thrown out and the next command boots a fresh one.
func (p *Pool) Exec(ctx context.Context, workspace string, network bool, req ExecRequest) (ExecResult, error) {
	res, _, err := p.exec(ctx, "", workspace, network, nil, nil, req)
	return res, err
}

// exec runs req in the session's VM for workspace; warning is the VM's boot warning (TCG).
// egress, when set, confines the network of a VM it boots to that proxy (Config.Egress);
// ask, when set, is the ask-only channel it serves (Config.Ask).
func (p *Pool) exec(ctx context.Context, session, workspace string, network bool, egress, ask *sandbox.Egress, req ExecRequest) (res ExecResult, warning string, err error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return ExecResult{}, "", fmt.Errorf("vm pool: workspace %q: %w", workspace, err)
	}
	key := poolKey{ws, network, session, egress != nil, ask != nil}
	e, err := p.acquire(ctx, key, egress, ask)
	if err != nil {
		return ExecResult{}, "", err
	}
	res, err = e.m.Exec(ctx, req)
	broken := false
	if a, ok := e.m.(interface{ Alive() bool }); ok && !a.Alive() {
		broken = true
	}
	if w, ok := e.m.(interface{ BootWarning() string }); ok {
		warning = w.BootWarning()
	}
	p.release(key, e, broken)
	return res, warning, err
}

func (p *Pool) acquire(ctx context.Context, key poolKey, egress, ask *sandbox.Egress) (*poolEntry, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("vm pool: closed")
	}
	e, ok := p.vms[key]
	if !ok {
		e = &poolEntry{ready: make(chan struct{})}
		p.vms[key] = e
		c := p.base
		c.Workspace, c.Network, c.Egress, c.Ask = key.workspace, key.network, egress, ask
		go func() {
			m, err := p.boot(context.WithoutCancel(ctx), c)
			p.mu.Lock()
			e.m, e.err = m, err
			if err != nil && p.vms[key] == e {
				delete(p.vms, key) // the next command tries again
			}
			p.mu.Unlock()
			close(e.ready)
		}()
	}
	e.busy++
	if e.timer != nil {
		e.timer.Stop()
	}
	p.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		p.release(key, e, false)
		return nil, ctx.Err()
	}
	if e.err != nil {
		p.release(key, e, false)
		return nil, fmt.Errorf("vm pool: boot: %w", e.err)
	}
	return e, nil
}

// release marks one command done; broken retires the VM now, else it stops after Idle.
func (p *Pool) release(key poolKey, e *poolEntry, broken bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.busy--
	if broken && !e.retired {
		p.retireLocked(key, e)
		return
	}
	if e.busy == 0 && !e.retired {
		e.timer = time.AfterFunc(p.idle, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if e.busy == 0 && !e.retired {
				p.log.Info("micro-VM idle, shutting it down", "workspace", key.workspace)
				p.retireLocked(key, e)
			}
		})
	}
}

// retireLocked removes e from the pool and closes its VM (in the background: Close waits).
func (p *Pool) retireLocked(key poolKey, e *poolEntry) {
	e.retired = true
	if p.vms[key] == e {
		delete(p.vms, key)
	}
	if e.m != nil {
		go e.m.Close()
	}
}

// Close shuts every VM down; Exec fails afterwards.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	entries := p.vms
	p.vms = map[poolKey]*poolEntry{}
	p.mu.Unlock()
	for _, e := range entries {
		<-e.ready
		p.mu.Lock()
		e.retired = true
		if e.timer != nil {
			e.timer.Stop()
		}
		m := e.m
		p.mu.Unlock()
		if m != nil {
			m.Close()
		}
	}
}

// Warm reports how many VMs are running or booting.
func (p *Pool) Warm() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.vms)
}

// Session is a set of VMs of the pool that belong to one session (a dispatch run, an
// agent's session): its commands share warm VMs with each other and with no one else,
// and End shuts them down, so what the session wrote outside its workspace is gone.
type Session struct {
	p  *Pool
	id string
}

// Session returns the session id of the pool (id must not be "").
func (p *Pool) Session(id string) *Session { return &Session{p: p, id: id} }

// Exec runs req in the session's VM for workspace and network (booting it when needed).
func (s *Session) Exec(ctx context.Context, workspace string, network bool, req ExecRequest) (ExecResult, error) {
	res, _, err := s.p.exec(ctx, s.id, workspace, network, nil, nil, req)
	return res, err
}

// End shuts the session's VMs down (in the background; a command still running in one
// is killed with it).
func (s *Session) End() {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	for k, e := range s.p.vms {
		if k.session != s.id {
			continue
		}
		if e.timer != nil {
			e.timer.Stop()
		}
		select {
		case <-e.ready:
			s.p.retireLocked(k, e)
		default:
			// Still booting: retire it once booted.
			delete(s.p.vms, k)
			e.retired = true
			go func() {
				<-e.ready
				if e.m != nil {
					e.m.Close()
				}
			}()
		}
	}
}
