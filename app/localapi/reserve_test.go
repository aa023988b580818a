package localapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// reserveChild is the environment variable that makes the test binary run as the
// server of TestSandboxChannelsKeepAReserve (helperReserveServer).
const reserveChild = "AIRLOCK_TEST_RESERVE_SERVER"

// TestSandboxChannelsKeepAReserve: a server process with a low file limit (512) serves
// the person's socket and a sandbox's channel (Reserve, no per-caller cap, so only the
// reserve holds). A client holding 1,000 connections open on the channel does not take
// the process to its limit: the channel stops accepting at the reserve, the person's
// socket still answers, and no accept fails with "too many open files". (Without the
// reserve the person's socket gets no answer.)
func TestSandboxChannelsKeepAReserve(t *testing.T) {
	if os.Getenv(reserveChild) != "" {
		helperReserveServer()
		return
	}
	dir := privateDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSandboxChannelsKeepAReserve$")
	cmd.Env = append(os.Environ(), reserveChild+"="+dir)
	stdout, _ := cmd.StdoutPipe()
	var logs lockedBuilder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var channel string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "channel "); ok {
			channel = a
			break
		}
	}
	if channel == "" {
		t.Fatalf("the server did not start:\n%s", logs.String())
	}
	go io.Copy(io.Discard, stdout)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 1000 {
		c, err := net.Dial("tcp", channel)
		if err != nil {
			t.Fatalf("dial the channel: %v", err)
		}
		io.WriteString(c, "GET /hold HTTP/1.1\r\nHost: ask\r\n\r\n")
		conns = append(conns, c)
	}
	person := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", filepath.Join(dir, "airlock.sock"))
	}}}
	var held int
	for deadline := time.Now().Add(30 * time.Second); ; {
		// The channel's accepts settle at the reserve.
		resp, err := person.Get("http://airlock/v1/held")
		if err != nil {
			t.Fatalf("the person's socket does not answer while the channel is flooded: %v\n%s", err, logs.String())
		}
		var st struct{ Held, Free, Reserve int }
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if st.Held == held && held > 0 {
			t.Logf("the channel holds %d connections; %d descriptors free, reserve %d", st.Held, st.Free, st.Reserve)
			if st.Free < st.Reserve-16 || st.Held >= 1000 {
				t.Errorf("the channel went past the reserve: %+v", st)
			}
			break
		}
		held = st.Held
		if time.Now().After(deadline) {
			t.Fatalf("the channel's connections never settled (%d)", held)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if strings.Contains(logs.String(), "too many open files") {
		t.Errorf("the server ran out of descriptors:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "not accepting while the core is short of file descriptors") {
		t.Errorf("the server did not say the channel paused:\n%s", logs.String())
	}
}

// lockedBuilder is a strings.Builder that the child's stderr writes while the test reads.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// helperReserveServer is the server process of TestSandboxChannelsKeepAReserve.
func helperReserveServer() {
	dir := os.Getenv(reserveChild)
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 512, Max: 512}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(2)
	}
	s, err := NewServer(context.Background(), Options{Socket: filepath.Join(dir, "airlock.sock")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var held atomic.Int64
	s.Handle("GET /v1/held", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, 200, map[string]int{"held": int(held.Load()), "free": FreeDescriptors(), "reserve": DescriptorReserve()})
	})
	if err := s.Serve(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	srv := NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		defer held.Add(-1)
		<-r.Context().Done()
	}), Timeouts{})
	fmt.Printf("channel %s\n", ln.Addr())
	srv.Serve(Guard(ln, Limits{Reserve: true, OneCaller: true, Name: "test channel"}))
}
