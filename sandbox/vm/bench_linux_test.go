package vm

import (
	"context"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress"
)

func benchImage(b *testing.B) Config {
	c, reason := findImage()
	if reason != "" {
		b.Skip(reason)
	}
	c.Workspace = b.TempDir()
	return c
}

// BenchmarkColdBoot is QEMU start to the first command's exit: no network device (off),
// QEMU in a network namespace of its own with the ask-only channel (ask), and with
// slirp4netns connecting that namespace (on).
func BenchmarkColdBoot(b *testing.B) {
	ask := sandbox.Egress(func(_ context.Context, pid int, addr string) (func(), error) {
		ln, err := egress.ListenInNetns(pid, addr)
		if err != nil {
			return nil, err
		}
		return func() { ln.Close() }, nil
	})
	for _, tc := range []struct {
		name    string
		network bool
		ask     *sandbox.Egress
	}{{"off", false, nil}, {"ask", false, &ask}, {"on", true, nil}} {
		b.Run(tc.name, func(b *testing.B) {
			c := benchImage(b)
			c.Network, c.Ask = tc.network, tc.ask
			coldBoot(b, c)
		})
	}
}

func coldBoot(b *testing.B, c Config) {
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

// BenchmarkWarmExecSandbox is one `true` through sandbox.Exec in execution_mode sandbox
// with the pool's warm VM (what a dispatch run's or an MCP session's second command costs).
func BenchmarkWarmExecSandbox(b *testing.B) {
	c := benchImage(b)
	pool := NewPool(c, time.Minute, nil, nil)
	defer pool.Close()
	pol := benchPolicy(b, c.Workspace, sandbox.ExecSandbox)
	req := sandbox.ExecRequest{Policy: pol, Argv: []string{"true"}, Stdout: io.Discard, MicroVM: pool.SandboxExec}
	if _, err := sandbox.Exec(context.Background(), req); err != nil { // boot outside the timing
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := sandbox.Exec(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLocalBwrap is one `true` through sandbox.Exec in execution_mode local (bwrap
// on this machine), for comparison.
func BenchmarkLocalBwrap(b *testing.B) {
	ws := b.TempDir()
	pol := benchPolicy(b, ws, sandbox.ExecLocal)
	for b.Loop() {
		if _, err := sandbox.Exec(context.Background(), sandbox.ExecRequest{Policy: pol, Argv: []string{"true"}, Stdout: io.Discard}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBare is /bin/true started directly, the floor.
func BenchmarkBare(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPolicy(b *testing.B, ws string, mode sandbox.ExecutionMode) sandbox.Policy {
	m := string(mode)
	pol, err := sandbox.Resolve(sandbox.Inputs{Flags: sandbox.Layer{ExecutionMode: &m}, Cwd: ws, Env: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	return pol
}
