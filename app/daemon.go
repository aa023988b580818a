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
	if opts.Stderr != nil && opts.JSON {
		line, _ := json.Marshal(map[string]any{"running": true, "kind": KindDaemon, "pid": os.Getpid(), "socket": core.Paths.Socket})
		fmt.Fprintln(opts.Stderr, string(line))
	} else if opts.Stderr != nil {
		fmt.Fprintf(opts.Stderr, "airlock daemon: running as pid %d, socket %s (stop with Ctrl-C or SIGTERM)\n", os.Getpid(), core.Paths.Socket)
	}
	runErr := core.Run(ctx, nil)
	slog.Info("airlock daemon: stopping")
	return errors.Join(runErr, core.Close())
}
