package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
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
}

// Store keeps the last good configuration and reloads it when the file changes.
type Store struct {
	path     string
	onChange func(State)

	mu    sync.RWMutex
	state State
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

func (s *Store) read(lastGood File) State {
	st := State{Path: s.path, LoadedAt: time.Now(), File: lastGood}
	info, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		st.File = File{}
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
func (s *Store) Reload() State {
	s.mu.Lock()
	st := s.read(s.state.File)
	if st.Error != nil {
		slog.Error("config.toml is broken; keeping the last good configuration", "error", st.Error)
	} else {
		slog.Info("config.toml reloaded", "path", s.path)
	}
	s.state = st
	s.mu.Unlock()
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
func OpenWith(path string, lastGood File, err *Error, onChange func(State)) (*Store, error) {
	s := &Store{path: path, onChange: onChange}
	s.state = State{Path: path, Exists: true, LoadedAt: time.Now(), File: lastGood, Error: err}
	return s, nil
}
