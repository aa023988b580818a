package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress"
	"github.com/airlock-app/airlock/sandbox/egress/egresstest"
)

// TestGuestNetworkFollowsThePolicy: the micro-VM gets a network device when the policy's
// network is on, or is an allowlist whose caller connects the egress proxy (the guest's
// proxy variables then point at it); an allowlist without a proxy is refused with the
// way out, never run with the whole network or none; off gets no device.
func TestGuestNetworkFollowsThePolicy(t *testing.T) {
	ws := t.TempDir()
	hook := sandbox.Egress(func(context.Context, int, string) (func(), error) { return func() {}, nil })
	for _, tt := range []struct {
		name    string
		network sandbox.NetworkMode
		egress  sandbox.Egress
		want    bool
		refused bool
	}{
		{"off", sandbox.NetworkOff, nil, false, false},
		{"on", sandbox.NetworkOn, nil, true, false},
		{"allowlist without a proxy", sandbox.NetworkAllowlist, nil, false, true},
		{"allowlist with its proxy", sandbox.NetworkAllowlist, hook, true, false},
	} {
		req := sandbox.ExecRequest{Policy: sandbox.Policy{Cwd: ws, Network: tt.network}, Argv: []string{"true"}, Egress: tt.egress}
		_, network, g, err := GuestRequest(req)
		if tt.refused {
			if !errors.Is(err, ErrAllowlistNotConnected) || !strings.Contains(err.Error(), `execution_mode = "local"`) {
				t.Errorf("%s: %v, want the refusal naming the way out", tt.name, err)
			}
			continue
		}
		if err != nil || network != tt.want {
			t.Errorf("%s: the VM's network %v (%v), want %v", tt.name, network, err, tt.want)
		}
		proxied := slices.Contains(g.Env, "HTTP_PROXY=http://"+GuestEgressAddr)
		if proxied != (tt.egress != nil) || (guestEgress(req) != nil) != (tt.egress != nil) {
			t.Errorf("%s: proxy variables %v, boots with the proxy %v: %v", tt.name, proxied, guestEgress(req) != nil, g.Env)
		}
	}
}

// TestMicroVMAllowlistThroughTheProxy boots a real micro-VM under an allowlist with a real
// egress proxy (and ends the boot's context once it is up): python in the guest reaches an allowed domain through the proxy, a
// denied one is refused by it, and nothing else is reachable: not the host's loopback
// services (a server on 127.0.0.1 the test runs, tried directly through QEMU's host
// address), and not DNS. Every connection is a Record.
func TestMicroVMAllowlistThroughTheProxy(t *testing.T) {
	base := testImage(t)
	base.CPUs = 1
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "reached %s on %s\n", r.URL.Path, r.Host)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	var records []string
	recs := make(chan string, 16)
	hook := sandbox.Egress(egress.Hook(egress.Config{
		Allowed: []string{"allowed.test"}, Denied: []string{"denied.test"},
		Resolver: egresstest.DNS{"allowed.test": {"203.0.113.30"}, "denied.test": {"203.0.113.31"}},
		Dial:     egresstest.Dial(srv.Listener.Addr().String(), false),
		Log:      func(r egress.Record) { recs <- r.LogLine() },
	}))
	script := fmt.Sprintf(`import socket, urllib.request
def get(u):
    try:
        print(u, "->", urllib.request.urlopen(u, timeout=30).read().decode().strip())
    except Exception as e:
        print(u, "-> refused:", e)
get("http://allowed.test/a")
get("http://denied.test/b")
try:
    socket.create_connection(("10.0.2.2", %d), timeout=5); print("direct connected")
except Exception as e:
    print("direct unreachable:", e)
try:
    socket.getaddrinfo("allowed.test", 80); print("dns resolved")
except Exception as e:
    print("dns failed:", e)
`, port)
	var out bytes.Buffer
	ws, network, g, err := GuestRequest(sandbox.ExecRequest{
		Policy: sandbox.Policy{Cwd: t.TempDir(), Network: sandbox.NetworkAllowlist}, Egress: hook,
		Argv: []string{"python3", "-c", script}, Stdout: &out, Stderr: &out, Timeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := base
	c.Workspace, c.Network, c.Egress = ws, network, &hook
	// The boot's context ends once the guest is up (as a KVM attempt's does): the proxy
	// lives as long as the VM.
	bootCtx, cancelBoot := context.WithTimeout(context.Background(), 3*time.Minute)
	v, err := Boot(bootCtx, c, nil)
	cancelBoot()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := v.Exec(ctx, g)
	t.Logf("guest output:\n%s", out.String())
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v %v", res, err)
	}
	for len(recs) > 0 {
		records = append(records, <-recs)
	}
	t.Logf("records: %q", records)
	text := out.String()
	for _, want := range []string{"http://allowed.test/a -> reached /a on allowed.test", "http://denied.test/b -> refused: HTTP Error 403", "direct unreachable:", "dns failed:"} {
		if !strings.Contains(text, want) {
			t.Errorf("the guest's output lacks %q", want)
		}
	}
	if strings.Contains(text, "direct connected") || strings.Contains(text, "dns resolved") || hits.Load() > 1 {
		t.Errorf("ESCAPE: the guest got around the proxy (%d requests reached the server)", hits.Load())
	}
	if hits.Load() != 1 {
		t.Errorf("the allowed request did not reach the server (%d requests)", hits.Load())
	}
	joined := strings.Join(records, "\n")
	if !strings.Contains(joined, "network: allowed.test:80 allow") || !strings.Contains(joined, "network: denied.test:80 deny (denied by denied_domains)") {
		t.Errorf("records: %q", records)
	}
}
