package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// DaemonOptions configure RunDaemon.
type DaemonOptions struct {
	TCPAddress string // also listen on this loopback address
	Stderr     io.Writer
	JSON       bool // announce the start as one JSON line
}

// RunDaemon hosts the core headless until SIGINT or SIGTERM, then stops it cleanly:
// requests in flight finish, writes complete, the database is checkpointed and closed.
// It announces "running" only once the core answers on its socket; a start that fails
// before that returns the failure and announces nothing.
func RunDaemon(ctx context.Context, opts DaemonOptions) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	flags := map[string]any{}
	if opts.TCPAddress != "" {
		flags["api.tcp_address"] = opts.TCPAddress
	}
	core, err := Open(ctx, Options{Kind: KindDaemon, Flags: flags})
	if err != nil {
		return err
	}
	ready := make(chan struct{})
	core.OnReady = func() { close(ready) }
	done := make(chan error, 1)
	go func() { done <- core.Run(ctx, nil) }()
	var runErr error
	select {
	case <-ready:
		announce(opts, core)
		runErr = <-done
	case runErr = <-done:
		if runErr != nil {
			runErr = fmt.Errorf("the daemon did not start: %w", startFailure(runErr, core.tcpAddress, core.tcpFrom))
		}
	}
	slog.Info("airlock daemon: stopping")
	return errors.Join(runErr, core.Close())
}

// announce says on opts.Stderr that the daemon runs (one JSON line with opts.JSON).
func announce(opts DaemonOptions, core *Core) {
	switch {
	case opts.Stderr == nil:
	case opts.JSON:
		line, _ := json.Marshal(map[string]any{"running": true, "kind": KindDaemon, "pid": os.Getpid(), "socket": core.Paths.Socket})
		fmt.Fprintln(opts.Stderr, string(line))
	default:
		fmt.Fprintf(opts.Stderr, "airlock daemon: running as pid %d, socket %s (stop with Ctrl-C or SIGTERM)\n", os.Getpid(), core.Paths.Socket)
	}
}

// startFailure adds the way out to a failure to listen on the TCP address tcp, which
// from chose (--tcp, or config.toml's [api] tcp_address).
func startFailure(err error, tcp, from string) error {
	if tcp != "" && errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w: another program listens on %s (another Airlock core, of another AIRLOCK_HOME? `airlock status` with its AIRLOCK_HOME says); stop it or pick another address (%s)", err, tcp, from)
	}
	return err
}
