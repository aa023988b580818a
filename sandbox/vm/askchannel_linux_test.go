package vm

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress"
	"github.com/airlock-app/airlock/sandbox/egress/egresstest"
)

// askChannelProbe runs in the guest: it calls its ask-only channel ($AIRLOCK_ASK_SOCKET)
// and then tries the host's loopback (QEMU's 10.0.2.2), an outside host and DNS.
const askChannelProbe = `
import os, socket, sys, urllib.request
addr = os.environ.get("AIRLOCK_ASK_SOCKET", "")
print("channel", addr)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    print("ask:", opener.open("http://" + addr + "/v1/permission/check", timeout=30).read().decode().strip())
except Exception as e:
    print("ask failed:", e)
for what, host, port in [("loopback", "10.0.2.2", int(sys.argv[1])), ("outside", sys.argv[2], int(sys.argv[3]))]:
    try:
        print(what, "reached:", socket.create_connection((host, port), timeout=5).recv(100).decode().strip())
    except Exception as e:
        print(what, "unreachable:", e)
try:
    socket.getaddrinfo("example.com", 80); print("dns resolved")
except Exception as e:
    print("dns failed:", e)
`

// TestMicroVMAskOnlyChannel: a command in the micro-VM reaches the ask-only channel its
// request brings (served in QEMU's own network namespace, at AIRLOCK_ASK_SOCKET in the
// guest) with the network off and on. With it off the network device the channel needs
// leads nowhere else: not to the host's loopback, not outside, no DNS. With it on an
// outside host is reached, the host's loopback still not. Two sessions' VMs of one pool,
// booted at once; the channel is served once per VM, in the namespace of the VM's QEMU.
// The pool's shared VMs serve none: their callers are many.
func TestMicroVMAskOnlyChannel(t *testing.T) {
	base := testImage(t)
	base.CPUs = 1
	pool := NewPool(base, time.Minute, nil, nil)
	defer pool.Close()
	loopback := egresstest.Greeter(t, "hello from the host")
	outside := egresstest.NewOutside(t).GreeterOutside(t, "hello from outside")
	var mu sync.Mutex
	served := map[string][]string{}
	channel := func(name string) sandbox.Egress {
		return func(ctx context.Context, pid int, addr string) (func(), error) {
			mu.Lock()
			served[name] = append(served[name], addr)
			mu.Unlock()
			ln, err := egress.ListenInNetns(pid, addr)
			if err != nil {
				return nil, err
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "the channel of %s answers %s", name, r.URL.Path)
			})}
			go srv.Serve(ln)
			return func() { srv.Close() }, nil
		}
	}
	oa := outside.Addr().(*net.TCPAddr)
	argv := []string{"python3", "-c", askChannelProbe, fmt.Sprint(loopback.Addr().(*net.TCPAddr).Port), oa.IP.String(), fmt.Sprint(oa.Port)}
	outs := map[sandbox.NetworkMode]*bytes.Buffer{}
	var wg sync.WaitGroup
	for _, network := range []sandbox.NetworkMode{sandbox.NetworkOff, sandbox.NetworkOn} {
		var out bytes.Buffer
		outs[network] = &out
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			res, err := pool.Session("run-"+string(network)).SandboxExec(ctx, sandbox.ExecRequest{
				Policy: sandbox.Policy{Cwd: t.TempDir(), Network: network}, Ask: channel("run-" + string(network)),
				Env:  []string{sandbox.EnvAskSocket + "=127.0.0.1:1"}, // the host's: never the guest's
				Argv: argv, Stdout: &out, Stderr: &out, Timeout: 2 * time.Minute,
			})
			if err != nil || res.ExitCode != 0 {
				t.Errorf("network %s: %+v %v", network, res, err)
			}
		}()
	}
	wg.Wait()
	for network, out := range outs {
		text := out.String()
		t.Logf("network %s, the guest's output:\n%s", network, text)
		for _, want := range []string{"channel " + sandbox.MicroVMAskAddr, "ask: the channel of run-" + string(network) + " answers /v1/permission/check", "loopback unreachable"} {
			if !strings.Contains(text, want) {
				t.Errorf("network %s: the output lacks %q", network, want)
			}
		}
		if strings.Contains(text, "hello from the host") {
			t.Errorf("ESCAPE: network %s: the guest reached the host's loopback", network)
		}
		if network == sandbox.NetworkOff && (!strings.Contains(text, "outside unreachable") || !strings.Contains(text, "dns failed")) {
			t.Errorf("ESCAPE: with the network off the channel's device led out")
		}
		if network == sandbox.NetworkOn && !strings.Contains(text, "outside reached: hello from outside") {
			t.Errorf("network on: an outside host was not reached")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"run-off", "run-on"} {
		if got := served[name]; len(got) != 1 || got[0] != sandbox.AskAddr {
			t.Errorf("the channel of %s was served %v, want once on %s", name, got, sandbox.AskAddr)
		}
	}
}
