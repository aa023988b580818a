package vm

import (
	"context"
	"io"
	"testing"
	"time"
)

func benchImage(b *testing.B) Config {
	c, reason := findImage()
	if reason != "" {
		b.Skip(reason)
	}
	c.Workspace = b.TempDir()
	return c
}

// BenchmarkColdBoot is QEMU start to the first command's exit.
func BenchmarkColdBoot(b *testing.B) {
	c := benchImage(b)
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		v, err := Boot(ctx, c, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := v.Exec(ctx, ExecRequest{Argv: []string{"true"}}); err != nil {
			b.Fatal(err)
		}
		v.Close()
		cancel()
	}
}

// BenchmarkWarmExec is one `true` in a running VM.
func BenchmarkWarmExec(b *testing.B) {
	c := benchImage(b)
	v, err := Boot(context.Background(), c, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	for b.Loop() {
		if _, err := v.Exec(context.Background(), ExecRequest{Argv: []string{"true"}, Stdout: io.Discard}); err != nil {
			b.Fatal(err)
		}
	}
}
