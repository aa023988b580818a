package egress

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"
)

// testCert makes a self-signed certificate for names; the pool trusts it.
func testCert(t testing.TB, names ...string) (tls.Certificate, *x509.CertPool, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: names[0]},
		DNSNames:              names,
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool,
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// fakeResolver answers from a script: the nth lookup of a name gets answers[name][n]
// (the last one once the script runs out), and it counts lookups.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	n := r.calls[host]
	r.calls[host]++
	script := r.answers[host]
	if len(script) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return script[min(n, len(script)-1)], nil
}

func (r *fakeResolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// routedDialer stands in for the internet: it records every address the proxy dials,
// connects the ones in routes to a server on this machine's loopback, and fails the
// rest without sending a packet anywhere.
type routedDialer struct {
	mu     sync.Mutex
	routes map[string]string
	dialed []string
}

func (d *routedDialer) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	to, ok := d.routes[addr]
	d.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("test network: no route to %s", addr)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, to)
}

func (d *routedDialer) dials() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.dialed)
}

// recorder collects Records.
type recorder struct {
	mu   sync.Mutex
	recs []Record
	cond chan struct{}
}

func newRecorder() *recorder { return &recorder{cond: make(chan struct{}, 1)} }

func (r *recorder) Log(rec Record) {
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
	select {
	case r.cond <- struct{}{}:
	default:
	}
}

// wait returns the first record for domain, waiting for it to be reported (a record
// comes when its connection closes).
func (r *recorder) wait(t testing.TB, domain string) Record {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		for _, rec := range r.recs {
			if rec.Domain == domain {
				r.mu.Unlock()
				return rec
			}
		}
		r.mu.Unlock()
		select {
		case <-r.cond:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no record for %s", domain)
		}
	}
}

// startProxy serves p on a fresh loopback listener until the test ends.
func startProxy(t testing.TB, cfg Config) (*Proxy, string) {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return p, ln.Addr().String()
}
