package ops

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
)

// JournalKeyName is the keyring entry (service "airlock") holding the journal's HMAC key.
const JournalKeyName = "ops.journal-hmac-key"

// SecretStore reads and writes named secrets; the app's secret stores (keyring, file) implement it.
type SecretStore interface {
	Get(ctx context.Context, name string) (string, error)
	Set(ctx context.Context, name, value string) error
}

// StoredKeySource is a [KeySource] over a [SecretStore]: it reads the key (base64url of
// 32 random bytes) and creates it the first time.
type StoredKeySource struct {
	Store SecretStore
	// Name is the secret's name; JournalKeyName when empty.
	Name string
	// IsNotFound says an error from Store.Get means "no such secret" (and so the key is
	// created), as opposed to a keyring that does not answer (an error).
	IsNotFound func(error) bool
	// Random is crypto/rand when nil.
	Random io.Reader
}

// JournalKey implements [KeySource].
func (k StoredKeySource) JournalKey(ctx context.Context) ([]byte, error) {
	name := k.Name
	if name == "" {
		name = JournalKeyName
	}
	v, err := k.Store.Get(ctx, name)
	if err != nil {
		if k.IsNotFound == nil || !k.IsNotFound(err) {
			return nil, fmt.Errorf("read the journal key %s: %w", name, err)
		}
		rnd := k.Random
		if rnd == nil {
			rnd = rand.Reader
		}
		raw := make([]byte, 32)
		if _, err := io.ReadFull(rnd, raw); err != nil {
			return nil, fmt.Errorf("create the journal key: %w", err)
		}
		if err := k.Store.Set(ctx, name, base64.RawURLEncoding.EncodeToString(raw)); err != nil {
			return nil, fmt.Errorf("store the journal key %s: %w", name, err)
		}
		// Read back: if another process created the key at the same moment, both use the
		// one that was stored last.
		if v, err = k.Store.Get(ctx, name); err != nil {
			return nil, fmt.Errorf("read the journal key %s back: %w", name, err)
		}
	}
	key, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("the journal key %s in the secret store is not 32+ bytes of base64url: restore it, or move the journal aside and delete the key to start a new one", name)
	}
	return key, nil
}

// JournalCounterName is the secret (next to the journal key) holding the journal's
// rollback counter: every project's newest head, HMAC'd under the journal key.
const JournalCounterName = "ops.journal-counter"

// HeadCounter is implemented by a [KeySource] that also keeps the journal's newest heads
// in its secret store, out of reach of a rewrite of the database and the anchor file: a
// saved head row and anchor file put back after later entries were deleted no longer
// verify (they are "rolled back").
type HeadCounter interface {
	// JournalCounter returns the stored counter, "" when there is none yet.
	JournalCounter(ctx context.Context) (string, error)
	// SetJournalCounter stores it.
	SetJournalCounter(ctx context.Context, v string) error
	// RetireJournalCounter keeps v (the counter of a journal set aside with its
	// database) under the retired name and clears the counter.
	RetireJournalCounter(ctx context.Context, v string) error
}

// RetiredCounterName is the secret that keeps the rollback counter of the journal last
// set aside with its database (the way out of a damaged one), as evidence.
const RetiredCounterName = JournalCounterName + ".retired"

// JournalCounter implements [HeadCounter].
func (k StoredKeySource) JournalCounter(ctx context.Context) (string, error) {
	v, err := k.Store.Get(ctx, k.counterName())
	if err != nil {
		if k.IsNotFound != nil && k.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("read the journal counter %s: %w", k.counterName(), err)
	}
	return v, nil
}

// SetJournalCounter implements [HeadCounter].
func (k StoredKeySource) SetJournalCounter(ctx context.Context, v string) error {
	if err := k.Store.Set(ctx, k.counterName(), v); err != nil {
		return fmt.Errorf("store the journal counter %s: %w", k.counterName(), err)
	}
	return nil
}

// RetireJournalCounter implements [HeadCounter].
func (k StoredKeySource) RetireJournalCounter(ctx context.Context, v string) error {
	if err := k.Store.Set(ctx, k.counterName()+".retired", v); err != nil {
		return fmt.Errorf("keep the retired journal counter: %w", err)
	}
	if err := k.Store.Set(ctx, k.counterName(), ""); err != nil {
		return fmt.Errorf("clear the journal counter %s: %w", k.counterName(), err)
	}
	return nil
}

func (k StoredKeySource) counterName() string {
	if k.Name == "" || k.Name == JournalKeyName {
		return JournalCounterName
	}
	return k.Name + ".counter"
}
