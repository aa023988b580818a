package egresstest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Outside is a host that is not this machine, for tests that must reach "the internet"
// from a sandbox whose network refuses this machine's own addresses: a network namespace
// of its own joined to this one by a veth pair, with an address in TEST-NET-2
// (198.51.100.0/24) routed there through the pair. The pair is a LAN of this machine
// (refused, and so is Host, this machine's end); Addr, beyond it, is an outside host
// like any other.
type Outside struct {
	// Addr is the outside host's address.
	Addr string
	// Link is the outside host's end of the pair: on this machine's LAN.
	Link string
	// Host is this machine's end of the link (one of its own addresses).
	Host string
	ns   string
}

// NewOutside makes the outside host; it is removed with the test. It needs root and
// iproute2 (the test skips without them).
func NewOutside(t testing.TB) *Outside {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("an outside host for the test needs root (a network namespace joined by a veth pair)")
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("an outside host for the test needs iproute2 (apt install iproute2)")
	}
	run := func(args ...string) error {
		if out, err := exec.Command(ip, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	var lastErr error
	for try := 0; try < 8; try++ {
		b := make([]byte, 3)
		_, _ = rand.Read(b)
		id := hex.EncodeToString(b)
		// The link is a /30 in 198.51.100.0/25 (this machine's end is on it, so it is
		// its LAN); the outside host's address is in 198.51.100.128/25, routed over it.
		n, _ := rand.Int(rand.Reader, big.NewInt(32))
		sub := 4 * int(n.Int64())
		farLink := fmt.Sprintf("198.51.100.%d", sub+2)
		o := &Outside{Addr: fmt.Sprintf("198.51.100.%d", 128+sub/4), Host: fmt.Sprintf("198.51.100.%d", sub+1), Link: farLink, ns: "airlock-out-" + id}
		if lastErr = run("netns", "add", o.ns); lastErr != nil {
			continue
		}
		t.Cleanup(func() { _ = run("netns", "del", o.ns) })
		hostIf, farIf := "alo"+id, "ali"+id
		for _, args := range [][]string{
			{"link", "add", hostIf, "type", "veth", "peer", "name", farIf, "netns", o.ns},
			{"addr", "add", o.Host + "/30", "dev", hostIf},
			{"link", "set", hostIf, "up"},
			{"-n", o.ns, "addr", "add", farLink + "/30", "dev", farIf},
			{"-n", o.ns, "addr", "add", o.Addr + "/32", "dev", "lo"},
			{"-n", o.ns, "link", "set", farIf, "up"},
			{"-n", o.ns, "link", "set", "lo", "up"},
			{"-n", o.ns, "route", "add", "default", "via", o.Host},
			{"route", "add", o.Addr + "/32", "via", farLink},
		} {
			if lastErr = run(args...); lastErr != nil {
				break
			}
		}
		if lastErr == nil {
			return o
		}
		_ = run("netns", "del", o.ns) // an address another test holds: try another
	}
	t.Fatalf("an outside host for the test: %v", lastErr)
	return nil
}

// Listen listens on the outside host (network "tcp" or "udp", port 0); it closes with
// the test.
func (o *Outside) Listen(t testing.TB, network string) (ln net.Listener, pc net.PacketConn) {
	t.Helper()
	return o.ListenAt(t, network, o.Addr)
}

// ListenAt is Listen on ip, one of the outside host's addresses (Addr or Link).
func (o *Outside) ListenAt(t testing.TB, network, ip string) (ln net.Listener, pc net.PacketConn) {
	t.Helper()
	ns, err := os.Open("/run/netns/" + o.ns)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		var err error
		if network == "udp" {
			pc, err = net.ListenPacket("udp", net.JoinHostPort(ip, "0"))
		} else {
			ln, err = net.Listen("tcp", net.JoinHostPort(ip, "0"))
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatalf("listen on the outside host: %v", err)
	}
	t.Cleanup(func() {
		if ln != nil {
			ln.Close()
		}
		if pc != nil {
			pc.Close()
		}
	})
	return ln, pc
}

// GreeterOutside is Greeter on the outside host.
func (o *Outside) GreeterOutside(t testing.TB, greeting string) net.Listener {
	t.Helper()
	ln, _ := o.Listen(t, "tcp")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(greeting))
			c.Close()
		}
	}()
	return ln
}
