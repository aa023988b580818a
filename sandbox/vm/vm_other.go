//go:build !linux

package vm

import (
	"context"
	"errors"
	"log/slog"
)

// VM is a running micro-VM; the runner is Linux-only for now.
type VM struct {
	*Client
	Kernel, Accel, Warning string
}

// KVMFallback is "" outside Linux.
func KVMFallback() string { return "" }

// KVMUsable is false outside Linux.
func KVMUsable() bool { return false }

// Boot is not implemented outside Linux yet (macOS needs -accel hvf and virtio-mmio tests).
func Boot(ctx context.Context, c Config, log *slog.Logger) (*VM, error) {
	return nil, errors.New("the micro-VM runner works on Linux only for now; use execution_mode = \"local\"")
}

// Close does nothing.
func (v *VM) Close() error { return nil }
