package desktop

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/localapi"
)

type countingShower struct{ n atomic.Int32 }

func (c *countingShower) ShowWindow() { c.n.Add(1) }

// serve starts a real local API on a private socket with the desktop routes and any
// extra handlers, and returns its socket.
func serve(t *testing.T, sandboxed func(int) bool, register func(*localapi.Server)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "airlock.sock")
	srv, err := localapi.NewServer(context.Background(), localapi.Options{Socket: socket, Sandboxed: sandboxed})
	if err != nil {
		t.Fatalf("start the local API: %v", err)
	}
	register(srv)
	if err := srv.Serve(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return socket
}

func TestWindowShowRouteShowsTheWindow(t *testing.T) {
	shower := &countingShower{}
	socket := serve(t, nil, func(s *localapi.Server) { registerRoutes(s, shower) })
	var out map[string]bool
	if err := localapi.NewClient(socket).Do(context.Background(), http.MethodPost, api.ShowWindow.Path, struct{}{}, &out); err != nil {
		t.Fatalf("POST %s: %v", api.ShowWindow.Path, err)
	}
	if shower.n.Load() != 1 || !out["shown"] {
		t.Errorf("shown %d times, answer %v; want once and shown=true", shower.n.Load(), out)
	}
}

// A process inside an Airlock sandbox may not raise the window (every state-changing
// request from a sandbox is refused before the handler runs).
func TestWindowShowRouteRefusesSandboxedCallers(t *testing.T) {
	shower := &countingShower{}
	self := os.Getpid()
	socket := serve(t, func(pid int) bool { return pid == self }, func(s *localapi.Server) { registerRoutes(s, shower) })
	err := localapi.NewClient(socket).Do(context.Background(), http.MethodPost, api.ShowWindow.Path, struct{}{}, nil)
	var apiErr *api.Error
	if !errors.As(err, &apiErr) || apiErr.Code != "sandboxed_caller" {
		t.Fatalf("err = %v, want the sandboxed_caller refusal", err)
	}
	if shower.n.Load() != 0 {
		t.Error("the window was shown for a sandboxed caller")
	}
}

// GET does not show the window: only POST is a request to act.
func TestWindowShowRouteIsPostOnly(t *testing.T) {
	shower := &countingShower{}
	socket := serve(t, nil, func(s *localapi.Server) { registerRoutes(s, shower) })
	if err := localapi.NewClient(socket).Do(context.Background(), http.MethodGet, api.ShowWindow.Path, nil, nil); err == nil {
		t.Error("GET succeeded")
	}
	if shower.n.Load() != 0 {
		t.Error("GET showed the window")
	}
}
