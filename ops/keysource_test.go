package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

// goKeyring adapts github.com/zalando/go-keyring to SecretStore, as the app's keyring store does.
type goKeyring struct{ service string }

func (g goKeyring) Get(_ context.Context, name string) (string, error) {
	return keyring.Get(g.service, name)
}
func (g goKeyring) Set(_ context.Context, name, v string) error {
	return keyring.Set(g.service, name, v)
}

// memStore is an in-memory SecretStore.
type memStore map[string]string

var errNoSecret = errors.New("no such secret")

func (m memStore) Get(_ context.Context, name string) (string, error) {
	v, ok := m[name]
	if !ok {
		return "", errNoSecret
	}
	return v, nil
}

func (m memStore) Set(_ context.Context, name, v string) error { m[name] = v; return nil }

func TestStoredKeySourceCreatesOnceThenReuses(t *testing.T) {
	store := memStore{}
	ks := StoredKeySource{Store: store, IsNotFound: func(err error) bool { return errors.Is(err, errNoSecret) }}
	k1, err := ks.JournalKey(context.Background())
	if err != nil || len(k1) != 32 {
		t.Fatalf("first key: %d bytes, %v", len(k1), err)
	}
	k2, err := ks.JournalKey(context.Background())
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatal("the key changed between calls")
	}
	store[JournalKeyName] = "not base64!"
	if _, err := ks.JournalKey(context.Background()); err == nil {
		t.Fatal("a corrupt key was accepted")
	}
	broken := StoredKeySource{Store: memStore{}} // no IsNotFound: a missing key is an error, not a new key
	if _, err := broken.JournalKey(context.Background()); err == nil {
		t.Fatal("an unreadable keyring created a key")
	}
}

// TestJournalKeyInTheRealKeyring keeps the journal key in the real Secret Service (make
// test runs the tests under dbus-run-session with an unlocked gnome-keyring).
func TestJournalKeyInTheRealKeyring(t *testing.T) {
	service := fmt.Sprintf("airlock-test-ops-%d", os.Getpid())
	probe := make(chan error, 1)
	go func() { _, err := keyring.Get(service, "probe"); probe <- err }()
	select {
	case err := <-probe:
		if err != nil && !errors.Is(err, keyring.ErrNotFound) {
			if os.Getenv("AIRLOCK_REQUIRE_KEYRING") == "1" {
				t.Fatalf("the keyring is required here but: %v", err)
			}
			t.Skipf("no Secret Service answers on this session bus (run under `make test`, which starts one): %v", err)
		}
	case <-time.After(10 * time.Second):
		if os.Getenv("AIRLOCK_REQUIRE_KEYRING") == "1" {
			t.Fatal("the keyring is required here but did not answer in 10s")
		}
		t.Skip("no Secret Service answered within 10s (run under `make test`)")
	}
	t.Cleanup(func() { _ = keyring.Delete(service, JournalKeyName) })

	ks := StoredKeySource{Store: goKeyring{service: service}, IsNotFound: func(err error) bool { return errors.Is(err, keyring.ErrNotFound) }}
	e := newEnv(t)
	svc, err := New(Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: ks})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.appendJournal(context.Background(), journalRecord{Project: tamperProject, Event: EventPlanned}); err != nil {
		t.Fatal(err)
	}
	stored, err := keyring.Get(service, JournalKeyName)
	if err != nil || stored == "" {
		t.Fatalf("the key is not in the keyring: %v", err)
	}
	// A restarted service reads the same key from the keyring and verifies the journal.
	again, _ := New(Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: ks})
	rep, err := again.VerifyJournal(context.Background(), tamperProject)
	if err != nil || !rep.OK {
		t.Fatalf("verify with the keyring key: %+v %v", rep, err)
	}
	// Replacing the key in the keyring makes every entry fail to authenticate.
	if err := keyring.Delete(service, JournalKeyName); err != nil {
		t.Fatal(err)
	}
	third, _ := New(Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: ks})
	rep, _ = third.VerifyJournal(context.Background(), tamperProject)
	keyProblem := false
	for _, p := range rep.Problems {
		keyProblem = keyProblem || p.Kind == ProblemKey
	}
	if rep.OK || !keyProblem {
		t.Fatalf("journal under a new key: %+v", rep)
	}
}
