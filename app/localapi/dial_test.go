package localapi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// When nothing answers on the socket, the client says what it found there and whether a
// core holds the instance lock, instead of "no core runs" while one does.
func TestDialSaysWhatItFound(t *testing.T) {
	for _, tc := range []struct {
		name       string
		file       bool // a regular file where the socket should be
		locked     bool // a core holds the instance lock
		notRunning bool // *NotRunningError (else *UnreachableError)
		says       []string
	}{
		{name: "nothing there", notRunning: true, says: []string{"no Airlock app or daemon is running"}},
		{name: "a file, no core", file: true, notRunning: true, says: []string{"move", "a regular file, not a socket"}},
		{name: "a file, a core runs", file: true, locked: true, says: []string{"an Airlock core runs (pid", "is a regular file, not its socket", "kill -TERM"}},
		{name: "no socket yet, a core runs", locked: true, says: []string{"does not answer", "still be starting"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(dir, "airlock.sock")
			if tc.file {
				if err := os.WriteFile(sock, []byte("not a socket\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.locked {
				l, err := Acquire(sock)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Release()
			}
			_, err := Call(context.Background(), NewClient(sock), api.GetStatus, api.None{})
			var nr *NotRunningError
			var ur *UnreachableError
			switch {
			case tc.notRunning && !errors.As(err, &nr):
				t.Fatalf("err = %v (%T), want *NotRunningError", err, err)
			case !tc.notRunning && !errors.As(err, &ur):
				t.Fatalf("err = %v (%T), want *UnreachableError", err, err)
			case !tc.notRunning && ur.PID != os.Getpid():
				t.Fatalf("pid %d, want the lock holder's %d", ur.PID, os.Getpid())
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
		})
	}
}
