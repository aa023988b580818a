package egress

import (
	"context"
	"fmt"
)

// Serve runs a proxy for the sandbox whose host pid is pid: it listens on addr (a
// loopback address) inside that process's network namespace and serves cfg's proxy
// there until stop is called or ctx ends. stop waits until the listener is closed;
// connections already open end by themselves (their destination or client closes
// them, or the namespace goes with the sandbox). It is what sandbox.ExecRequest.Egress
// expects (see Hook).
func Serve(ctx context.Context, pid int, addr string, cfg Config) (stop func(), err error) {
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := ListenInNetns(pid, addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := p.Serve(ctx, ln); err != nil {
			p.log.Warn("egress proxy stopped", "pid", pid, "err", fmt.Errorf("serve: %w", err))
		}
	}()
	return func() { cancel(); <-done }, nil
}

// Hook returns Serve with cfg, in the shape of sandbox.Egress.
func Hook(cfg Config) func(ctx context.Context, pid int, addr string) (stop func(), err error) {
	return func(ctx context.Context, pid int, addr string) (func(), error) {
		return Serve(ctx, pid, addr, cfg)
	}
}
