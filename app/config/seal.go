package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/airlock-app/airlock/app/secrets"
)

// The baseline (the configuration in force kept between starts) is a file any process
// of the user can write, as config.toml is: written together, the two would make a
// loosened file the configuration in force at the next start. So the core keeps the
// baseline's digest in the secret store, as the ops journal keeps its rollback
// counter there, and checks it at start (Store.Seal): a baseline that does not match
// its seal counts as the defaults, and what the file loosens waits for the person.

// SealName is the secret that seals the baseline at path: one per data directory, so
// two installations sharing a keyring keep their own.
func SealName(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	sum := sha256.Sum256([]byte(abs))
	return "config.in-force." + hex.EncodeToString(sum[:8])
}

// SealTimeout bounds each read or write of the seal: a secret store that does not
// answer by then counts as a seal that does not match (strict, never loose).
var SealTimeout = 3 * time.Second

func baselineSum(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Seal checks the baseline read at open against its seal in store, and from then on
// seals every baseline saved (a confirmation, the person's edits in the window, any
// reload). When the baseline does not match — edited outside Airlock, its seal
// missing while a baseline or the database exists, a seal with no baseline, or a store
// that does not answer within SealTimeout — the defaults stand in for it: what the
// file loosens waits for the person, and the view's pending message says why. It
// returns that reason ("" when the baseline holds). Call it once, before answers
// are decided.
func (s *Store) Seal(ctx context.Context, store secrets.Backend) string {
	if s.guard == nil || s.guard.readOnly || s.guard.Baseline == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, SealTimeout)
	defer cancel()
	name := SealName(s.guard.Baseline)
	why := ""
	answered := true
	got, err := store.Get(ctx, name)
	if err != nil && !errors.Is(err, secrets.ErrNotFound) && s.guard.FirstStart && s.baseSum == "" {
		// A new installation with nothing kept: the file is the person's own, and a
		// store that does not answer has no seal to contradict it (one that answers with
		// a seal says the database and the kept file were deleted).
		slog.Warn("the secret store did not answer at a first start: config.toml is taken as written, but unsealed, so the next start holds what it loosens for the person", "error", err)
		err = secrets.ErrNotFound
	}
	switch {
	case errors.Is(err, secrets.ErrNotFound) || err == nil && got == "":
		if s.baseSum != "" && !s.guard.FirstStart {
			why = fmt.Sprintf("the configuration in force kept between starts (%s) has no seal in the secret store (%s): it was not written by Airlock", s.guard.Baseline, store.Where())
		}
	case err != nil:
		answered = false
		why = fmt.Sprintf("the secret store (%s) did not answer for the seal of the configuration in force (%v)", store.Where(), err)
	case s.baseSum == "":
		why = fmt.Sprintf("the configuration in force kept between starts (%s) is missing, though the secret store holds its seal", s.guard.Baseline)
	case got != s.baseSum:
		why = fmt.Sprintf("the configuration in force kept between starts (%s) does not match its seal in the secret store: it was changed outside Airlock", s.guard.Baseline)
	}

	s.mu.Lock()
	s.sealer = store
	write := func() {}
	if why != "" {
		slog.Error("the configuration in force cannot be trusted; the defaults stand in for it, and what config.toml loosens waits for the person", "reason", why, "confirm", ConfirmCommand)
		s.why = why + "; the defaults stand in for it. "
		st := s.guarded(File{}, s.opened)
		st.Error = s.opened.Error
		if st.Pending == nil {
			s.why = ""
		}
		s.state = st
	}
	if answered {
		// A store that does not answer keeps the baseline file as it is, for a start
		// where it answers again (the person's confirmed values are not lost to it).
		write = s.saveBaseline()
	}
	s.mu.Unlock()
	write()
	return why
}

// writeSeal stores the digest of data, the baseline just written, in the secret store.
func (s *Store) writeSeal(store secrets.Backend, data []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), SealTimeout)
	defer cancel()
	if err := store.Set(ctx, SealName(s.guard.Baseline), baselineSum(data)); err != nil {
		// The next start then finds a seal that does not match: strict, not loose.
		slog.Error("seal the configuration in force in the secret store; at the next start the defaults stand in for it", "error", err)
	}
}

// SealStore is where the baseline's seal is kept: the keyring whenever it answers,
// whatever `[secrets] store` says, and chosen (the configured store) only where the
// keyring does not answer. The store is chosen by the very configuration the seal
// vouches for: a script that rewrote config.toml and the baseline to the file store
// could otherwise forge the seal in a file it can write. Seals are written to both, so
// a machine whose keyring comes and goes keeps a seal in each.
func SealStore(chosen, keyring secrets.Backend) secrets.Backend {
	if chosen == nil || chosen.Kind() == secrets.KindKeyring || keyring == nil {
		return chosen
	}
	return sealStore{Backend: chosen, keyring: keyring}
}

type sealStore struct {
	secrets.Backend // the configured store: Set, Delete, Check, Kind as it does
	keyring         secrets.Backend
}

func keyringAway(err error) bool {
	var ue *secrets.UnavailableError
	return errors.As(err, &ue)
}

// Get reads the keyring's seal when the keyring answers (a seal it lacks is missing,
// not looked for elsewhere), else the configured store's.
func (s sealStore) Get(ctx context.Context, name string) (string, error) {
	kctx, cancel := context.WithTimeout(ctx, SealTimeout/3) // room left for the chosen store
	defer cancel()
	v, err := s.keyring.Get(kctx, name)
	if err == nil || !keyringAway(err) {
		return v, err
	}
	return s.Backend.Get(ctx, name)
}

// Set writes the seal to the keyring when it answers and to the configured store.
func (s sealStore) Set(ctx context.Context, name, value string) error {
	kctx, cancel := context.WithTimeout(ctx, SealTimeout/3)
	defer cancel()
	if err := s.keyring.Set(kctx, name, value); err != nil && !keyringAway(err) {
		return err
	}
	return s.Backend.Set(ctx, name, value)
}

// Where names both stores.
func (s sealStore) Where() string {
	return s.keyring.Where() + " (else " + s.Backend.Where() + ")"
}
