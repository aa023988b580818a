package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-app/airlock/sandbox/egress/egresstest"
)

// countingListener accepts on ln and counts the connections it gets.
func countingListener(t *testing.T, ln net.Listener) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Write([]byte("hello from the host\n"))
			c.Close()
		}
	}()
	return &n
}

// startXvfb starts an X server listening on TCP (port 6000+display) on all interfaces,
// as `Xvfb :N -listen tcp` does; 0 when Xvfb is not installed.
func startXvfb(t *testing.T) int {
	t.Helper()
	bin, err := exec.LookPath("Xvfb")
	if err != nil {
		return 0
	}
	for d := 40 + os.Getpid()%50; d < 140; d++ {
		cmd := exec.Command(bin, ":"+strconv.Itoa(d), "-listen", "tcp", "-nolisten", "unix", "-ac")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 50; i++ {
			if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(6000+d), 100*time.Millisecond); err == nil {
				c.Close()
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				return 6000 + d
			}
			if cmd.ProcessState != nil {
				break
			}
			time.Sleep(40 * time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	t.Fatal("Xvfb did not listen on any display from :40")
	return 0
}

// TestNetworkOnRefusesThisMachineAndTheLAN: with the network on, services listening on
// all interfaces of this machine (a TCP server on 0.0.0.0, an X server started with
// -listen tcp) are not reached through the machine's own external address (as an IPv4
// address, IPv4-mapped, or from a socket bound to the sandbox's interface), nor are the
// private, CGNAT, link-local and multicast ranges, and the sandbox cannot remove the
// routes that refuse them; an outside host is still reached. With allow_local the
// machine's own address is reached again. Before the filter, the own address reached
// both servers.
func TestNetworkOnRefusesThisMachineAndTheLAN(t *testing.T) {
	requireNetStack(t)
	forcedBackend = BackendNameBwrap
	defer func() { forcedBackend = "" }()
	own := egresstest.OwnAddress(t)
	var own6 []string // this machine's global IPv6 addresses: the stack has no IPv6 at all
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() == nil && n.IP.IsGlobalUnicast() {
				own6 = append(own6, n.IP.String())
			}
		}
	}
	all, err := net.Listen("tcp", ":0")
	must(t, err)
	accepted := countingListener(t, all)
	xport := startXvfb(t)
	f := newFixture(t, "workspace-write", true)
	outside := outsideListener(t, f)
	outsideHits := countingListener(t, outside)
	lanProbe := "" // a host on this machine's LAN, numbered from public space (as root)
	if os.Geteuid() == 0 {
		o := egresstest.NewOutside(t)
		ln, _ := o.ListenAt(t, "tcp", o.Link)
		accepted2 := countingListener(t, ln)
		lanProbe = ln.Addr().String()
		t.Cleanup(func() {
			if accepted2.Load() > 0 {
				t.Errorf("ESCAPE: a host on this machine's LAN (%s) was reached", lanProbe)
			}
		})
	}
	allowLocal := f.policy.Allowlist != nil && f.policy.Allowlist.AllowLocal // no root: the outside host is this machine
	ports := fmt.Sprintf("%d %d", all.Addr().(*net.TCPAddr).Port, xport)
	script := `$PY - <<'PYEOF'
import os, socket
own, outside = os.environ["OWN"], os.environ["OUTSIDE"].rsplit(":", 1)
def tcp(host, port, fam=socket.AF_INET, dev=None):
    def f():
        s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(2)
        if dev: s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev)
        s.connect((host, int(port))); print(s.recv(64).decode().strip())
    return f
probes = []
for port in os.environ["PORTS"].split():
    if port != "0":
        probes += [("own " + port, tcp(own, port)), ("mapped " + port, tcp("::ffff:" + own, port, socket.AF_INET6)),
                   ("bound to tap0 " + port, tcp(own, port, dev=b"tap0"))]
        for own6 in os.environ["OWN6"].split():
            probes.append(("own6 " + own6 + " " + port, tcp(own6, port, socket.AF_INET6)))
if os.environ.get("LAN"):
    lan = os.environ["LAN"].rsplit(":", 1)
    probes.append(("public LAN " + lan[0], tcp(lan[0], lan[1])))
for host in ["10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "224.0.0.1"]:
    probes.append(("range " + host, tcp(host, 80)))
for what, fn in probes:
    try:
        fn(); print(what, "REACHED")
    except Exception as e:
        print(what, "refused", e)
try:
    tcp(outside[0], outside[1])(); print("outside reached")
except Exception as e:
    print("outside unreachable", e)
PYEOF
ip route del prohibit 10.0.0.0/8 2>&1 && echo "ROUTE REMOVED"
ip route show type prohibit | wc -l | sed 's/^/prohibit routes: /'`
	env := func(r *ExecRequest) {
		r.Env = append(r.Env, "LAN="+lanProbe, "OWN="+own, "OWN6="+strings.Join(own6, " "), "PORTS="+ports, "OUTSIDE="+outside.Addr().String())
	}
	out, res := f.run(t, script, env)
	t.Logf("exit %d:\n%s", res.ExitCode, out)
	if !strings.Contains(out, "outside reached") || outsideHits.Load() == 0 {
		t.Errorf("network on, but the outside host was not reached:\n%s", out)
	}
	if !allowLocal {
		if strings.Contains(out, "REACHED") || strings.Contains(out, "ROUTE REMOVED") || accepted.Load() > 0 {
			t.Errorf("ESCAPE: with the network on the sandbox reached this machine or its network (%d accepted):\n%s", accepted.Load(), out)
		}
		if !strings.Contains(out, "range 10.0.0.1 refused [Errno 13]") || !strings.Contains(out, "own "+strconv.Itoa(all.Addr().(*net.TCPAddr).Port)+" refused [Errno 13]") {
			t.Errorf("want the local ranges and the own address refused at once (EACCES):\n%s", out)
		}
		if xport != 0 && !strings.Contains(out, "own "+strconv.Itoa(xport)+" refused") {
			t.Errorf("the X server's TCP port was not probed as refused:\n%s", out)
		}
	}

	// allow_local: the machine's own address is reached.
	lists := *f.policy.Allowlist
	lists.AllowLocal = true
	f.policy.Allowlist = &lists
	before := accepted.Load()
	out, _ = f.run(t, `exec 3<>/dev/tcp/$OWN/${PORTS%% *} && cat <&3`, env)
	if !strings.Contains(out, "hello from the host") || accepted.Load() == before {
		t.Errorf("allow_local: this machine's own address was not reached:\n%s", out)
	}
	noStackLeft(t)
}

// TestNetworkFilterThroughHelper: the routes are set the way an ordinary user's Airlock
// sets them (nsenter runs a helper in the sandbox's user and network namespaces, which
// passes a routing socket back), and still refuse this machine's own address.
func TestNetworkFilterThroughHelper(t *testing.T) {
	requireNetStack(t)
	forcedBackend = BackendNameBwrap
	forceNetlinkHelper = true
	defer func() { forcedBackend, forceNetlinkHelper = "", false }()
	own := egresstest.OwnAddress(t)
	all, err := net.Listen("tcp", ":0")
	must(t, err)
	accepted := countingListener(t, all)
	f := newFixture(t, "workspace-write", true)
	out, _ := f.run(t, fmt.Sprintf(`exec 3<>/dev/tcp/%s/%d && cat <&3 && echo REACHED; ip route show type prohibit | grep -c .`, own, all.Addr().(*net.TCPAddr).Port))
	if strings.Contains(out, "REACHED") || accepted.Load() > 0 || !strings.Contains(out, "Permission denied") {
		t.Errorf("ESCAPE: through the helper's routes the sandbox reached this machine's own address:\n%s", out)
	}
}
