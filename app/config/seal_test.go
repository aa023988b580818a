package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/app/secrets"
)

// fakeSealer is a secret store in memory; hang makes it answer nothing until the
// caller gives up, fail makes it answer an error.
type fakeSealer struct {
	secrets.Backend // the methods the seal does not use panic
	mu              sync.Mutex
	m               map[string]string
	hang            bool
	fail            error
}

func (f *fakeSealer) Get(ctx context.Context, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hang {
		<-ctx.Done()
		return "", &secrets.UnavailableError{Err: ctx.Err()}
	}
	if f.fail != nil {
		return "", f.fail
	}
	v, ok := f.m[name]
	if !ok {
		return "", secrets.ErrNotFound
	}
	return v, nil
}

func (f *fakeSealer) Set(ctx context.Context, name, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hang {
		<-ctx.Done()
		return &secrets.UnavailableError{Err: ctx.Err()}
	}
	if f.fail != nil {
		return f.fail
	}
	f.m[name] = value
	return nil
}

func (f *fakeSealer) Where() string { return "the fake store" }

const ttyFile = "[approvals]\nterminal_proof = \"tty\"\n"

func proof(s *Store) string {
	if p := s.State().File.Approvals.TerminalProof; p != nil {
		return *p
	}
	return "os"
}

// sealedStart is one start of the core over dir: open, then seal with store.
func sealedStart(t *testing.T, dir string, firstStart bool, store *fakeSealer) (*Store, string) {
	t.Helper()
	s, err := OpenGuarded(filepath.Join(dir, "config.toml"), Guard{Baseline: filepath.Join(dir, "config.in-force.json"), FirstStart: firstStart, Sealed: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, s.Seal(context.Background(), store)
}

// The seal at start: a baseline Airlock wrote and sealed holds; one rewritten outside
// Airlock, one whose seal is gone, a seal whose baseline is gone, and a store that does
// not answer all count as the defaults, so the file's tty proof waits, and says why.
func TestSealedBaseline(t *testing.T) {
	old := SealTimeout
	SealTimeout = 200 * time.Millisecond
	t.Cleanup(func() { SealTimeout = old })
	for _, tt := range []struct {
		name   string
		attack func(t *testing.T, dir string, store *fakeSealer)
		first  bool   // the next start finds no database
		want   string // the proof in force
		why    string // in the pending message ("" none)
	}{
		{"untouched", func(*testing.T, string, *fakeSealer) {}, false, "tty", ""},
		{"rewritten", func(t *testing.T, dir string, _ *fakeSealer) {
			write(t, filepath.Join(dir, "config.in-force.json"), `{"approvals":{"terminal_proof":"tty","pam_service":"su"}}`)
		}, false, "os", "outside Airlock"},
		{"the seal is gone", func(_ *testing.T, _ string, store *fakeSealer) { clear(store.m) }, false, "os", "no seal"},
		{"the seal is gone, no database", func(_ *testing.T, _ string, store *fakeSealer) { clear(store.m) }, true, "tty", ""},
		{"the baseline is gone", func(t *testing.T, dir string, _ *fakeSealer) {
			os.Remove(filepath.Join(dir, "config.in-force.json"))
		}, false, "os", "missing"},
		{"the baseline and the database are gone", func(t *testing.T, dir string, _ *fakeSealer) {
			os.Remove(filepath.Join(dir, "config.in-force.json"))
		}, true, "os", "missing"},
		{"the store does not answer", func(_ *testing.T, _ string, store *fakeSealer) { store.hang = true }, false, "os", "did not answer"},
		{"the store fails", func(_ *testing.T, _ string, store *fakeSealer) { store.fail = errors.New("locked") }, false, "os", "did not answer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			store := &fakeSealer{m: map[string]string{}}
			// A new installation takes the person's file, and seals it.
			write(t, filepath.Join(dir, "config.toml"), ttyFile)
			s, why := sealedStart(t, dir, true, store)
			if proof(s) != "tty" || why != "" || len(store.m) != 1 {
				t.Fatalf("first start: %s %q %v", proof(s), why, store.m)
			}
			tt.attack(t, dir, store)
			start := time.Now()
			s, why = sealedStart(t, dir, tt.first, store)
			if time.Since(start) > 2*time.Second {
				t.Fatalf("the start waited %s for the store", time.Since(start))
			}
			if proof(s) != tt.want || !strings.Contains(why, tt.why) || tt.why == "" && why != "" {
				t.Fatalf("proof %s, why %q", proof(s), why)
			}
			p := s.State().Pending
			if tt.why == "" {
				if p != nil {
					t.Fatalf("spurious waiting: %+v", p)
				}
				return
			}
			if p == nil || !strings.Contains(p.Message, tt.why) || !strings.Contains(p.Message, ConfirmCommand) {
				t.Fatalf("pending %+v", p)
			}
			if store.hang || store.fail != nil {
				return
			}
			// The person confirms: in force, re-sealed, and the next start keeps it.
			if _, err := s.Confirm(p.Digest); err != nil {
				t.Fatal(err)
			}
			s, why = sealedStart(t, dir, false, store)
			if proof(s) != "tty" || why != "" || s.State().Pending != nil {
				t.Fatalf("after the confirmation: %s %q %+v", proof(s), why, s.State().Pending)
			}
		})
	}
}

// A store that does not answer at start leaves the kept baseline as it was, so the
// person's confirmed values come back at a start where it answers; and the core's
// guard writes no baseline before the seal was checked.
func TestSealKeepsTheBaselineWhileTheStoreIsAway(t *testing.T) {
	old := SealTimeout
	SealTimeout = 100 * time.Millisecond
	t.Cleanup(func() { SealTimeout = old })
	dir := t.TempDir()
	store := &fakeSealer{m: map[string]string{}}
	write(t, filepath.Join(dir, "config.toml"), ttyFile)
	sealedStart(t, dir, true, store)
	kept, _ := os.ReadFile(filepath.Join(dir, "config.in-force.json"))

	write(t, filepath.Join(dir, "config.toml"), "") // tightened while stopped
	if _, err := OpenGuarded(filepath.Join(dir, "config.toml"), Guard{Baseline: filepath.Join(dir, "config.in-force.json"), Sealed: true}, nil); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "config.in-force.json")); string(now) != string(kept) {
		t.Fatalf("the baseline was rewritten before its seal was checked: %s", now)
	}
	write(t, filepath.Join(dir, "config.toml"), ttyFile)
	store.hang = true
	if s, why := sealedStart(t, dir, false, store); proof(s) != "os" || why == "" {
		t.Fatalf("a store that does not answer: %s %q", proof(s), why)
	}
	store.hang = false
	if s, why := sealedStart(t, dir, false, store); proof(s) != "tty" || why != "" {
		t.Fatalf("once the store answers again: %s %q", proof(s), why)
	}
}

// The person's edits (ReloadBy) and any reload re-seal the baseline.
func TestReloadReseals(t *testing.T) {
	dir := t.TempDir()
	store := &fakeSealer{m: map[string]string{}}
	write(t, filepath.Join(dir, "config.toml"), "")
	s, _ := sealedStart(t, dir, true, store)
	write(t, filepath.Join(dir, "config.toml"), ttyFile)
	if st := s.ReloadBy("approvals.terminal_proof"); st.Pending != nil || proof(s) != "tty" {
		t.Fatalf("the person's edit: %+v", st.Pending)
	}
	if s, why := sealedStart(t, dir, false, store); proof(s) != "tty" || why != "" {
		t.Fatalf("after the person's edit: %s %q", proof(s), why)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
