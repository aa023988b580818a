// Package secrets keeps named secrets (the ops journal's key, the API token, the
// secrets injected into runs) in one of two stores, chosen by `[secrets] store` in
// config.toml:
//
//   - "keyring", the default: the OS keyring (Secret Service on Linux, Keychain on
//     macOS) under the service "airlock" ([Store]);
//   - "file": a 0600 file in a 0700 directory under the data directory, for a machine
//     without a Secret Service, such as a headless `airlock daemon` ([FileStore]).
//
// The file store is only ever an explicit choice: when the keyring does not answer,
// the keyring store fails with an [UnavailableError] that names both ways out, and
// nothing falls back to a file.
package secrets

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/zalando/go-keyring"

	"github.com/airlock-app/airlock/sandbox/lazyre"
)

// Service is the keyring service name every Airlock secret is stored under.
const Service = "airlock"

// ErrNotFound is returned for a name with no stored value.
var ErrNotFound = errors.New("no such secret")

// UnavailableError says the keyring could not be reached, and how to fix that.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("the OS keyring is not available (%v): start a Secret Service such as gnome-keyring "+
		"(`gnome-keyring-daemon --start --components=secrets`, or log in to a desktop session) and try again, "+
		"or, on a machine without one (a headless daemon, CI), choose the file store: add `[secrets]` with "+
		"`store = \"file\"` to config.toml, which keeps secrets in a 0600 file under the data directory; "+
		"Airlock never switches to the file by itself", e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

var validName = lazyre.New(`^[A-Za-z0-9_.:-]{1,128}$`)

// Kind names a secret store: the value of `[secrets] store`.
type Kind string

// The stores.
const (
	KindKeyring Kind = "keyring"
	KindFile    Kind = "file"
)

// Kinds lists the stores, the default first.
var Kinds = []Kind{KindKeyring, KindFile}

// Backend is a secret store.
type Backend interface {
	Get(ctx context.Context, name string) (string, error)
	Set(ctx context.Context, name, value string) error
	Delete(ctx context.Context, name string) error
	// Check reports whether the store answers.
	Check(ctx context.Context) error
	Kind() Kind
	// Where says where the secrets are, for people: the keyring's service or the file.
	Where() string
}

// Open returns the store of that kind; "" is the keyring. dataDir is the data
// directory the file store lives under.
func Open(kind Kind, dataDir string) (Backend, error) {
	switch kind {
	case "", KindKeyring:
		return New(), nil
	case KindFile:
		return NewFileStore(dataDir), nil
	}
	return nil, fmt.Errorf("secret store %q: use \"keyring\" (the OS keyring) or \"file\" (a 0600 file under the data directory)", kind)
}

// Store reads and writes secrets in the keyring.
type Store struct {
	service string
}

// New returns the store for the "airlock" service.
func New() *Store { return &Store{service: Service} }

// Kind is KindKeyring.
func (s *Store) Kind() Kind { return KindKeyring }

// Where names the keyring service.
func (s *Store) Where() string { return "the OS keyring, service " + s.service }

// NewForService returns a store for another service name (tests keep their own).
func NewForService(service string) *Store { return &Store{service: service} }

func checkName(name string) error {
	if !validName().MatchString(name) {
		return fmt.Errorf("secret name %q: use 1 to 128 letters, digits, '_', '-', '.' or ':'", name)
	}
	return nil
}

// Set stores value under name.
func (s *Store) Set(ctx context.Context, name, value string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := run(ctx, func() error { return keyring.Set(s.service, name, value) }); err != nil {
		return fmt.Errorf("store secret %s: %w", name, classify(err))
	}
	return nil
}

// Get returns the value stored under name.
func (s *Store) Get(ctx context.Context, name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	var v string
	err := run(ctx, func() error {
		var err error
		v, err = keyring.Get(s.service, name)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("read secret %s: %w", name, classify(err))
	}
	return v, nil
}

// Delete removes name; deleting a missing secret is ErrNotFound.
func (s *Store) Delete(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := run(ctx, func() error { return keyring.Delete(s.service, name) }); err != nil {
		return fmt.Errorf("delete secret %s: %w", name, classify(err))
	}
	return nil
}

// Check reports whether the keyring answers, by reading a name that need not exist.
func (s *Store) Check(ctx context.Context) error {
	_, err := s.Get(ctx, "airlock.probe")
	if err == nil || errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// run calls f, giving up when ctx ends: a hung Secret Service must not hang Airlock.
func run(ctx context.Context, f func() error) error {
	if sessionBusMissing(os.Getenv) {
		return &UnavailableError{Err: errNoSessionBus}
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return &UnavailableError{Err: fmt.Errorf("no answer: %w", ctx.Err())}
	}
}

func classify(err error) error {
	if errors.Is(err, keyring.ErrNotFound) {
		return ErrNotFound
	}
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return err
	}
	msg := err.Error()
	for _, sign := range []string{"org.freedesktop.secrets", "dbus", "DBUS", "connection", "ServiceUnknown", "no such file", "unlock", "not provided by any"} {
		if strings.Contains(msg, sign) {
			return &UnavailableError{Err: err}
		}
	}
	return err
}

// Token returns the bearer token stored under name, minting one (32 random bytes,
// base64url) the first time: the loopback API's token and `airlock mcp --http`'s are
// kept this way, so a client configured once keeps working across restarts.
func Token(ctx context.Context, s Backend, name string) (string, error) {
	tok, err := s.Get(ctx, name)
	if err == nil {
		return tok, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("mint token %s: %w", name, err)
	}
	tok = base64.RawURLEncoding.EncodeToString(buf)
	if err := s.Set(ctx, name, tok); err != nil {
		return "", err
	}
	return tok, nil
}
