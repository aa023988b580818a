package vm

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm/agent"
)

// pipeMachine is a "VM" whose guest agent runs in this process over a pipe: everything
// but QEMU is real.
type pipeMachine struct {
	*Client
	stop   func()
	closed atomic.Bool
	cfg    Config
}

func (m *pipeMachine) Close() error { m.closed.Store(true); m.stop(); return nil }

// BootWarning: every test "VM" says it runs under emulation, as a TCG boot does.
func (m *pipeMachine) BootWarning() string { return "test VM: emulated" }

type bootCounter struct {
	mu       sync.Mutex
	machines []*pipeMachine
	fail     error
}

func (b *bootCounter) boot(ctx context.Context, c Config) (Machine, error) {
	b.mu.Lock()
	fail := b.fail
	b.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	host, guest := net.Pipe()
	actx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { agent.Serve(actx, guest, guest, agent.Options{}); guest.Close(); close(done) }()
	cl := NewClient(host)
	if _, err := cl.WaitReady(ctx); err != nil {
		cancel()
		return nil, err
	}
	m := &pipeMachine{Client: cl, cfg: c, stop: func() { cancel(); cl.Close(); <-done }}
	b.mu.Lock()
	b.machines = append(b.machines, m)
	b.mu.Unlock()
	return m, nil
}

func (b *bootCounter) count() int { b.mu.Lock(); defer b.mu.Unlock(); return len(b.machines) }

func echo(t *testing.T, p *Pool, ws string, network bool) {
	t.Helper()
	var out bytes.Buffer
	res, err := p.Exec(context.Background(), ws, network, ExecRequest{Argv: []string{"/bin/echo", "hi"}, Cwd: "/", Stdout: &out})
	if err != nil || res.ExitCode != 0 || out.String() != "hi\n" {
		t.Fatalf("exec in pool: %v %+v %q", err, res, out.String())
	}
}

func TestPoolReusesOneVMPerWorkspace(t *testing.T) {
	b := &bootCounter{}
	p := NewPool(Config{}, time.Hour, b.boot, nil)
	defer p.Close()
	a, c := t.TempDir(), t.TempDir()
	echo(t, p, a, false)
	echo(t, p, a, false)
	if b.count() != 1 {
		t.Fatalf("%d boots for two commands in one workspace", b.count())
	}
	echo(t, p, c, false)
	echo(t, p, a, true)
	if b.count() != 3 || p.Warm() != 3 {
		t.Fatalf("boots %d warm %d, want one per (workspace, network)", b.count(), p.Warm())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); echo(t, p, c, false) }()
	}
	wg.Wait()
	if b.count() != 3 {
		t.Errorf("concurrent commands booted more VMs: %d", b.count())
	}
	if b.machines[0].cfg.Workspace != a || b.machines[2].cfg.Network != true {
		t.Errorf("configs %+v %+v", b.machines[0].cfg, b.machines[2].cfg)
	}
	p.Close()
	for i, m := range b.machines {
		if !m.closed.Load() {
			t.Errorf("machine %d still running after Close", i)
		}
	}
	if _, err := p.Exec(context.Background(), a, false, ExecRequest{Argv: []string{"true"}}); err == nil {
		t.Error("exec after Close")
	}
}

func TestPoolShutsIdleVMDown(t *testing.T) {
	b := &bootCounter{}
	p := NewPool(Config{}, 30*time.Millisecond, b.boot, nil)
	defer p.Close()
	ws := t.TempDir()
	echo(t, p, ws, false)
	for p.Warm() != 0 {
		<-time.After(5 * time.Millisecond)
	}
	for !b.machines[0].closed.Load() {
		<-time.After(5 * time.Millisecond)
	}
	echo(t, p, ws, false)
	if b.count() != 2 {
		t.Errorf("%d boots, want a fresh VM after the idle one stopped", b.count())
	}
}

func TestPoolReplacesDeadVMAndRetriesFailedBoot(t *testing.T) {
	b := &bootCounter{fail: errors.New("no kvm, no luck")}
	p := NewPool(Config{}, time.Hour, b.boot, nil)
	defer p.Close()
	ws := t.TempDir()
	if _, err := p.Exec(context.Background(), ws, false, ExecRequest{Argv: []string{"true"}}); err == nil {
		t.Fatal("exec with a failing boot succeeded")
	}
	b.mu.Lock()
	b.fail = nil
	b.mu.Unlock()
	echo(t, p, ws, false) // the failed boot was not cached
	b.machines[0].stop()  // the guest agent dies
	if _, err := p.Exec(context.Background(), ws, false, ExecRequest{Argv: []string{"true"}}); err == nil {
		t.Fatal("exec on a dead VM succeeded")
	}
	echo(t, p, ws, false)
	if b.count() != 2 {
		t.Errorf("%d boots, want the dead VM replaced", b.count())
	}
}

// A session's commands share a VM with each other and no one else; End shuts it down.
func TestPoolSessionsAreApartAndEndStopsThem(t *testing.T) {
	b := &bootCounter{}
	p := NewPool(Config{}, time.Minute, b.boot, nil)
	defer p.Close()
	ws := t.TempDir()
	run := func(s *Session) {
		t.Helper()
		var out bytes.Buffer
		if _, err := s.Exec(context.Background(), ws, false, ExecRequest{Argv: []string{"true"}, Cwd: ws, Stdout: &out}); err != nil {
			t.Fatal(err)
		}
	}
	a, c := p.Session("run-1"), p.Session("run-2")
	run(a)
	run(a)
	if b.count() != 1 {
		t.Fatalf("one session booted %d VMs", b.count())
	}
	run(c)
	echo(t, p, ws, false)
	if b.count() != 3 {
		t.Fatalf("two sessions and the shared pool booted %d VMs, want 3", b.count())
	}
	a.End()
	deadline := time.Now().Add(5 * time.Second)
	for !b.machines[0].closed.Load() {
		if time.Now().After(deadline) {
			t.Fatal("End did not stop the session's VM")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if b.machines[1].closed.Load() || b.machines[2].closed.Load() {
		t.Fatal("End stopped another session's VM")
	}
	run(a) // a new command of an ended session boots afresh
	if b.count() != 4 {
		t.Fatalf("after End: %d boots, want 4", b.count())
	}
}

// TestPoolEndWhileABootFails: a session ended while its VM boots, whose boot then fails
// (QEMU exits), does not crash the process closing a VM that never was.
func TestPoolEndWhileABootFails(t *testing.T) {
	dir := t.TempDir()
	qemu := filepath.Join(dir, "qemu")
	if err := os.WriteFile(qemu, []byte("#!/bin/sh\nsleep 0.3\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := NewPool(Config{QEMU: qemu, Kernel: filepath.Join(dir, "vmlinuz"), Rootfs: filepath.Join(dir, "rootfs"), Accel: "tcg"}, time.Minute, nil, nil)
	defer p.Close()
	s := p.Session("run-1")
	errc := make(chan error, 1)
	go func() {
		_, err := s.Exec(context.Background(), dir, false, ExecRequest{Argv: []string{"true"}, Cwd: "/"})
		errc <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		booting := len(p.vms)
		p.mu.Unlock()
		if booting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session's VM never started booting")
		}
		time.Sleep(time.Millisecond)
	}
	s.End()
	if err := <-errc; err == nil {
		t.Fatal("a boot whose QEMU exited succeeded")
	}
	time.Sleep(100 * time.Millisecond) // End's goroutine closes the failed boot meanwhile
}

// TestPoolCommandsCarryTheBootWarning: a command in a warm VM that runs under TCG says so
// in its result (the run's log), not only the boot that made the VM.
func TestPoolCommandsCarryTheBootWarning(t *testing.T) {
	b := &bootCounter{}
	p := NewPool(Config{}, time.Minute, b.boot, nil)
	defer p.Close()
	ws := t.TempDir()
	for _, exec := range []func(context.Context, sandbox.ExecRequest) (sandbox.Result, error){p.SandboxExec, p.Session("run-1").SandboxExec} {
		for range 2 {
			// (The in-process agent has no /workspace, so the command itself fails: a
			// failed command must carry the warning as well.)
			var out bytes.Buffer
			res, _ := exec(context.Background(), sandbox.ExecRequest{Policy: sandbox.Policy{Cwd: ws}, Argv: []string{"true"}, Stdout: &out, Stderr: &out})
			if res.Warning != "test VM: emulated" {
				t.Fatalf("result %+v: want the VM's boot warning", res)
			}
		}
	}
}

// envMachine is a "VM" that records what it was booted with and the environment of
// each command, and runs nothing.
type envMachine struct {
	cfg Config
	env chan []string
}

func (m *envMachine) Exec(_ context.Context, req ExecRequest) (ExecResult, error) {
	m.env <- req.Env
	return ExecResult{}, nil
}

func (m *envMachine) Close() error { return nil }

// TestAskOnlyChannelOnlyInASession: a session's VM boots with the request's ask-only
// channel and tells the guest where it is; the pool's shared VMs, whose callers are many,
// boot with none and the guest is told of none (whatever the host's environment said).
func TestAskOnlyChannelOnlyInASession(t *testing.T) {
	booted := make(chan *envMachine, 2)
	p := NewPool(Config{}, time.Minute, func(_ context.Context, c Config) (Machine, error) {
		m := &envMachine{cfg: c, env: make(chan []string, 1)}
		booted <- m
		return m, nil
	}, nil)
	defer p.Close()
	ask := sandbox.Egress(func(context.Context, int, string) (func(), error) { return func() {}, nil })
	for _, tc := range []struct {
		name string
		exec func(context.Context, sandbox.ExecRequest) (sandbox.Result, error)
		want string // the guest's AIRLOCK_ASK_SOCKET
	}{
		{"a session", p.Session("run-1").SandboxExec, sandbox.MicroVMAskAddr},
		{"the shared pool", p.SandboxExec, ""},
	} {
		if _, err := tc.exec(context.Background(), sandbox.ExecRequest{
			Policy: sandbox.Policy{Cwd: t.TempDir()}, Ask: ask, Env: []string{sandbox.EnvAskSocket + "=127.0.0.1:1"}, Argv: []string{"true"},
		}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		m := <-booted
		got := ""
		for _, kv := range <-m.env {
			if v, ok := strings.CutPrefix(kv, sandbox.EnvAskSocket+"="); ok {
				got = v
			}
		}
		if got != tc.want || (m.cfg.Ask != nil) != (tc.want != "") {
			t.Errorf("%s: the guest's %s is %q and the VM booted with a channel: %v; want %q", tc.name, sandbox.EnvAskSocket, got, m.cfg.Ask != nil, tc.want)
		}
	}
}
