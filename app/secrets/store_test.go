package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// These tests use the real Secret Service. `make test` runs them inside
// dbus-run-session with an unlocked gnome-keyring.
func realStore(t *testing.T) *Store {
	t.Helper()
	s := NewForService(fmt.Sprintf("airlock-test-%d", os.Getpid()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Check(ctx); err != nil {
		if os.Getenv("AIRLOCK_REQUIRE_KEYRING") == "1" {
			t.Fatalf("the keyring is required here but: %v", err)
		}
		t.Skipf("no Secret Service on this bus (run under make test): %v", err)
	}
	return s
}

func TestRoundTripInTheRealKeyring(t *testing.T) {
	s := realStore(t)
	ctx := context.Background()
	if err := s.Set(ctx, "db.password", "hunter2 with spaces ✓"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "db.password")
	if err != nil || got != "hunter2 with spaces ✓" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if err := s.Delete(ctx, "db.password"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "db.password"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after Delete, Get = %v, want ErrNotFound", err)
	}
}

func TestRejectsBadNames(t *testing.T) {
	s := New()
	for _, name := range []string{"", "a b", "../x", string(make([]byte, 200))} {
		if err := s.Set(context.Background(), name, "v"); err == nil {
			t.Errorf("Set(%q) accepted", name)
		}
	}
}

func TestDeadKeyringSaysHowToFixIt(t *testing.T) {
	// The D-Bus session connection is cached per process: look at a dead bus from a
	// fresh child process.
	if os.Getenv("AIRLOCK_TEST_DEAD_BUS") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDeadKeyringSaysHowToFixIt$", "-test.v")
		cmd.Env = append(os.Environ(), "AIRLOCK_TEST_DEAD_BUS=1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	s := NewForService("airlock-test-dead")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.Set(ctx, "x", "secret-value")
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("Set on a dead bus = %v, want UnavailableError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "gnome-keyring") || strings.Contains(msg, "secret-value") {
		t.Fatalf("message %q must say how to fix it and never echo the value", msg)
	}
}

func TestSessionBusMissing(t *testing.T) {
	dir := t.TempDir()
	withBus := t.TempDir()
	if err := os.WriteFile(filepath.Join(withBus, "bus"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"address set", map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}, false},
		{"bus in the runtime dir", map[string]string{"XDG_RUNTIME_DIR": withBus}, false},
		{"nothing", map[string]string{"XDG_RUNTIME_DIR": dir}, runtime.GOOS == "linux" && !fileExists(fmt.Sprintf("/run/user/%d/bus", os.Getuid()))},
	} {
		if got := sessionBusMissing(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%s: sessionBusMissing = %v, want %v", c.name, got, c.want)
		}
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Without a session bus the store says so and launches nothing.
func TestNoSessionBusIsUnavailable(t *testing.T) {
	if runtime.GOOS != "linux" || fileExists(fmt.Sprintf("/run/user/%d/bus", os.Getuid())) {
		t.Skip("needs Linux without a bus in /run/user/UID")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	_, err := NewForService("airlock-test").Get(context.Background(), "x")
	var ue *UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "no D-Bus session bus") {
		t.Fatalf("Get without a bus = %v; want UnavailableError naming the missing bus", err)
	}
}

// Token mints a token the first time and returns the same one after; removed, the next
// one is new.
func TestTokenMintsOnceInTheRealKeyring(t *testing.T) {
	s := realStore(t)
	ctx := context.Background()
	t.Cleanup(func() { _ = s.Delete(ctx, "test.token") })
	first, err := Token(ctx, s, "test.token")
	if err != nil || len(first) < 32 {
		t.Fatalf("Token = %q, %v", first, err)
	}
	if again, err := Token(ctx, s, "test.token"); err != nil || again != first {
		t.Fatalf("second Token = %q, %v; want %q", again, err, first)
	}
	if stored, err := s.Get(ctx, "test.token"); err != nil || stored != first {
		t.Fatalf("stored %q, %v", stored, err)
	}
	if err := s.Delete(ctx, "test.token"); err != nil {
		t.Fatal(err)
	}
	if next, err := Token(ctx, s, "test.token"); err != nil || next == first || len(next) < 32 {
		t.Fatalf("after delete Token = %q, %v; want a new one", next, err)
	}
}
