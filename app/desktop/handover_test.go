package desktop

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
)

func statusRoute(kind string, pid int) func(*localapi.Server) {
	return func(s *localapi.Server) {
		s.Handle("GET /v1/status", func(w http.ResponseWriter, _ *http.Request) {
			localapi.WriteJSON(w, http.StatusOK, api.Status{Kind: kind, PID: pid})
		})
	}
}

// A second launch while the window runs brings that window to the front and succeeds.
func TestHandOverToRunningWindow(t *testing.T) {
	shower := &countingShower{}
	socket := serve(t, nil, func(s *localapi.Server) {
		statusRoute("desktop", 4242)(s)
		registerRoutes(s, shower)
	})
	if err := HandOver(context.Background(), &localapi.AlreadyRunningError{Socket: socket, PID: 4242}); err != nil {
		t.Fatalf("HandOver: %v", err)
	}
	if shower.n.Load() != 1 {
		t.Errorf("window shown %d times, want once", shower.n.Load())
	}
}

// A launch while the headless daemon holds the core refuses, names the daemon's pid and
// says how to get a window; it does not touch the daemon.
func TestHandOverRefusesWhenDaemonRuns(t *testing.T) {
	shower := &countingShower{}
	socket := serve(t, nil, func(s *localapi.Server) {
		statusRoute("daemon", 777)(s)
		registerRoutes(s, shower)
	})
	err := HandOver(context.Background(), &localapi.AlreadyRunningError{Socket: socket, PID: 777})
	if !errors.Is(err, ErrDaemonRunning) {
		t.Fatalf("err = %v, want ErrDaemonRunning", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "777") || !strings.Contains(msg, "stop the daemon") {
		t.Errorf("message %q should name the pid and the way out", msg)
	}
	if shower.n.Load() != 0 {
		t.Error("asked the daemon to show a window")
	}
}

// The lock holder does not answer (hung, or the socket is gone): a clear error naming
// the pid, not a hang.
func TestHandOverWhenNothingAnswers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	err := HandOver(context.Background(), &localapi.AlreadyRunningError{Socket: filepath.Join(dir, "airlock.sock"), PID: 99})
	if err == nil || !strings.Contains(err.Error(), "kill 99") {
		t.Fatalf("err = %v, want one that says how to stop pid 99", err)
	}
}
