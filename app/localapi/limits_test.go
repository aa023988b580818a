package localapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
)

const testToken = "0123456789abcdef0123456789abcdef"

// waitRoute is a long poll: it reads its body, then waits hold (an await of the
// person's answer) and says whether its context ended early.
func waitRoute(s *Server, hold time.Duration) {
	s.Handle("POST /v1/wait", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		if err := ReadJSON(r, &in); err != nil {
			WriteError(w, err)
			return
		}
		select {
		case <-r.Context().Done():
			WriteJSON(w, 200, map[string]bool{"cut": true})
		case <-time.After(hold):
			WriteJSON(w, 200, map[string]bool{"cut": false})
		}
	})
}

// TestSlowRequestsTimeOut: on the unix socket and on loopback TCP, a client trickling
// its headers or its body one byte a second is cut off once the read timeout passes,
// while a long poll that waits longer than every timeout (an await of the person)
// completes with its context intact.
func TestSlowRequestsTimeOut(t *testing.T) {
	sock := filepath.Join(privateDir(t), "airlock.sock")
	s, err := NewServer(context.Background(), Options{Socket: sock, TCPAddress: "127.0.0.1:0",
		Token: func(context.Context) (string, error) { return testToken, nil }, Timeouts: Timeouts{Header: time.Second, Body: time.Second, Idle: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	waitRoute(s, 3*time.Second)
	if err := s.Serve(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	dials := map[string]func() (net.Conn, error){
		"unix": func() (net.Conn, error) { return net.Dial("unix", sock) },
		"tcp":  func() (net.Conn, error) { return net.Dial("tcp", s.TCPAddr()) },
	}
	body := `{"tool":"bash","params":{"command":"rm -rf build"},"padding":"` + strings.Repeat("x", 100) + `"}`
	head := fmt.Sprintf("POST /v1/wait HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", testToken, len(body))
	for name, dial := range dials {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				what     string
				sent     string // at once
				trickled string // one byte a second
			}{
				{"headers", "", head + body},
				{"body", head, body},
			} {
				c, err := dial()
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				io.WriteString(c, tc.sent)
				stopped := make(chan struct{})
				go func() {
					defer close(stopped)
					for i := 0; i < len(tc.trickled); i++ {
						if _, err := c.Write([]byte{tc.trickled[i]}); err != nil {
							return
						}
						time.Sleep(time.Second)
					}
				}()
				c.SetReadDeadline(time.Now().Add(30 * time.Second))
				got, _ := io.ReadAll(c) // until the server closes
				took := time.Since(start)
				c.Close()
				<-stopped
				t.Logf("%s trickled: closed after %v with %q", tc.what, took.Round(100*time.Millisecond), firstLine(got))
				// Trickled to the end it would take over 100 s; the timeout is 1 s.
				if took > 20*time.Second {
					t.Errorf("a client trickling its %s was kept for %v", tc.what, took)
				}
				if bytes.Contains(got, []byte(`"cut"`)) {
					t.Errorf("a trickled %s reached the handler", tc.what)
				}
			}
			// A long poll outlives every timeout.
			c, err := dial()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, head+body)
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("the long poll: %v", err)
			}
			var out map[string]bool
			json.NewDecoder(resp.Body).Decode(&out)
			if resp.StatusCode != 200 || out["cut"] {
				t.Errorf("the long poll was cut short by a read timeout: %d %v", resp.StatusCode, out)
			}
		})
	}
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\r\n"))
	return string(line)
}

// TestConnectionsCappedPerCaller: one process holding MaxConnsPerClient connections
// open on the socket gets its next one refused with 429 and the reason, logged once
// however many are refused (and once more with the count when it is down to half);
// once it closes some it connects again.
func TestConnectionsCappedPerCaller(t *testing.T) {
	logs := captureSlog(t)
	sock := filepath.Join(privateDir(t), "airlock.sock")
	s, err := NewServer(context.Background(), Options{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	s.Handle("GET /v1/hold", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		WriteJSON(w, 200, map[string]string{"held": "yes"})
	})
	if err := s.Serve(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range MaxConnsPerClient {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET /v1/hold HTTP/1.1\r\nHost: airlock\r\n\r\n")
		held = append(held, c)
	}
	get := func() (*http.Response, api.Error, error) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return nil, api.Error{}, err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, "GET /v1/hold HTTP/1.1\r\nHost: airlock\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return nil, api.Error{}, err
		}
		defer resp.Body.Close()
		var e api.Error
		json.NewDecoder(resp.Body).Decode(&e)
		return resp, e, nil
	}
	for range 20 {
		resp, e, err := get()
		if err != nil {
			t.Fatalf("a connection beyond the cap: %v (want a 429 with the reason, not a reset)", err)
		}
		if resp.StatusCode != http.StatusTooManyRequests || e.Code != api.CodeTooMany || !strings.Contains(e.Message, fmt.Sprintf("%d connections", MaxConnsPerClient)) || e.Hint == "" {
			t.Fatalf("a connection beyond the cap: %d %+v", resp.StatusCode, e)
		}
	}
	if n := strings.Count(logs(), "reached its cap of open connections"); n != 1 {
		t.Errorf("20 refusals were logged %d times, want once", n)
	}
	close(release)
	for _, c := range held {
		c.Close()
	}
	held = nil
	// Connections close asynchronously on the server's side: wait for a slot.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, _, err := get()
		if err == nil && resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing its connections the caller is still refused: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Once it is down to half its cap, the log gives the count.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logs(), "refused=20"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not give the count of refusals:\n%s", logs())
		}
	}
}

// flakyListener fails its first n accepts with err.
type flakyListener struct {
	net.Listener
	mu  sync.Mutex
	n   int
	err error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.n > 0 {
		l.n--
		l.mu.Unlock()
		return nil, l.err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// TestAcceptBacksOffOnEMFILE: a listener out of descriptors backs off instead of
// spinning, says so once, and once more with the count when it accepts again.
func TestAcceptBacksOffOnEMFILE(t *testing.T) {
	logs := captureSlog(t)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &flakyListener{Listener: inner, n: 7, err: &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}}
	g := Guard(fl, Limits{Name: "test listener"})
	defer g.Close()
	go func() {
		if c, err := net.Dial("tcp", inner.Addr().String()); err == nil {
			defer c.Close()
			time.Sleep(10 * time.Second)
		}
	}()
	start := time.Now()
	c, err := g.Accept()
	if err != nil {
		t.Fatalf("Accept returned the transient error: %v", err)
	}
	c.Close()
	took := time.Since(start)
	out := logs()
	t.Logf("7 failed accepts took %v; log:\n%s", took, out)
	if took < 300*time.Millisecond {
		t.Errorf("7 failed accepts took only %v: no back-off", took)
	}
	if strings.Count(out, "too many open files") != 2 || !strings.Contains(out, "failed_accepts=7") {
		t.Errorf("want the error logged once, and once more with the count")
	}
}

func captureSlog(t *testing.T) func() string {
	t.Helper()
	var mu sync.Mutex
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) }), nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return func() string { mu.Lock(); defer mu.Unlock(); return buf.String() }
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
