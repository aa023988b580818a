package app

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
)

// A --tcp address another program holds: the daemon's failure says so and the way out.
func TestDaemonStartFailureNamesABusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	_, err = net.Listen("tcp", addr)
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("second listen = %v, want EADDRINUSE", err)
	}
	got := startFailure(err, addr, "--tcp")
	if !errors.Is(got, syscall.EADDRINUSE) || !strings.Contains(got.Error(), "another program listens on "+addr) || !strings.Contains(got.Error(), "pick another address (--tcp)") {
		t.Fatalf("startFailure = %v", got)
	}
	if other := errors.New("boom"); startFailure(other, addr, "--tcp") != other {
		t.Fatal("other failures pass unchanged")
	}
}
