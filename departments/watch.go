package departments

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Reconcile checks every department's directory on disk and updates its status: missing
// when the directory was removed, renamed or replaced by something else, ok when it is back.
func (s *Service) Reconcile(ctx context.Context) error {
	deps, err := s.List(ctx)
	if err != nil {
		return err
	}
	for _, d := range deps {
		status, reason := StatusOK, ""
		res, exists, err := Resolve(d.Directory)
		switch {
		case err != nil:
			status, reason = StatusMissing, err.Error()
		case !exists:
			status, reason = StatusMissing, fmt.Sprintf("directory %s was removed or renamed", d.Directory)
		case res != d.Directory:
			status, reason = StatusMissing, fmt.Sprintf("directory %s is now a link to %s", d.Directory, res)
		default:
			if fi, err := os.Stat(res); err != nil || !fi.IsDir() {
				status, reason = StatusMissing, fmt.Sprintf("%s is no longer a directory", d.Directory)
			}
		}
		if status == d.Status && reason == d.StatusReason {
			continue
		}
		d.Status, d.StatusReason = status, reason
		if err := s.db.WithContext(ctx).Model(&Department{}).Where("id = ?", d.ID).
			Updates(map[string]any{"status": status, "status_reason": reason}).Error; err != nil {
			return fmt.Errorf("update department %s status: %w", d.Name, err)
		}
		slog.Info("department status changed", "department", d.Name, "status", status, "reason", reason)
		s.changed(d)
	}
	return nil
}

// Watch watches every department's directory (and its parent, to see it removed, renamed
// or recreated) with fsnotify until ctx ends, keeping each department's status current.
// poll is a safety net re-check interval for changes fsnotify cannot see (for example a
// grandparent removed and recreated); 0 means 30 s.
func (s *Service) Watch(ctx context.Context, poll time.Duration) error {
	if poll <= 0 {
		poll = 30 * time.Second
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch departments: %w", err)
	}
	defer w.Close()
	watched := map[string]bool{}
	rebuild := func() {
		if err := s.Reconcile(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("department reconcile failed", "err", err)
		}
		deps, err := s.List(ctx)
		if err != nil {
			return
		}
		want := map[string]bool{}
		for _, d := range deps {
			want[d.Directory] = true
			want[filepath.Dir(d.Directory)] = true
		}
		for p := range watched {
			if !want[p] {
				_ = w.Remove(p)
				delete(watched, p)
			}
		}
		for p := range want {
			if watched[p] {
				continue
			}
			if err := w.Add(p); err == nil {
				watched[p] = true
			}
		}
	}
	rebuild()
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				// A removed watch is dropped by fsnotify; forget it so it is added again.
				if watched[ev.Name] {
					delete(watched, ev.Name)
				}
			}
			if debounce == nil {
				debounce = time.After(50 * time.Millisecond)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			slog.Warn("department watch error", "err", err)
		case <-debounce:
			debounce = nil
			rebuild()
		case <-s.rewatch:
			rebuild()
		case <-ticker.C:
			rebuild()
		}
	}
}
