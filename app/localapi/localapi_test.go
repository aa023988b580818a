package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/eventbus"
)

func privateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := NewServer(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Handle("GET /v1/ping", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, 200, map[string]string{"pong": "yes"})
	})
	s.Handle("POST /v1/answer", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, 200, map[string]string{"answered": "yes"})
	})
	if err := s.Serve(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

func TestRoundTripAndSocketModes(t *testing.T) {
	sock := filepath.Join(privateDir(t), "airlock.sock")
	startServer(t, Options{Socket: sock})
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket mode %v, want a 0600 socket", fi.Mode())
	}
	var out map[string]string
	if err := NewClient(sock).Do(context.Background(), "GET", "/v1/ping", nil, &out); err != nil || out["pong"] != "yes" {
		t.Fatalf("ping = %v, %v", out, err)
	}
}

func TestSecondInstanceRefused(t *testing.T) {
	sock := filepath.Join(privateDir(t), "airlock.sock")
	startServer(t, Options{Socket: sock})
	_, err := NewServer(context.Background(), Options{Socket: sock})
	var ar *AlreadyRunningError
	if !errors.As(err, &ar) || ar.PID != os.Getpid() {
		t.Fatalf("second server: %v, want AlreadyRunningError naming pid %d", err, os.Getpid())
	}
	// The running one still answers.
	if err := NewClient(sock).Do(context.Background(), "GET", "/v1/ping", nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestStaleSocketReplaced(t *testing.T) {
	sock := filepath.Join(privateDir(t), "airlock.sock")
	// A process that died without cleaning up leaves the socket file behind.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Stat(sock); err != nil {
		t.Fatal("stale socket not left behind")
	}
	c := NewClient(sock)
	var nr *NotRunningError
	if err := c.Do(context.Background(), "GET", "/v1/ping", nil, nil); !errors.As(err, &nr) {
		t.Fatalf("before start: %v, want NotRunningError", err)
	}
	startServer(t, Options{Socket: sock})
	if err := c.Do(context.Background(), "GET", "/v1/ping", nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRefusesNonPrivateOrForeignDirectory(t *testing.T) {
	dir := privateDir(t)
	os.Chmod(dir, 0o755)
	if _, err := NewServer(context.Background(), Options{Socket: filepath.Join(dir, "a.sock")}); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Fatalf("open directory: %v", err)
	}
	if os.Getuid() == 0 {
		foreign := privateDir(t)
		os.Chown(foreign, 65534, 65534)
		if _, err := NewServer(context.Background(), Options{Socket: filepath.Join(foreign, "a.sock")}); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Fatalf("foreign directory: %v", err)
		}
	}
}

func TestAnotherUserIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	dir := privateDir(t)
	sock := filepath.Join(dir, "airlock.sock")
	startServer(t, Options{Socket: sock})
	// Open the door on purpose, so that only the uid check stands in the way.
	for d := dir; d != "/"; d = filepath.Dir(d) {
		fi, _ := os.Stat(d)
		os.Chmod(d, fi.Mode().Perm()|0o011)
	}
	os.Chmod(dir, 0o777)
	os.Chmod(sock, 0o666)
	cmd := exec.Command("curl", "-s", "-o", "-", "-w", "\n%{http_code}", "--unix-socket", sock, "http://airlock/v1/ping")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "403") || strings.Contains(string(out), "pong") {
		t.Fatalf("uid 65534 got %q, want 403 and no answer", out)
	}
	// The owner still gets in.
	if err := NewClient(sock).Do(context.Background(), "GET", "/v1/ping", nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestSandboxedPeerCannotChangeState(t *testing.T) {
	sock := filepath.Join(privateDir(t), "airlock.sock")
	me := os.Getpid()
	startServer(t, Options{Socket: sock, Sandboxed: func(pid int) bool { return pid == me }})
	c := NewClient(sock)
	if err := c.Do(context.Background(), "GET", "/v1/ping", nil, nil); err != nil {
		t.Fatalf("reading is allowed: %v", err)
	}
	err := c.Do(context.Background(), "POST", "/v1/answer", map[string]string{}, nil)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 403 || ae.Code != "sandboxed_caller" {
		t.Fatalf("POST from a sandboxed pid = %v, want 403 sandboxed_caller", err)
	}
}

func TestTCPListenerDemandsTokenAndOrigin(t *testing.T) {
	sock := filepath.Join(privateDir(t), "airlock.sock")
	token := strings.Repeat("k", 43)
	s := startServer(t, Options{Socket: sock, TCPAddress: "127.0.0.1:0",
		Token:          func(context.Context) (string, error) { return token, nil },
		AllowedOrigins: []string{"wails://wails"}})
	base := "http://" + s.TCPAddr()
	cases := []struct {
		name, host, auth, origin string
		want                     int
	}{
		{"no token", "", "", "", 401},
		{"wrong token", "", "Bearer " + strings.Repeat("x", 43), "", 401},
		{"not bearer", "", "Basic " + token, "", 401},
		{"foreign origin", "", "Bearer " + token, "https://evil.example", 403},
		{"rebinding host", "evil.example", "Bearer " + token, "", 403},
		{"right token", "", "Bearer " + token, "", 200},
		{"right token, own origin", "", "Bearer " + token, "wails://wails", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", base+"/v1/ping", nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

func TestTCPRefusesNonLoopback(t *testing.T) {
	sock := filepath.Join(privateDir(t), "airlock.sock")
	s, err := NewServer(context.Background(), Options{Socket: sock, TCPAddress: "0.0.0.0:0",
		Token: func(context.Context) (string, error) { return strings.Repeat("k", 40), nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if err := s.Serve(); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("Serve on 0.0.0.0 = %v", err)
	}
}

func TestEventsStream(t *testing.T) {
	sock := filepath.Join(privateDir(t), "airlock.sock")
	bus := eventbus.New()
	s, err := NewServer(context.Background(), Options{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	s.Handle(api.EventStream.Pattern(), EventsHandler(bus))
	if err := s.Serve(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		s.Shutdown(context.Background())
	}()
	// A topic the core does not publish is refused, naming it, rather than streaming
	// nothing forever.
	if _, err := NewClient(sock).Events(ctx, api.TopicRunUpdated, "run.updatd"); !errors.Is(err, &api.Error{Code: api.CodeBadRequest}) ||
		!strings.Contains(err.Error(), `"run.updatd"`) {
		t.Fatalf("events of an unknown topic: %v", err)
	}
	events, err := NewClient(sock).Events(ctx, api.TopicRunUpdated)
	if err != nil {
		t.Fatal(err)
	}
	// The subscription is registered once the stream's first bytes arrived; publish
	// until the event shows up.
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case ev := <-events:
			var p api.RunUpdated
			if ev.Topic != api.TopicRunUpdated || json.Unmarshal(ev.Payload, &p) != nil || p.ID != 42 {
				t.Fatalf("got %+v", ev)
			}
			return
		case <-tick.C:
			bus.Publish(api.TopicConfigChanged, api.ConfigChanged{}) // filtered out
			bus.Publish(api.TopicRunUpdated, api.RunUpdated{ID: 42})
		case <-deadline:
			t.Fatal("no event arrived")
		}
	}
}
