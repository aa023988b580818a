package vm

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/sandbox/vm/agent"
)

// agentClient connects a Client to a real agent serving on the other end of a pipe.
func agentClient(t *testing.T) (*Client, func()) {
	t.Helper()
	host, guest := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		agent.Serve(ctx, guest, guest, agent.Options{Kernel: "guest-kernel"})
		guest.Close()
		close(done)
	}()
	c := NewClient(host)
	stop := func() { cancel(); c.Close(); <-done }
	t.Cleanup(stop)
	k, err := c.WaitReady(context.Background())
	if err != nil || k != "guest-kernel" {
		t.Fatalf("ready: %q %v", k, err)
	}
	return c, stop
}

func TestClientExec(t *testing.T) {
	c, _ := agentClient(t)
	var out, errb bytes.Buffer
	res, err := c.Exec(context.Background(), ExecRequest{Argv: []string{"/bin/sh", "-c", "tr a-z A-Z; echo warn >&2; exit 4"},
		Cwd: "/", Stdin: strings.NewReader("hello vm\n"), Stdout: &out, Stderr: &errb})
	if err != nil || res.ExitCode != 4 || out.String() != "HELLO VM\n" || errb.String() != "warn\n" {
		t.Fatalf("exec: %v %+v out %q err %q", err, res, out.String(), errb.String())
	}
	res, err = c.Exec(context.Background(), ExecRequest{Argv: []string{"/bin/sleep", "60"}, Cwd: "/", Timeout: 100 * time.Millisecond})
	if err != nil || !res.TimedOut || res.ExitCode != 137 {
		t.Fatalf("timeout: %v %+v", err, res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err = c.Exec(ctx, ExecRequest{Argv: []string{"/bin/sleep", "60"}, Cwd: "/"})
	if !errors.Is(err, context.Canceled) || res.Signal != 9 {
		t.Fatalf("cancel: %v %+v", err, res)
	}
	if _, err := c.Exec(context.Background(), ExecRequest{Argv: []string{"/no/such"}, Cwd: "/"}); err == nil {
		t.Fatal("exec of a missing binary succeeded")
	}
	if c.LastHeard().IsZero() {
		t.Error("nothing heard from the agent")
	}
}

func TestClientAgentGone(t *testing.T) {
	c, stop := agentClient(t)
	go func() { time.Sleep(100 * time.Millisecond); stop() }()
	_, err := c.Exec(context.Background(), ExecRequest{Argv: []string{"/bin/sleep", "60"}, Cwd: "/"})
	if err == nil {
		t.Fatal("exec survived the agent going away")
	}
}
