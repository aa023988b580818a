package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/proxy"
)

const publicIP = "203.0.113.10" // TEST-NET-3: never routed; routedDialer maps it to loopback

type world struct {
	proxyAddr string
	res       *fakeResolver
	dial      *routedDialer
	rec       *recorder
	pool      *x509.CertPool
}

// newWorld starts an HTTPS and an HTTP test server on loopback, reachable only as
// publicIP:443 and publicIP:80 through the routed dialer, and a proxy in front.
func newWorld(t *testing.T, cfg Config, answers map[string][][]netip.Addr) *world {
	t.Helper()
	names := []string{"allowed.test", "sub.wild.test", "wild.test", "ask.test", "ask-deny.test", "rebind.test", "listed-ip.test"}
	cert, pool, _ := testCert(t, names...)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "hello %s %s (%d bytes)", r.Host, r.URL.Path, len(body))
	})
	tlsSrv := httptest.NewUnstartedServer(h)
	tlsSrv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	plain := httptest.NewServer(h)
	t.Cleanup(plain.Close)
	w := &world{
		res:  &fakeResolver{answers: answers},
		dial: &routedDialer{routes: map[string]string{publicIP + ":443": tlsSrv.Listener.Addr().String(), publicIP + ":80": plain.Listener.Addr().String()}},
		rec:  newRecorder(),
		pool: pool,
	}
	cfg.Resolver, cfg.Dial, cfg.Log = w.res, w.dial.Dial, w.rec.Log
	_, w.proxyAddr = startProxy(t, cfg)
	return w
}

func (w *world) httpClient() *http.Client {
	u := &url.URL{Scheme: "http", Host: w.proxyAddr}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: w.pool}, DisableKeepAlives: true}}
}

func (w *world) socksClient(t *testing.T) *http.Client {
	d, err := proxy.SOCKS5("tcp", w.proxyAddr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	cd := d.(proxy.ContextDialer)
	return &http.Client{Transport: &http.Transport{DialContext: cd.DialContext, TLSClientConfig: &tls.Config{RootCAs: w.pool}, DisableKeepAlives: true}}
}

func get(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

var public = map[string][][]netip.Addr{
	"allowed.test":  {addrs(publicIP)},
	"sub.wild.test": {addrs(publicIP)},
	"wild.test":     {addrs(publicIP)},
	"ask.test":      {addrs(publicIP)},
	"ask-deny.test": {addrs(publicIP)},
	"denied.test":   {addrs(publicIP)},
	"local.test":    {addrs("127.0.0.1")},
	"mixed.test":    {addrs(publicIP, "10.0.0.7")},
	"ula.test":      {addrs("fd00::1")},
	"mapped.test":   {addrs("::ffff:192.168.1.1")},
}

func TestAllowedThroughEveryProtocol(t *testing.T) {
	w := newWorld(t, Config{Allowed: []string{"allowed.test", "*.wild.test"}}, public)
	for _, tc := range []struct {
		name   string
		client *http.Client
		url    string
		proto  Protocol
	}{
		{"connect", w.httpClient(), "https://allowed.test/a", ProtoConnect},
		{"socks5", w.socksClient(t), "https://sub.wild.test/b", ProtoSOCKS5},
		{"plain http", w.httpClient(), "http://wild.test/c", ProtoHTTP},
	} {
		code, body, err := get(t, tc.client, tc.url)
		if err != nil || code != 200 || !strings.HasPrefix(body, "hello ") {
			t.Fatalf("%s: GET %s = %d %q %v", tc.name, tc.url, code, body, err)
		}
		u, _ := url.Parse(tc.url)
		rec := w.rec.wait(t, u.Hostname())
		if rec.Verdict != Allow || rec.Reason != ReasonAllowedByList || rec.Protocol != tc.proto || rec.IP.String() != publicIP {
			t.Errorf("%s: record %+v", tc.name, rec)
		}
		if rec.BytesUp == 0 || rec.BytesDown == 0 || rec.Duration <= 0 {
			t.Errorf("%s: record counts no traffic: %+v", tc.name, rec)
		}
	}
}

func TestRefusedDestinations(t *testing.T) {
	w := newWorld(t, Config{
		Allowed: []string{"*.test", "127.0.0.1", publicIP + ":443"},
		Denied:  []string{"denied.test"},
	}, public)
	for _, tc := range []struct {
		host   string
		reason Reason
	}{
		{"denied.test", ReasonDeniedByList},
		{"local.test", ReasonLocalAddress},
		{"mixed.test", ReasonLocalAddress},
		{"ula.test", ReasonLocalAddress},
		{"mapped.test", ReasonLocalAddress},
		{"127.0.0.1", ReasonLocalAddress}, // listed, still local
		{"nxdomain.test", ReasonResolveFailed},
	} {
		for _, client := range []*http.Client{w.httpClient(), w.socksClient(t)} {
			code, body, err := get(t, client, "https://"+tc.host+"/")
			if err == nil {
				t.Errorf("%s: %d %q, want a refusal", tc.host, code, body)
			}
		}
		rec := w.rec.wait(t, tc.host)
		if rec.Verdict != Deny || rec.Reason != tc.reason {
			t.Errorf("%s: record %+v, want %s", tc.host, rec, tc.reason)
		}
	}
	// Denied names are never looked up: a refused name leaks nothing through DNS.
	if n := w.res.lookups("denied.test"); n != 0 {
		t.Errorf("denied.test was resolved %d times", n)
	}
	for _, d := range w.dial.dials() {
		if d != publicIP+":443" {
			t.Errorf("dialed %s", d)
		}
	}
}

// The body of a refused CONNECT says who refused and how to allow it.
func TestRefusalBody(t *testing.T) {
	w := newWorld(t, Config{Denied: []string{"denied.test"}}, public)
	for host, want := range map[string][]string{
		"denied.test:443":   {"403", "Airlock refused the connection to denied.test:443", "denied_domains"},
		"unknown.test:443":  {"403", "Airlock refused", `add "unknown.test" to allowed_domains`},
		"1.2.3.4.5:443":     {"403", "not a valid destination"},
		"[fe80::1%25lo]:80": {"403", "not a valid destination"},
	} {
		c, err := net.Dial("tcp", w.proxyAddr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("CONNECT %s: %v", host, err)
		}
		b, _ := io.ReadAll(resp.Body)
		c.Close()
		got := resp.Status + " " + string(b)
		for _, s := range want {
			if !strings.Contains(got, s) {
				t.Errorf("CONNECT %s: %q lacks %q", host, got, s)
			}
		}
	}
}

// Rebinding: the name is resolved once per connection and the connection goes to the
// address that was checked, whatever a later answer says.
func TestRebindingDialsTheCheckedAddress(t *testing.T) {
	answers := map[string][][]netip.Addr{"rebind.test": {addrs(publicIP), addrs("127.0.0.1")}}
	w := newWorld(t, Config{Allowed: []string{"rebind.test"}}, answers)
	code, body, err := get(t, w.httpClient(), "https://rebind.test/first")
	if err != nil || code != 200 {
		t.Fatalf("first connection: %d %q %v", code, body, err)
	}
	if n := w.res.lookups("rebind.test"); n != 1 {
		t.Fatalf("one connection resolved rebind.test %d times, want once", n)
	}
	if got := w.dial.dials(); !slices.Equal(got, []string{publicIP + ":443"}) {
		t.Fatalf("dialed %v, want exactly the checked %s:443", got, publicIP)
	}
	// The second answer is loopback: that connection is refused, nothing is dialed.
	if _, _, err := get(t, w.socksClient(t), "https://rebind.test/second"); err == nil {
		t.Fatal("the rebound name reached something")
	}
	if got := w.dial.dials(); len(got) != 1 {
		t.Fatalf("dialed %v after the rebinding answer", got)
	}
}

func TestAllowLocal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "local ok") }))
	defer srv.Close()
	rec := newRecorder()
	_, addr := startProxy(t, Config{Allowed: []string{"127.0.0.1"}, AllowLocal: true, Log: rec.Log})
	u := &url.URL{Scheme: "http", Host: addr}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
	code, body, err := get(t, c, srv.URL)
	if err != nil || code != 200 || body != "local ok" {
		t.Fatalf("allow_local: %d %q %v", code, body, err)
	}
}

// An unknown destination waits on Decide, with the client's connection held open;
// nothing is resolved until the answer, and the answer decides.
func TestUnknownWaitsOnDecide(t *testing.T) {
	type ask struct {
		req    Request
		answer chan Verdict
	}
	asks := make(chan ask)
	decide := func(ctx context.Context, r Request) (Verdict, error) {
		a := ask{r, make(chan Verdict)}
		select {
		case asks <- a:
		case <-ctx.Done():
			return Deny, ctx.Err()
		}
		select {
		case v := <-a.answer:
			return v, nil
		case <-ctx.Done():
			return Deny, ctx.Err()
		}
	}
	w := newWorld(t, Config{Decide: decide}, public)
	for _, tc := range []struct {
		host    string
		verdict Verdict
		client  *http.Client
	}{
		{"ask.test", Allow, w.httpClient()},
		{"ask-deny.test", Deny, w.httpClient()},
		{"allowed.test", Allow, w.socksClient(t)},
		{"wild.test", Deny, w.socksClient(t)},
	} {
		type result struct {
			code int
			body string
			err  error
		}
		done := make(chan result, 1)
		go func() {
			code, body, err := get(t, tc.client, "https://"+tc.host+"/x")
			done <- result{code, body, err}
		}()
		a := <-asks
		if a.req.Domain != tc.host || a.req.Port != 443 {
			t.Fatalf("Decide asked about %+v, want %s:443", a.req, tc.host)
		}
		select {
		case r := <-done:
			t.Fatalf("%s: the client finished before the answer: %+v", tc.host, r)
		default:
		}
		if n := w.res.lookups(tc.host); n != 0 {
			t.Fatalf("%s was resolved before it was allowed", tc.host)
		}
		a.answer <- tc.verdict
		r := <-done
		rec := w.rec.wait(t, tc.host)
		if tc.verdict == Allow {
			if r.err != nil || r.code != 200 {
				t.Errorf("%s allowed: %+v", tc.host, r)
			}
			if rec.Reason != ReasonAllowedByPerson || rec.Verdict != Allow {
				t.Errorf("%s: record %+v", tc.host, rec)
			}
		} else {
			if r.err == nil {
				t.Errorf("%s denied but reached: %+v", tc.host, r)
			}
			if rec.Reason != ReasonDeniedByPerson || rec.Verdict != Deny {
				t.Errorf("%s: record %+v", tc.host, rec)
			}
		}
	}
	// A failing Decide refuses.
	w2 := newWorld(t, Config{Decide: func(context.Context, Request) (Verdict, error) { return Allow, errors.New("core unreachable") }}, public)
	if _, _, err := get(t, w2.httpClient(), "https://ask.test/"); err == nil {
		t.Error("a failed decision let the connection through")
	}
	if rec := w2.rec.wait(t, "ask.test"); rec.Reason != ReasonDecideFailed {
		t.Errorf("record %+v", rec)
	}
}

// socksReply sends one raw SOCKS5 request and returns the reply code.
func socksReply(t *testing.T, addr string, cmd byte, dst []byte) byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte{5, 1, 0})
	var hello [2]byte
	if _, err := io.ReadFull(c, hello[:]); err != nil || hello != [2]byte{5, 0} {
		t.Fatalf("greeting: %v %v", hello, err)
	}
	c.Write(append([]byte{5, cmd, 0}, dst...))
	var rep [4]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		t.Fatalf("reply: %v", err)
	}
	return rep[1]
}

func TestSOCKS5Replies(t *testing.T) {
	w := newWorld(t, Config{Allowed: []string{"allowed.test"}, Denied: []string{"denied.test"}}, public)
	name := func(s string, port byte) []byte { return append(append([]byte{3, byte(len(s))}, s...), 1, port) }
	ipv4 := []byte{1, 0, 0, 0, 0, 0, 0}
	for _, tc := range []struct {
		what string
		cmd  byte
		dst  []byte
		want byte
	}{
		{"denied", 1, name("denied.test", 187), 2},            // connection not allowed by ruleset
		{"unknown without Decide", 1, name("x.test", 187), 2}, //
		{"local", 1, []byte{1, 127, 0, 0, 1, 0, 80}, 2},       // an IP literal is its own domain
		{"udp associate", 3, ipv4, 2},
		{"bind", 2, name("allowed.test", 187), 2},
		{"allowed", 1, name("allowed.test", 187), 0},
	} {
		if got := socksReply(t, w.proxyAddr, tc.cmd, tc.dst); got != tc.want {
			t.Errorf("%s: reply %d, want %d", tc.what, got, tc.want)
		}
	}
}

func TestPlainHTTPRefusals(t *testing.T) {
	w := newWorld(t, Config{Allowed: []string{"allowed.test"}}, public)
	for _, tc := range []struct{ req, want string }{
		{"GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", "403"},
		{"GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n", "403"},
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
	} {
		c, err := net.Dial("tcp", w.proxyAddr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, tc.req)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil || !strings.HasPrefix(resp.Status, tc.want) {
			t.Errorf("%q: %v %v, want %s", tc.req, resp, err, tc.want)
		}
	}
}

func TestSummary(t *testing.T) {
	var s Summary
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, why := Allow, ReasonAllowedByList
			if i%2 == 1 {
				v, why = Deny, ReasonDeniedByPerson
			}
			s.Add(Record{Domain: "a.test", Port: 443 + i%2, Verdict: v, Reason: why, BytesUp: 1, BytesDown: 2})
		}()
	}
	wg.Wait()
	s.Add(Record{Domain: "0.test", Port: 80})
	got := s.Domains()
	if len(got) != 2 || got[0].Domain != "0.test" {
		t.Fatalf("%+v", got)
	}
	a := got[1]
	// The denials were the person's answers: asked; the list's allowances were not.
	if a.Connections != 10 || a.Allowed != 5 || a.Refused != 5 || a.Asked != 5 || a.BytesUp != 10 || a.BytesDown != 20 || !slices.Equal(a.Ports, []int{443, 444}) {
		t.Errorf("%+v", a)
	}
	if n := len(Summarize([]Record{{Domain: "x"}, {Domain: "x"}, {Domain: "y"}})); n != 2 {
		t.Errorf("Summarize: %d domains", n)
	}
}

// A CONNECT client that hangs up while Decide waits cancels Decide's context, so the
// core can withdraw its question.
func TestDecideCancelledWhenClientLeaves(t *testing.T) {
	entered, cancelled := make(chan struct{}), make(chan error, 1)
	w := newWorld(t, Config{Decide: func(ctx context.Context, _ Request) (Verdict, error) {
		close(entered)
		<-ctx.Done()
		cancelled <- ctx.Err()
		return Deny, ctx.Err()
	}}, public)
	c, err := net.Dial("tcp", w.proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "CONNECT ask.test:443 HTTP/1.1\r\nHost: ask.test:443\r\n\r\n")
	<-entered
	c.Close()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("Decide's context ended with %v", err)
	}
}
