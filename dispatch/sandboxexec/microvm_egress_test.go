package sandboxexec

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress"
	"github.com/airlock-app/airlock/sandbox/egress/egresstest"
	"github.com/airlock-app/airlock/sandbox/vm"
)

// allowlistVM is a task's defaults for the micro-VM under network_access = "allowlist".
func allowlistVM() departments.Defaults {
	d := overrides("sandbox")
	n := api.NetworkAllowlist
	d.Network = &n
	return d
}

// TestMicroVMAllowlistWithoutAProxyIsRefused: a run for the micro-VM under an allowlist,
// with no egress hook to connect, fails with the way out; no VM boots (the pool's QEMU
// does not even exist) and the run is never given the whole network.
func TestMicroVMAllowlistWithoutAProxyIsRefused(t *testing.T) {
	pool := vm.NewPool(vm.Config{QEMU: "/nonexistent/qemu", Kernel: "/nonexistent/vmlinuz", Rootfs: "/nonexistent/rootfs"}, time.Minute, nil, nil)
	defer pool.Close()
	d, _, ws, _, _ := setupWith(t, "on-request", func(_ string, a *allow, o *Options) {
		o.MicroVM = func(id uint) (sandbox.MicroVM, func(), error) {
			s := pool.Session(fmt.Sprint("run-", id))
			return s.SandboxExec, s.End, nil
		}
	})
	got, log := runTask(t, d, dispatch.TaskSpec{Name: "no-proxy", Cwd: ws, Argv: []string{"true"}, Overrides: allowlistVM()},
		dispatch.StatusSucceeded, dispatch.StatusFailed)
	if got.Status != dispatch.StatusFailed || !strings.Contains(got.Reason+log, `network_access = "allowlist" in the micro-VM needs Airlock's egress proxy`) ||
		!strings.Contains(got.Reason+log, `execution_mode = "local"`) || strings.Contains(log, "qemu") {
		t.Fatalf("run: %s (%s)\n%s", got.Status, got.Reason, log)
	}
	if pool.Warm() != 0 {
		t.Errorf("a VM booted for a refused run")
	}
}

// TestMicroVMAllowlistThroughTheRunsProxy boots the real micro-VM (skips, saying so,
// without an image): a scheduled run under an allowlist in the VM gets the run's egress
// hook, as a run on the host does; python in the guest reaches the allowed domain through
// it and is refused for another, a direct connection to a host service gets nothing,
// and the run's log says where its network goes and lists each connection.
func TestMicroVMAllowlistThroughTheRunsProxy(t *testing.T) {
	base, reason := vm.FindImage(filepath.Join("..", "..", "build", "sandbox-image"))
	if reason != "" {
		t.Skip(reason)
	}
	base.CPUs = 1
	pool := vm.NewPool(base, time.Minute, nil, nil)
	defer pool.Close()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "reached %s on %s\n", r.URL.Path, r.Host)
	}))
	defer srv.Close()
	d, _, ws, _, _ := setupWith(t, "on-request", func(_ string, a *allow, o *Options) {
		o.MicroVM = func(id uint) (sandbox.MicroVM, func(), error) {
			s := pool.Session(fmt.Sprint("run-", id))
			return s.SandboxExec, s.End, nil
		}
		o.Egress = func(spec dispatch.ExecSpec, pol sandbox.Policy) sandbox.Egress { // as the core's runEgress
			return sandbox.Egress(egress.Hook(egress.Config{
				Allowed:  []string{"api.allowed.test"},
				Resolver: egresstest.DNS{"api.allowed.test": {"203.0.113.40"}, "other.test": {"203.0.113.41"}},
				Dial:     egresstest.Dial(srv.Listener.Addr().String(), false),
				Log:      func(r egress.Record) { fmt.Fprintf(spec.Stderr, "airlock: %s\n", r.LogLine()) },
			}))
		}
	})
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	// python3 is in every image (the quick test image has no curl); urllib takes the proxy
	// from the environment as curl does.
	script := fmt.Sprintf(`python3 - <<'PY'
import urllib.request, urllib.error
for u in ("http://api.allowed.test/v1", "http://other.test/v1"):
    try:
        print(urllib.request.urlopen(u, timeout=60).read().decode().strip())
    except urllib.error.HTTPError as e:
        print(e.read().decode().strip())
PY
if (echo > /dev/tcp/10.0.2.2/%d) 2>/dev/null; then echo direct-reachable; else echo direct-unreachable; fi`, port)
	got, log := runTask(t, d, dispatch.TaskSpec{Name: "vm-allowlist", Cwd: ws, Argv: []string{"bash", "-c", script}, Overrides: allowlistVM(), Timeout: 3 * time.Minute},
		dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusTimedOut)
	t.Logf("run log:\n%s", log)
	if got.Status != dispatch.StatusSucceeded {
		t.Fatalf("run: %s (%s)", got.Status, got.Reason)
	}
	for _, want := range []string{"Network allowlist (only the allowed domains, through Airlock's egress proxy", "reached /v1 on api.allowed.test",
		"Airlock refused the connection to other.test:80: not in allowed_domains", "airlock: network: api.allowed.test:80 allow (allowed by allowed_domains)",
		"direct-unreachable"} {
		if !strings.Contains(log, want) {
			t.Errorf("the run's log lacks %q", want)
		}
	}
	if strings.Contains(log, "direct-reachable") || hits.Load() > 1 {
		t.Errorf("ESCAPE: the guest got around the proxy (%d requests reached the server)", hits.Load())
	}
	if hits.Load() != 1 {
		t.Errorf("the allowed request did not reach the server (%d requests)", hits.Load())
	}
}
