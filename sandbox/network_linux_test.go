package sandbox

import (
	"strings"
	"testing"
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
		out, _ := f.run(t, `$PY - <<'EOF'
import os, socket
port = lambda n: int(os.environ[n])
for what, fn in [
    ("tcp", lambda: socket.create_connection(("127.0.0.1", port("TCP_PORT")), timeout=2)),
    ("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", port("UDP_PORT")))),
    ("resolve", lambda: socket.getaddrinfo("example.com", 80)),
]:
    try:
        fn(); print(what, "ok")
    except Exception as e:
        print(what, "denied", e)
for p in [os.environ["USOCK"], os.environ["XDG"] + "/airlock/airlock.sock", os.environ["XDG"] + "/bus"]:
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(p); print("connected", p)
    except Exception as e:
        print("denied", p, e)
EOF`)
		f.noneAccepted(t)
		if strings.Contains(out, "tcp ok") || strings.Contains(out, "resolve ok") || strings.Contains(out, "connected") {
			t.Errorf("ESCAPE: an allowlist without its proxy reached the network:\n%s", out)
		}
		if !strings.Contains(out, "tcp denied") {
			t.Errorf("the probe did not run:\n%s", out)
		}
	})
}
