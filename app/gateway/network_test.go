package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/mcptest"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress/egresstest"
)

// fetchWeb is a real HTTP server on this machine's loopback standing in for the web and
// for the machine's own services at once: test domains resolve (through web_fetch's
// resolver hook, egresstest) to documentation addresses routed to this server, so
// the local-address check stays on while an allowed domain is still reachable, and a
// destination that resolves to 127.0.0.1 is the same server reached as a loopback
// service (the core's TCP API port, a database...). It counts requests per path.
type fetchWeb struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newFetchWeb(t *testing.T) *fetchWeb {
	t.Helper()
	w := &fetchWeb{hits: map[string]int{}}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.hits[r.URL.Path]++
		w.mu.Unlock()
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(rw, r, to, http.StatusFound)
			return
		}
		fmt.Fprintf(rw, "reached %s on %s\n", r.URL.Path, r.Host)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *fetchWeb) port() int { return w.srv.Listener.Addr().(*net.TCPAddr).Port }

func (w *fetchWeb) hit(path string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hits[path]
}

// net gives the fake domains documentation addresses routed to the server; every other
// address is dialed as it is (127.0.0.1 is this machine's loopback: the server).
func (w *fetchWeb) net() fetchNet {
	return fetchNet{resolver: egresstest.DNS{
		"allowed.test": {"203.0.113.10"}, "other.allowed.test": {"203.0.113.10"},
		"denied.test": {"203.0.113.11"}, "unknown.test": {"203.0.113.12"}, "asked.test": {"203.0.113.12"},
		"rebind.test": {"203.0.113.13", "127.0.0.1"},
		"localhost":   {"127.0.0.1", "::1"},
	}, dial: egresstest.Dial(w.srv.Listener.Addr().String(), true)}
}

// fetchPolicyFor resolves a session policy with the network and [network] table given.
func fetchPolicyFor(t *testing.T, network sandbox.NetworkMode, table sandbox.NetworkTable) sandbox.Policy {
	t.Helper()
	pol, err := sandbox.Resolve(sandbox.Inputs{Cwd: t.TempDir(), Env: func(string) string { return "" }, Home: t.TempDir(),
		Flags: sandbox.Layer{Network: &network}, File: sandbox.Layer{NetworkTable: table}})
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// fetchBroker allows every web_fetch (with no more access than the policy's), answers a
// network_domain request for asked.test with Allow and any other with Deny.
func fetchBroker() *recordingBroker {
	return &recordingBroker{decide: func(r api.Request) api.Decision {
		if r.Tool == api.ToolNetworkDomain {
			var p struct{ Domain string }
			_ = json.Unmarshal(r.Params, &p)
			if p.Domain == "asked.test" {
				return api.Decision{Verdict: api.Allow, Tier: "P1", Layer: "person"}
			}
			return api.Decision{Verdict: api.Deny, Tier: "P1", Layer: "person"}
		}
		return api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier"}
	}}
}

type fetchCase struct {
	name, url string
	// want is in the result; reached is the path the server must have answered (""
	// = the server must see no request for path).
	want, path string
	reached    bool
	refused    bool
}

func runFetchCases(t *testing.T, pol sandbox.Policy, web *fetchWeb, b *recordingBroker, cases []fetchCase) {
	t.Helper()
	srv := NewServer(Options{Policy: pol, Broker: b})
	srv.net = web.net()
	cs := mcptest.Connect(t, srv)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := web.hit(tc.path)
			res, text := callText(t, cs, api.ToolWebFetch, map[string]any{"url": tc.url})
			if res.IsError != tc.refused || !strings.Contains(text, tc.want) {
				t.Errorf("web_fetch %s: error %v, want %v and %q in:\n%s", tc.url, res.IsError, tc.refused, tc.want, text)
			}
			if got := web.hit(tc.path) - before; (got > 0) != tc.reached {
				if !tc.reached {
					t.Errorf("ESCAPE: web_fetch %s reached %s on the test server (%d requests)", tc.url, tc.path, got)
				} else {
					t.Errorf("web_fetch %s did not reach %s", tc.url, tc.path)
				}
			}
		})
	}
}

// TestWebFetchUnderAnAllowlist: with network_access = "allowlist" web_fetch connects
// only where the egress proxy would: an allowed domain (wildcards with the apex) is
// fetched, a denied one refused although a wildcard allows it, an unknown one asked as
// a P1 network_domain request and fetched only after Allow, a domain resolving to
// loopback refused after DNS, and a redirect from an allowed domain to 127.0.0.1 or to
// a denied domain refused at that hop. Each connection is listed in the result, and the
// requests carry the allowlist to the broker.
func TestWebFetchUnderAnAllowlist(t *testing.T) {
	web := newFetchWeb(t)
	pol := fetchPolicyFor(t, sandbox.NetworkAllowlist, sandbox.NetworkTable{AllowedDomains: []string{"*.allowed.test", "rebind.test"}, DeniedDomains: []string{"denied.test", "*.denied.test"}})
	b := fetchBroker()
	local := fmt.Sprintf("http://127.0.0.1:%d/local", web.port())
	runFetchCases(t, pol, web, b, []fetchCase{
		{name: "allowed", url: "http://allowed.test/a", want: "reached /a on allowed.test", path: "/a", reached: true},
		{name: "allowed subdomain", url: "http://other.allowed.test/b", want: "network: other.allowed.test:80 allow (allowed by allowed_domains)", path: "/b", reached: true},
		{name: "denied", url: "http://denied.test/c", want: "denied by denied_domains", path: "/c", refused: true},
		{name: "unknown, denied by the person", url: "http://unknown.test/d", want: "unknown.test:80: denied by the person", path: "/d", refused: true},
		{name: "unknown, allowed by the person", url: "http://asked.test/e", want: "network: asked.test:80 allow (allowed by the person)", path: "/e", reached: true},
		{name: "resolves to loopback", url: "http://rebind.test/f", want: "resolves to a local address (127.0.0.1 is loopback)", path: "/f", refused: true},
		{name: "redirect to loopback", url: "http://allowed.test/g?to=" + local, want: "127.0.0.1:" + fmt.Sprint(web.port()), path: "/local", refused: true},
		{name: "redirect to a denied domain", url: "http://allowed.test/h?to=http://denied.test/i", want: "denied by denied_domains", path: "/i", refused: true},
	})
	asked := map[string]bool{}
	for _, r := range b.asked {
		if r.Context.Policy.Network != api.NetworkAllowlist {
			t.Errorf("the session's request says network %q", r.Context.Policy.Network)
		}
		if r.Tool == api.ToolWebFetch && !r.Context.Policy.EgressConnected {
			t.Errorf("a web_fetch request does not say it is connected to the egress decision: %+v", r.Context.Policy)
		}
		if r.Tool == api.ToolNetworkDomain {
			var p struct{ Domain string }
			_ = json.Unmarshal(r.Params, &p)
			asked[p.Domain] = true
		}
	}
	if !asked["unknown.test"] || !asked["asked.test"] || len(asked) != 2 {
		t.Errorf("network_domain requests for %v, want unknown.test and asked.test", asked)
	}
}

// TestWebFetchWithTheNetworkOn: with network_access = true web_fetch reaches any public
// domain, but never this machine: 127.0.0.1, localhost, [::1], a name resolving to
// loopback (among public answers too), and a redirect to any of them are refused unless
// allow_local; denied_domains still win.
func TestWebFetchWithTheNetworkOn(t *testing.T) {
	web := newFetchWeb(t)
	port := web.port()
	local := func(host, path string) string { return fmt.Sprintf("http://%s:%d%s", host, port, path) }
	pol := fetchPolicyFor(t, sandbox.NetworkOn, sandbox.NetworkTable{DeniedDomains: []string{"denied.test"}})
	runFetchCases(t, pol, web, fetchBroker(), []fetchCase{
		{name: "public", url: "http://unknown.test/a", want: "network: unknown.test:80 allow (network_access is on)", path: "/a", reached: true},
		{name: "loopback literal", url: local("127.0.0.1", "/b"), want: "127.0.0.1 is loopback", path: "/b", refused: true},
		{name: "localhost", url: local("localhost", "/c"), want: "resolves to a local address", path: "/c", refused: true},
		{name: "ipv6 loopback", url: local("[::1]", "/d"), want: "resolves to a local address", path: "/d", refused: true},
		{name: "mapped loopback", url: local("[::ffff:127.0.0.1]", "/e"), want: "resolves to a local address", path: "/e", refused: true},
		{name: "rebinding", url: "http://rebind.test/f", want: "127.0.0.1 is loopback", path: "/f", refused: true},
		{name: "redirect to loopback", url: "http://unknown.test/g?to=" + local("127.0.0.1", "/h"), want: "set allow_local = true", path: "/h", refused: true},
		{name: "link-local metadata", url: "http://169.254.169.254/latest/meta-data/", want: "link-local", path: "/latest/meta-data/", refused: true},
		{name: "denied", url: "http://denied.test/i", want: "denied by denied_domains", path: "/i", refused: true},
	})

	allowLocal := true
	pol = fetchPolicyFor(t, sandbox.NetworkOn, sandbox.NetworkTable{AllowLocal: &allowLocal})
	runFetchCases(t, pol, web, fetchBroker(), []fetchCase{
		{name: "allow_local", url: local("127.0.0.1", "/j"), want: "reached /j", path: "/j", reached: true},
	})
}

// TestWebFetchRefusesThisMachinesOwnAddress: with the network on, a server listening on
// all interfaces of this machine is not reached through the machine's own external
// address (the source of its default route, public or not), whether spelled as the
// address, as a name resolving to it, or as a redirect from a public domain to it;
// allow_local reaches it.
func TestWebFetchRefusesThisMachinesOwnAddress(t *testing.T) {
	own := egresstest.OwnAddress(t)
	var hits sync.Map
	ln, err := net.Listen("tcp", ":0") // every interface, as an X server with -listen tcp or a dev server
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		n, _ := hits.LoadOrStore(r.URL.Path, new(int))
		*n.(*int)++
		fmt.Fprintf(rw, "reached %s\n", r.URL.Path)
	})}}
	srv.Start()
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	ownURL := func(path string) string {
		return fmt.Sprintf("http://%s%s", net.JoinHostPort(own, fmt.Sprint(port)), path)
	}
	web := newFetchWeb(t)
	for _, allowLocal := range []bool{false, true} {
		pol := fetchPolicyFor(t, sandbox.NetworkOn, sandbox.NetworkTable{AllowLocal: &allowLocal})
		s := NewServer(Options{Policy: pol, Broker: fetchBroker()})
		s.net = web.net()
		s.net.resolver = egresstest.DNS{"own.test": {own}, "unknown.test": {"203.0.113.12"}}
		cs := mcptest.Connect(t, s)
		for _, tc := range []struct{ name, url, path string }{
			{"address", ownURL("/addr"), "/addr"},
			{"name resolving to it", fmt.Sprintf("http://own.test:%d/name", port), "/name"},
			{"redirect to it", "http://unknown.test/r?to=" + ownURL("/redirected"), "/redirected"},
		} {
			path := tc.path + fmt.Sprint(allowLocal)
			url := strings.Replace(tc.url, tc.path, path, 1)
			res, text := callText(t, cs, api.ToolWebFetch, map[string]any{"url": url})
			_, reached := hits.Load(path)
			switch {
			case !allowLocal && (reached || !res.IsError || !strings.Contains(text, "this machine's own address")):
				t.Errorf("ESCAPE: %s: web_fetch %s with the network on: reached %v, error %v:\n%s", tc.name, url, reached, res.IsError, text)
			case allowLocal && (!reached || res.IsError):
				t.Errorf("%s: web_fetch %s under allow_local: reached %v:\n%s", tc.name, url, reached, text)
			}
		}
	}
}

// TestWebFetchWithTheNetworkOff: with the network off web_fetch, allowed by the broker
// without more access, connects nowhere and says why.
func TestWebFetchWithTheNetworkOff(t *testing.T) {
	web := newFetchWeb(t)
	runFetchCases(t, fetchPolicyFor(t, sandbox.NetworkOff, sandbox.NetworkTable{}), web, fetchBroker(), []fetchCase{
		{name: "public", url: "http://allowed.test/a", want: "network access is off", path: "/a", refused: true},
		{name: "loopback", url: fmt.Sprintf("http://127.0.0.1:%d/b", web.port()), want: "network access is off", path: "/b", refused: true},
	})
}

// TestBashInTheMicroVMUnderAnAllowlistIsRefused: a bash command bound for the micro-VM
// (execution_mode sandbox, or auto for a high-risk command) under an allowlist is
// refused with the way out, and the VM runs nothing: this server connects no egress
// proxy to its VM, and the VM is never given more network, or less, than the allowlist.
func TestBashInTheMicroVMUnderAnAllowlistIsRefused(t *testing.T) {
	for _, mode := range []sandbox.ExecutionMode{sandbox.ExecSandbox, sandbox.ExecAuto} {
		pol := fetchPolicyFor(t, sandbox.NetworkAllowlist, sandbox.NetworkTable{AllowedDomains: []string{"pypi.org"}})
		pol.ExecutionMode = mode
		ran := false
		micro := sandbox.MicroVM(func(context.Context, sandbox.ExecRequest) (sandbox.Result, error) {
			ran = true
			return sandbox.Result{}, nil
		})
		cs := connect(t, Options{Policy: pol, Broker: fetchBroker(), MicroVM: everySession(micro), Risk: pipInstallRisk})
		res, text := callText(t, cs, api.ToolBash, map[string]any{"command": "pip install requests"})
		if !res.IsError || !strings.Contains(text, `network_access = "allowlist" in the micro-VM needs Airlock's egress proxy`) || !strings.Contains(text, `execution_mode = "local"`) {
			t.Errorf("%s: %v %q", mode, res.IsError, text)
		}
		if ran {
			t.Errorf("%s: the micro-VM ran a command under an allowlist without its proxy", mode)
		}
	}
}
