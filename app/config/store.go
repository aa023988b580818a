package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/secrets"
)

// maxFileSize bounds what is read: a config file larger than this is a mistake.
const maxFileSize = 4 << 20

// State is what the store holds: the configuration in force and the last load's error.
type State struct {
	File     File      `json:"-"`
	Path     string    `json:"path"`
	Exists   bool      `json:"exists"`
	LoadedAt time.Time `json:"loaded_at"`
	// Error is set when the file on disk is broken: File is then the last good one.
	Error *Error `json:"error,omitempty"`
	// Pending is set when the file on disk loosens the answer path: File then keeps
	// those keys at their values in force until the person confirms (Store.Confirm).
	Pending *api.ConfigPending `json:"pending,omitempty"`
}

// Guard makes a store hold what loosens the answer path (guard.go) for the person.
type Guard struct {
	// Baseline is where the configuration in force is kept between starts (JSON, 0600),
	// so a file loosened while Airlock was stopped waits too.
	Baseline string
	// FirstStart takes the file as it is when there is no baseline yet (a new
	// installation); otherwise a missing baseline counts as the defaults.
	FirstStart bool
	// Sealed: the baseline's digest is kept in the secret store (Store.Seal), since any
	// process of the user can write the baseline file too. Until Seal has checked it,
	// the baseline is not rewritten.
	Sealed bool
	// readOnly never writes the baseline (ReadInForce: a client reads it only).
	readOnly bool
}

// GuardAt is the guard of the core whose data directory is dataDir and whose database
// is database: the baseline lives beside it, and a new installation (no database yet)
// takes the file as the person wrote it.
func GuardAt(dataDir, database string) Guard {
	_, err := os.Stat(database)
	return Guard{Baseline: filepath.Join(dataDir, "config.in-force.json"), FirstStart: errors.Is(err, fs.ErrNotExist), Sealed: true}
}

// ReadInForce reads config.toml as the core takes it under g: what loosens the answer
// path against the configuration in force waits, so a command that resolves the policy
// itself (airlock exec) takes the same values as the core. A broken file is an *Error.
//
// It does not check the baseline's seal in the secret store (that would put a keyring
// round trip on airlock exec's fast path): a baseline edited outside Airlock can make a
// command loosen its own run, which the command's user could do anyway, but never an
// answer — the core checks the seal at start (Store.Seal) and decides every answer.
func ReadInForce(path string, g Guard) (State, error) {
	g.readOnly = true
	s, err := OpenGuarded(path, g, nil)
	if err != nil {
		return State{}, err
	}
	return s.State(), nil
}

// ConfirmCommand is how a person confirms a waiting change at a terminal.
const ConfirmCommand = "airlock config confirm"

// Errors of Confirm.
var (
	// ErrNothingPending: no change of config.toml waits.
	ErrNothingPending = errors.New("no change of config.toml waits for confirmation")
	// ErrPendingChanged: the file changed since the digest confirmed was shown.
	ErrPendingChanged = errors.New("config.toml changed since that confirmation was asked")
)

// Store keeps the last good configuration and reloads it when the file changes.
type Store struct {
	path     string
	onChange func(State)
	guard    *Guard

	mu      sync.RWMutex
	state   State
	pending File   // the file on disk while State.Pending is set
	digest  string // of the file last read

	// The seal (seal.go): opened is the file as read at open, before the guard, and
	// baseSum the digest of the baseline then ("" none), for Seal to check; sealer is
	// the secret store every save re-seals in once Seal ran; why says why the defaults
	// stand in for the baseline while that change waits.
	opened  State
	baseSum string
	sealer  secrets.Backend
	why     string
	// saves: each save is numbered under mu and written under saveMu, outside mu (a
	// secret store may be slow), the newest winning.
	saveMu           sync.Mutex
	saveGen, written uint64
}

// Open reads path once. A missing file means defaults; a broken file at start-up is
// an error, since there is no last good configuration to keep.
func Open(path string, onChange func(State)) (*Store, error) {
	s := &Store{path: path, onChange: onChange}
	st := s.read(File{})
	if st.Error != nil {
		return nil, st.Error
	}
	s.state = st
	return s, nil
}

// State returns the configuration in force.
func (s *Store) State() State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.state
}

// OpenGuarded is Open for the core: what the file loosens against the baseline (the
// configuration in force when Airlock last ran) waits for the person.
func OpenGuarded(path string, g Guard, onChange func(State)) (*Store, error) {
	s := &Store{path: path, onChange: onChange, guard: &g}
	st := s.read(File{})
	if st.Error != nil {
		return nil, st.Error
	}
	s.opened = st
	s.state = s.guarded(s.baseline(st.File), st)
	s.saveBaseline()()
	return s, nil
}

// baseline is the configuration in force at the last run (disk: the file now, taken
// on a first start).
func (s *Store) baseline(disk File) File {
	data, err := os.ReadFile(s.guard.Baseline)
	if err == nil {
		s.baseSum = baselineSum(data)
		var f File
		if json.Unmarshal(data, &f) == nil {
			return f
		}
		slog.Error("the configuration in force at the last start cannot be read; the defaults stand in for it", "path", s.guard.Baseline)
		return File{}
	}
	if errors.Is(err, fs.ErrNotExist) && s.guard.FirstStart {
		return disk
	}
	return File{}
}

// saveBaseline keeps the configuration in force for the next start, and its seal in
// the secret store once Seal ran. Call it with mu held (or before the store is shared);
// the write itself happens in the returned func, to be called once mu is released.
func (s *Store) saveBaseline() (write func()) {
	if s.guard == nil || s.guard.Baseline == "" || s.guard.readOnly || s.guard.Sealed && s.sealer == nil {
		return func() {}
	}
	data, err := json.Marshal(s.state.File)
	if err != nil {
		slog.Error("keep the configuration in force", "error", err)
		return func() {}
	}
	s.saveGen++
	gen, sealer := s.saveGen, s.sealer
	return func() {
		s.saveMu.Lock()
		defer s.saveMu.Unlock()
		if gen <= s.written {
			return // a newer save was written first
		}
		s.written = gen
		tmp := s.guard.Baseline + ".tmp"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			slog.Error("keep the configuration in force", "error", err)
			return
		}
		if err := os.Rename(tmp, s.guard.Baseline); err != nil {
			slog.Error("keep the configuration in force", "error", err)
			return
		}
		if sealer != nil {
			s.writeSeal(sealer, data)
		}
	}
}

// guarded is st (read from disk) against cur, the configuration in force: what
// loosens the answer path keeps its value in cur and waits.
// The keys of allowed (set by the person, as the window does) take effect loosened.
func (s *Store) guarded(cur File, st State, allowed ...string) State {
	s.pending = File{}
	if s.guard == nil || st.Error != nil {
		return st
	}
	keys := slices.DeleteFunc(Loosened(cur, st.File), func(g string) bool {
		return slices.ContainsFunc(allowed, func(k string) bool { return k == g || strings.HasPrefix(k, g+".") })
	})
	if len(keys) == 0 {
		return st
	}
	f := Hold(cur, st.File, keys)
	s.pending = st.File
	st.File = f
	st.Pending = &api.ConfigPending{Keys: keys, Digest: s.digest, Since: st.LoadedAt,
		Message: s.why + fmt.Sprintf("config.toml loosens %s: the values in force stay until you confirm the change in the Airlock window or with `%s` at a terminal (your login password)", strings.Join(keys, ", "), ConfirmCommand)}
	if !s.guard.readOnly { // a command reading it (ReadInForce) says so itself, if at all
		slog.Warn("config.toml loosens the answer path; it waits for the person", "keys", keys)
	}
	return st
}

// Confirm takes the waiting file into force, as the person confirmed it: digest names
// the file they saw ("" takes what waits now). Call it only for a person's act.
func (s *Store) Confirm(digest string) (State, error) {
	s.mu.Lock()
	st := s.state
	if st.Pending == nil {
		s.mu.Unlock()
		return st, ErrNothingPending
	}
	if digest != "" && digest != st.Pending.Digest {
		s.mu.Unlock()
		return st, fmt.Errorf("%w: look again (`airlock status`) and confirm what waits now", ErrPendingChanged)
	}
	slog.Warn("a looser config.toml was confirmed by the person", "keys", st.Pending.Keys)
	st.File, st.Pending, st.LoadedAt = s.pending, nil, time.Now()
	s.pending, s.why = File{}, ""
	s.state = st
	write := s.saveBaseline()
	s.mu.Unlock()
	write()
	if s.onChange != nil {
		s.onChange(st)
	}
	return st, nil
}

// PendingFile is the waiting file and its digest (ok false: nothing waits), for
// checks made before it is confirmed (Confirm that digest then).
func (s *Store) PendingFile() (f File, digest string, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.state.Pending == nil {
		return File{}, "", false
	}
	return s.pending, s.state.Pending.Digest, true
}

func (s *Store) read(lastGood File) State {
	st := State{Path: s.path, LoadedAt: time.Now(), File: lastGood}
	info, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		st.File = File{}
		s.digest = "absent"
		return st
	}
	if err == nil && info.Size() > maxFileSize {
		st.Exists = true
		st.Error = &Error{Path: s.path, Problems: []Problem{{Message: fmt.Sprintf("the file is %d bytes, over the %d-byte limit for a config file: is it the right file?", info.Size(), maxFileSize)}}}
		return st
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		st.Exists = true
		st.Error = &Error{Path: s.path, Problems: []Problem{{Message: fmt.Sprintf("cannot read it: %v", err)}}}
		return st
	}
	st.Exists = true
	sum := sha256.Sum256(data)
	s.digest = hex.EncodeToString(sum[:])
	f, err := Parse(s.path, data)
	if err != nil {
		var ce *Error
		if !errors.As(err, &ce) {
			ce = &Error{Path: s.path, Problems: []Problem{{Message: err.Error()}}}
		}
		st.Error = ce
		return st
	}
	st.File = f
	return st
}

// Reload reads the file again. On a broken file it keeps the last good configuration
// and records the error.
func (s *Store) Reload() State { return s.ReloadBy() }

// ReloadBy is Reload after the person wrote keys (the window's settings): those take
// effect even where they loosen; any other looser key still waits.
func (s *Store) ReloadBy(keys ...string) State {
	s.mu.Lock()
	st := s.guarded(s.state.File, s.read(s.state.File), keys...)
	if st.Error != nil {
		slog.Error("config.toml is broken; keeping the last good configuration", "error", st.Error)
	} else {
		slog.Info("config.toml reloaded", "path", s.path)
	}
	s.state = st
	write := func() {}
	if st.Error == nil {
		if st.Pending == nil {
			s.why = ""
		}
		write = s.saveBaseline()
	}
	s.mu.Unlock()
	write()
	if s.onChange != nil {
		s.onChange(st)
	}
	return st
}

// Watch reloads on every change of the file until ctx ends. It watches the directory,
// since editors replace files by renaming.
func (s *Store) Watch(ctx context.Context) error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", s.path, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	go func() {
		defer w.Close()
		// Editors write in several steps: settle briefly before reading.
		var timer *time.Timer
		fire := make(chan struct{}, 1)
		settle := func(d time.Duration) {
			if timer != nil {
				timer.Stop()
			}
			timer = time.AfterFunc(d, func() {
				select {
				case fire <- struct{}{}:
				default:
				}
			})
		}
		// An empty file is most often one being rewritten in place (truncate, then
		// write): read it once more a little later before taking it for the person's.
		emptyOnce := false
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) != filepath.Clean(s.path) {
					continue
				}
				settle(100 * time.Millisecond)
			case <-fire:
				if fi, err := os.Stat(s.path); err == nil && fi.Size() == 0 && !emptyOnce {
					emptyOnce = true
					settle(400 * time.Millisecond)
					continue
				}
				emptyOnce = false
				s.Reload()
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				slog.Warn("watching config.toml", "error", err)
			}
		}
	}()
	return nil
}

// OpenWith starts a store on lastGood because the file is broken (err): the error is
// reported in State until the file is fixed.
// With a guard, the last good copy is held against the baseline as the file would be.
func OpenWith(path string, lastGood File, err *Error, onChange func(State), g *Guard) (*Store, error) {
	s := &Store{path: path, onChange: onChange, guard: g}
	st := State{Path: path, Exists: true, LoadedAt: time.Now(), File: lastGood}
	if g != nil {
		s.digest = "last-good"
		s.opened = st
		st = s.guarded(s.baseline(lastGood), st)
	}
	st.Error = err
	s.opened.Error = err
	s.state = st
	s.saveBaseline()()
	return s, nil
}
