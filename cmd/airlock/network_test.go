package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNetworkFlagFromTheCLI: --network is on when bare (as it always was), and takes
// allowlist as --network allowlist or --network=allowlist; an allowlist without its
// egress proxy is no network, and the CLI says so.
func TestNetworkFlagFromTheCLI(t *testing.T) {
	in := newInstance(t)
	ws := t.TempDir()
	check := func(args ...string) (map[string]any, string) {
		t.Helper()
		out, stderr, _ := in.run(append([]string{"check", "--cwd", ws, "--json"}, args...)...)
		var rep map[string]any
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("check %v printed %q (%s): %v", args, out, stderr, err)
		}
		return rep, out
	}
	network := func(rep map[string]any) any { return rep["policy"].(map[string]any)["network"] }
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--", "true"}, "off"},
		{[]string{"--network", "--", "true"}, "on"},
		{[]string{"--network", "true"}, "on"}, // the program true(1), with the network on, as before
		{[]string{"--network", "allowlist", "--", "true"}, "allowlist"},
		{[]string{"--network=allowlist", "--", "true"}, "allowlist"},
		{[]string{"--network=off", "--", "true"}, "off"},
	} {
		rep, out := check(tt.args...)
		if network(rep) != tt.want {
			t.Errorf("check %v: network %v, want %s\n%s", tt.args, network(rep), tt.want, out)
		}
		if tt.args[len(tt.args)-1] == "true" && rep["command"] != "true" {
			t.Errorf("check %v: the command is %v", tt.args, rep["command"])
		}
	}
	// check has no proxy connected: under an allowlist curl is refused, and the line says why.
	out, _, code := in.run("check", "--cwd", ws, "--network", "allowlist", "--", "curl https://api.anthropic.com")
	if code == 0 || !strings.Contains(out, "the egress proxy is not connected here") {
		t.Errorf("check --network allowlist curl: exit %d\n%s", code, out)
	}
	// The environment and config.toml take the three values too; a bad one is named.
	c := in.cmd("check", "--cwd", ws, "--json", "--", "true")
	c.Env = append(c.Env, "AIRLOCK_NETWORK=allowlist")
	b, _ := c.Output()
	var rep map[string]any
	if json.Unmarshal(b, &rep); network(rep) != "allowlist" {
		t.Errorf("AIRLOCK_NETWORK=allowlist: %s", b)
	}
	_, stderr, code := in.run("check", "--cwd", ws, "--network=sometimes", "--", "true")
	if code == 0 || !strings.Contains(stderr, "allowlist") {
		t.Errorf("--network=sometimes: exit %d %s", code, stderr)
	}
	cfg := filepath.Join(in.home, "config", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte("[sandbox_workspace_write]\nnetwork_access = \"on\"\n"), 0o644)
	_, stderr, code = in.run("check", "--cwd", ws, "--", "true")
	if code == 0 || !strings.Contains(stderr, "line 2, column 18") || !strings.Contains(stderr, `"allowlist"`) {
		t.Errorf("network_access = \"on\" in config.toml: exit %d %s", code, stderr)
	}
	os.WriteFile(cfg, []byte("[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n[network]\nallowed_domains = [\"pypi.org\"]\n"), 0o644)
	c = in.cmd("config", "show", "--json")
	b, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	var view map[string]any
	json.Unmarshal(b, &view)
	st := map[string]any{"config": view}
	if got := setting(st, "sandbox_workspace_write.network_access"); got["value"] != "allowlist" || got["layer"] != "file" {
		t.Errorf("config show network_access: %v", got)
	}
	if got := setting(st, "network.allowed_domains"); got["layer"] != "file" {
		t.Errorf("config show network.allowed_domains: %v", got)
	}
	text, _, _ := in.run("config", "show")
	if !strings.Contains(text, "network.allowed_domains") {
		t.Errorf("config show does not list [network]:\n%s", text)
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		st, _, _ := in.run("sandbox", "status")
		if !strings.Contains(st, "network   allowlist (only the allowed domains, through Airlock's egress proxy) (config ") {
			t.Errorf("sandbox status does not say what the allowlist gives:\n%s", st)
		}
	}
}

// TestExecAllowlistThroughTheCore: `airlock exec --network allowlist` (a binary without
// the proxy) gets it from the running daemon: curl inside the real sandbox reaches a
// test server the list allows (on loopback, hence allow_local), a denied domain is
// refused, a direct connection gets nothing; and with no daemon the run has no network
// and says so. As root and as a user other than root, whose core cannot enter the run's
// namespace itself and reaches it through a helper (the re-executed binary).
func TestExecAllowlistThroughTheCore(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "reached %s\n", r.URL.Path) }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, user := range []string{"root", "nobody"} {
		t.Run("as "+user, func(t *testing.T) {
			in := newInstance(t)
			if user == "nobody" {
				in.asNobody()
			} else if os.Geteuid() != 0 {
				t.Skip("not root")
			}
			cfg := filepath.Join(in.home, "config", "config.toml")
			in.writeFile(cfg, "[network]\nallowed_domains = [\"127.0.0.1\"]\ndenied_domains = [\"denied.test\"]\nask_unknown = false\nallow_local = true\n")
			ws, err := os.MkdirTemp("/var/tmp", "airlock-exec-allowlist-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(ws)
			in.own(ws)
			script := fmt.Sprintf(`curl -sS --max-time 20 http://127.0.0.1:%[1]d/allowed
curl -sS --max-time 20 http://denied.test/
curl -sS --max-time 20 http://unknown.test/
curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:%[1]d/direct; echo "direct rc=$?"`, port)

			out, stderr, code := in.run("exec", "--cwd", ws, "--network", "allowlist", "--", "sh", "-c", script)
			if code != 0 || !strings.Contains(stderr, "the egress proxy is not connected here") || strings.Contains(out, "reached") {
				t.Errorf("without a daemon: exit %d\n%s\n%s", code, out, stderr)
			}
			in.startDaemon()
			out, stderr, code = in.run("exec", "--cwd", ws, "--network", "allowlist", "--", "sh", "-c", script+"; id -u")
			t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
			for _, want := range []string{"reached /allowed", "Airlock refused the connection to denied.test:80", "Airlock refused the connection to unknown.test:80", "direct rc=7"} {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q", want)
				}
			}
			if strings.Contains(out, "reached /direct") {
				t.Error("ESCAPE: a direct connection bypassed the proxy")
			}
			if user == "nobody" && !strings.HasSuffix(strings.TrimSpace(out), "65534") {
				t.Errorf("the run did not run as nobody:\n%s", out)
			}
		})
	}
}

// TestExecNetworkOnRefusesThisMachine: `airlock exec --network` reaches no service of
// this machine through its own external address (a server on 0.0.0.0, as an X server
// with -listen tcp is) and no private range, while the same command under allow_local
// in config.toml reaches it.
func TestExecNetworkOnRefusesThisMachine(t *testing.T) {
	in := newInstance(t)
	ws := t.TempDir()
	c, err := net.Dial("udp4", "1.1.1.1:9") // no packet is sent: this only picks the route
	if err != nil {
		t.Skip("no default route: no external address to test")
	}
	own := c.LocalAddr().(*net.UDPAddr).IP.String()
	c.Close()
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello from the host\n"))
			c.Close()
		}
	}()
	probe := fmt.Sprintf("exec 3<>/dev/tcp/%s/%d && cat <&3; exec 4<>/dev/tcp/192.168.1.1/80 && echo LAN REACHED", own, ln.Addr().(*net.TCPAddr).Port)
	out, stderr, _ := in.run("exec", "--cwd", ws, "--network", "--", "bash", "-c", probe)
	if strings.Contains(out, "hello from the host") || strings.Contains(out, "REACHED") || !strings.Contains(stderr, "Permission denied") {
		t.Errorf("ESCAPE: airlock exec --network reached this machine through %s:\n%s%s", own, out, stderr)
	}
	cfg := filepath.Join(in.home, "config", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte("[network]\nallow_local = true\n"), 0o644)
	if out, stderr, _ := in.run("exec", "--cwd", ws, "--network", "--", "bash", "-c", probe); !strings.Contains(out, "hello from the host") {
		t.Errorf("allow_local: airlock exec --network did not reach %s:\n%s%s", own, out, stderr)
	}
}
