package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/sandbox/egress"
)

// TestAllowlistRunsWithTheNetworkOff: a real process under network_access = "allowlist"
// (the egress proxy not yet connected) reaches nothing — the host's loopback over TCP,
// UDP and DNS, names, host unix sockets, Airlock's socket, the session bus — exactly as
// with the network off, on every OS backend.
func TestAllowlistRunsWithTheNetworkOff(t *testing.T) {
	backends(t, func(t *testing.T, backend string) {
		f := newFixture(t, "workspace-write", false)
		allowlist := NetworkAllowlist
		mode := "workspace-write"
		var err error
		f.policy, err = Resolve(Inputs{Cwd: f.ws, Home: f.home, Env: envMap(map[string]string{"XDG_RUNTIME_DIR": f.xdg}),
			Flags: Layer{Mode: &mode, Network: &allowlist}, File: Layer{NetworkTable: NetworkTable{AllowedDomains: []string{"127.0.0.1", "localhost", "example.com"}}}})
		if err != nil {
			t.Fatal(err)
		}
		if f.policy.Network != NetworkAllowlist {
			t.Fatalf("resolved %q", f.policy.Network)
		}
		out, res := f.run(t, `$PY - <<'EOF'
`+pyLoopbackProbes+`for p in [os.environ["USOCK"], os.environ["XDG"] + "/airlock/airlock.sock", os.environ["XDG"] + "/bus"]:
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(p); print("connected", p)
    except Exception as e:
        print("denied", p, e)
EOF`)
		f.noneAccepted(t)
		if res.Warning == "" || !strings.Contains(res.Warning, EgressNotConnected) {
			t.Errorf("no warning that the proxy is not connected: %q", res.Warning)
		}
		if strings.Contains(out, "tcp ok") || strings.Contains(out, "resolve ok") || strings.Contains(out, "connected") {
			t.Errorf("ESCAPE: an allowlist without its proxy reached the network:\n%s", out)
		}
		if !strings.Contains(out, "tcp denied") {
			t.Errorf("the probe did not run:\n%s", out)
		}
	})
}

// nameResolver answers for the test's names only; everything else does not exist.
type nameResolver map[string]netip.Addr

func (r nameResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// testPublicIP stands for an outside host (TEST-NET-3, never routed): the proxy's dialer
// takes it to the test's server on this machine's loopback.
const testPublicIP = "203.0.113.10"

// TestEscapeSuiteAllowlist: a real process under network_access = "allowlist" with the
// egress proxy connected (ExecRequest.Egress, sandbox/egress's Hook) reaches an allowed
// domain through the proxy only — with curl and python taking the proxy from the
// environment Exec sets — while the host's loopback (TCP, UDP), unix sockets by path,
// an abstract one, Airlock's socket and the session bus stay unreachable, a denied
// domain and one resolving to 127.0.0.1 are refused, and a direct connection that
// bypasses the proxy gets nothing.
func TestEscapeSuiteAllowlist(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	forcedBackend = BackendNameBwrap
	defer func() { forcedBackend = "" }()
	f := newFixture(t, "workspace-write", false)
	allowlist, mode := NetworkAllowlist, "workspace-write"
	env := map[string]string{"XDG_RUNTIME_DIR": f.xdg, "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + filepath.Join(f.xdg, "bus")}
	var err error
	f.policy, err = Resolve(Inputs{Cwd: f.ws, Home: f.home, Env: envMap(env), Flags: Layer{Mode: &mode, Network: &allowlist},
		File: Layer{NetworkTable: NetworkTable{AllowedDomains: []string{"allowed.test", "local.test"}, DeniedDomains: []string{"denied.test"}}}})
	if err != nil {
		t.Fatal(err)
	}
	realBus := sessionBusSocket() // the session bus of the desktop running the tests, if any
	abstractName := "@airlock-allowlist-" + f.mark
	abstractL := listenUnix(t, abstractName)
	defer abstractL.Close()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "reached %s%s\n", r.Host, r.URL.Path)
	}))
	defer srv.Close()
	var mu sync.Mutex
	var records []egress.Record
	lists := f.policy.Allowlist
	var hooked int
	hook := egress.Hook(egress.Config{
		Allowed: lists.AllowedDomains, Denied: lists.DeniedDomains, AllowLocal: lists.AllowLocal,
		Resolver: nameResolver{"allowed.test": netip.MustParseAddr(testPublicIP), "denied.test": netip.MustParseAddr(testPublicIP),
			"local.test": netip.MustParseAddr("127.0.0.1")},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == testPublicIP+":80" {
				addr = srv.Listener.Addr().String()
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		Log: func(r egress.Record) { mu.Lock(); records = append(records, r); mu.Unlock() },
	})
	out, res := f.run(t, `r() { echo "== $1"; shift; "$@" 2>&1; echo "rc=$?"; }
r env env
r curl curl -sS --max-time 20 http://allowed.test/curl
r curl-https-proxy curl -sS --max-time 20 --proxy "$HTTPS_PROXY" http://allowed.test/explicit
r socks curl -sS --max-time 20 --proxy "$ALL_PROXY" http://allowed.test/socks
r python $PY -c 'import urllib.request; print(urllib.request.urlopen("http://allowed.test/python", timeout=20).read().decode())'
if command -v node >/dev/null; then
r node node -e 'const u = new URL(process.env.HTTP_PROXY); require("http").get({host: u.hostname, port: u.port, path: "http://allowed.test/node"}, r => r.pipe(process.stdout)).on("error", e => console.log("error", e.message))'
r node-fetch node -e 'fetch("http://allowed.test/node-fetch").then(r => r.text()).then(console.log, e => console.log("error", e.cause ? e.cause.code : e.message))'
fi
r denied curl -sS --max-time 20 http://denied.test/
r unknown curl -sS --max-time 20 http://unknown.test/
r local curl -sS --max-time 20 http://local.test/
r loopback-via-proxy curl -sS --max-time 20 http://127.0.0.1:$TCP_PORT/
r direct curl -sS --max-time 5 --noproxy '*' http://`+testPublicIP+`/
r direct-loopback curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:$TCP_PORT/
echo "== probes"
$PY - <<'PYEOF'
import os, socket
port = lambda n: int(os.environ[n])
`+pyUnixProbe+`for what, fn in [
`+pyProbeTCP+pyProbeUDP+`    ("outside", lambda: socket.create_connection(("`+testPublicIP+`", 80), timeout=2)),
    ("abstract", unix(os.environ["ABSTRACT"])),
    ("path", unix(os.environ["USOCK"])),
    ("core", unix(os.environ["XDG"] + "/airlock/airlock.sock")),
    ("bus", unix(os.environ["XDG"] + "/bus")),
] + ([("session bus", unix(os.environ["REALBUS"]))] if os.environ.get("REALBUS") else []):
    try:
        fn(); print(what, "reached" if what != "udp" else "sent (the host's server must not get it)")
    except Exception as e:
        print(what, "refused", e)
PYEOF
echo "== end"`, func(r *ExecRequest) {
		r.Env = append(r.Env, "ABSTRACT="+abstractName, "REALBUS="+realBus, "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=*")
		r.Egress = func(ctx context.Context, pid int, addr string) (func(), error) {
			hooked++
			return hook(ctx, pid, addr)
		}
	})
	t.Logf("sandbox output:\n%s", out)
	if hooked != 1 || res.Warning != "" {
		t.Fatalf("Egress called %d times, warning %q", hooked, res.Warning)
	}
	got := map[string]string{}
	for _, sec := range strings.Split(out, "== ")[1:] {
		name, body, _ := strings.Cut(sec, "\n")
		got[name] = body
	}
	reached := map[string]string{
		"curl": "reached allowed.test/curl", "curl-https-proxy": "reached allowed.test/explicit",
		"socks": "reached allowed.test/socks", "python": "reached allowed.test/python",
	}
	if _, err := exec.LookPath("node"); err == nil {
		reached["node"] = "reached allowed.test/node"
	}
	for name, want := range reached {
		if !strings.Contains(got[name], want) {
			t.Errorf("%s: %q lacks %q", name, got[name], want)
		}
	}
	// Through the proxy a refusal is its 403 page; a direct attempt fails to connect.
	for _, name := range []string{"denied", "unknown", "local", "loopback-via-proxy"} {
		if strings.Contains(got[name], "reached") || !strings.Contains(got[name], "Airlock refused the connection") {
			t.Errorf("ESCAPE: %s was not refused by the proxy: %q", name, got[name])
		}
	}
	for _, name := range []string{"direct", "direct-loopback"} {
		if strings.Contains(got[name], "rc=0") || strings.Contains(got[name], "reached") {
			t.Errorf("ESCAPE: %s got through: %q", name, got[name])
		}
	}
	for _, v := range []string{"HTTP_PROXY=http://" + EgressAddr, "https_proxy=http://" + EgressAddr, "ALL_PROXY=socks5h://" + EgressAddr, "NO_PROXY=\n"} {
		if !strings.Contains(got["env"], v) {
			t.Errorf("the run's environment lacks %q:\n%s", v, got["env"])
		}
	}
	if strings.Contains(got["env"], "127.0.0.1:9") || strings.Contains(got["env"], "NO_PROXY=*") {
		t.Errorf("the caller's proxy variables were kept:\n%s", got["env"])
	}
	if strings.Contains(got["probes"], "reached") || !strings.Contains(got["probes"], "tcp refused") {
		t.Errorf("ESCAPE: a host service was reachable under allowlist:\n%s", got["probes"])
	}
	f.noneAccepted(t)
	abstractL.SetDeadline(time.Now().Add(100 * time.Millisecond))
	if c, err := abstractL.Accept(); err == nil {
		c.Close()
		t.Error("ESCAPE: the host's abstract unix socket accepted a connection from the sandbox")
	}
	mu.Lock()
	defer mu.Unlock()
	verdicts := map[string]egress.Verdict{}
	for _, r := range records {
		verdicts[r.Domain] = r.Verdict
	}
	if verdicts["allowed.test"] != egress.Allow || len(records) < 8 {
		t.Errorf("records %+v", records)
	}
	for _, d := range []string{"denied.test", "unknown.test", "local.test", "127.0.0.1"} {
		if v, ok := verdicts[d]; !ok || v != egress.Deny {
			t.Errorf("%s: no refusal recorded (%v, %v)", d, v, ok)
		}
	}
}

// TestAllowlistEgressFailureFailsClosed: when the proxy cannot be connected the run is
// refused (ErrEgressFailed); the command never runs without its way out.
func TestAllowlistEgressFailureFailsClosed(t *testing.T) {
	forcedBackend = BackendNameBwrap
	defer func() { forcedBackend = "" }()
	f := newFixture(t, "workspace-write", false)
	f.policy.Network = NetworkAllowlist
	marker := filepath.Join(f.ws, "ran")
	var out strings.Builder
	_, err := Exec(context.Background(), ExecRequest{Policy: f.policy, Argv: []string{"/bin/sh", "-c", "touch " + marker}, Stdout: &out, Stderr: &out,
		Egress: func(context.Context, int, string) (func(), error) { return nil, errors.New("no proxy today") }})
	if !errors.Is(err, ErrEgressFailed) {
		t.Fatalf("err %v, want ErrEgressFailed", err)
	}
	if _, serr := os.Stat(marker); serr == nil {
		t.Error("the command ran although its proxy was not connected")
	}
}

// TestAllowlistWithoutNamespaceRefusesNetworkClients: with no OS backend (the
// application layer alone) nothing stands between a command and the host's network,
// so a caller's EgressConnected does not let an allowlist's network clients through.
func TestAllowlistWithoutNamespaceRefusesNetworkClients(t *testing.T) {
	f := newFixture(t, "workspace-write", false)
	f.policy.Network, f.policy.EgressConnected, f.policy.Backend = NetworkAllowlist, true, BackendApp
	var out strings.Builder
	_, err := Exec(context.Background(), ExecRequest{Policy: f.policy, Argv: []string{"curl", "-sS", "http://127.0.0.1:1/"}, Stdout: &out, Stderr: &out,
		Egress: func(context.Context, int, string) (func(), error) {
			t.Error("Egress called without a namespace")
			return func() {}, nil
		}})
	if d, ok := IsDenied(err); !ok || d.Reason != ReasonNetwork {
		t.Fatalf("err %v, want a network denial (output %s)", err, out.String())
	}
}
