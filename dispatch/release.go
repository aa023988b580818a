package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/departments"
)

// AuthorizeResult is what Authorize did: the place and the runs it released (the wire's
// type).
type AuthorizeResult = api.Authorization

// Authorize records dir as a place the person authorized (by says who) and releases, at
// once, every run waiting on that directory or below it — and only those. `/`, the home
// directory and its ancestors need confirmHome (*departments.ConfirmationRequiredError).
func (d *Dispatcher) Authorize(ctx context.Context, dir, by string, confirmHome bool) (AuthorizeResult, error) {
	pl, err := d.depts.Authorize(ctx, dir, by, confirmHome)
	if err != nil {
		return AuthorizeResult{}, err
	}
	ids, err := d.Release(ctx, pl.Path, "", fmt.Sprintf("released: %s was authorized by %s", pl.Path, pl.By))
	if err != nil {
		return AuthorizeResult{Place: &pl, Path: pl.Path, Released: []uint{}}, err
	}
	if ids == nil {
		ids = []uint{}
	}
	return AuthorizeResult{Place: &pl, Path: pl.Path, Released: ids}, nil
}

// Revoke withdraws an authorized place; future runs there are held again.
func (d *Dispatcher) Revoke(ctx context.Context, dir, by string) (departments.AuthorizedPlace, error) {
	pl, err := d.depts.Revoke(ctx, dir, by)
	if err == nil {
		d.inboxChanged()
	}
	return pl, err
}

// Release re-queues the runs waiting on dir or below it (dir resolved), and those waiting
// for department dept, and starts them through the gate again (which holds them again if
// they still may not start). It returns their ids.
func (d *Dispatcher) Release(ctx context.Context, dir, dept, reason string) ([]uint, error) {
	q := d.db.WithContext(ctx).Model(&Run{}).Where("status = ?", StatusWaitingDirectory)
	switch {
	case dir == "/" && dept != "":
		q = q.Where("waiting_dir <> '' OR waiting_dept = ?", dept)
	case dir == "/":
		q = q.Where("waiting_dir <> ''")
	case dir != "" && dept != "":
		q = q.Where("waiting_dir = ? OR substr(waiting_dir, 1, ?) = ? OR waiting_dept = ?", dir, len(dir)+1, dir+"/", dept)
	case dir != "":
		q = q.Where("waiting_dir = ? OR substr(waiting_dir, 1, ?) = ?", dir, len(dir)+1, dir+"/")
	case dept != "":
		q = q.Where("waiting_dept = ?", dept)
	default:
		return nil, nil
	}
	var held []Run
	if err := q.Order("id").Select("id", "task_id", "task_name").Find(&held).Error; err != nil {
		return nil, fmt.Errorf("release %s: %w", dir, err)
	}
	ids := make([]uint, len(held))
	for i, r := range held {
		ids[i] = r.ID
	}
	var released []uint
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		res := d.db.WithContext(ctx).Model(&Run{}).Where("id IN ? AND status = ?", chunk, StatusWaitingDirectory).
			Updates(map[string]any{"status": StatusQueued, "reason": reason, "waiting_dir": "", "waiting_dept": ""})
		if res.Error != nil {
			return released, fmt.Errorf("release %s: %w", dir, res.Error)
		}
		released = append(released, chunk...)
	}
	// Published before the launches, so a run's own later updates come after.
	for _, r := range held[:len(released)] {
		r.Status = StatusQueued
		d.runUpdated(r)
	}
	if len(released) > 0 {
		d.inboxChanged()
	}
	for _, id := range released {
		d.launch(id)
	}
	return released, nil
}

// departmentChanged releases runs a department held, when it is added or comes back.
func (d *Dispatcher) departmentChanged(dep departments.Department) {
	if dep.Status != departments.StatusOK || d.ctx.Err() != nil {
		return
	}
	if _, err := d.Release(d.ctx, dep.Directory, dep.Name, fmt.Sprintf("released: department %s is available", dep.Name)); err != nil {
		slog.Warn("dispatch: release after department change", "department", dep.Name, "err", err)
	}
}

// heldDirRecheck is how often the directories runs wait for are looked at again besides
// fsnotify's events, which can be missed (a watched parent replaced, the watch limit).
const heldDirRecheck = time.Minute

// heldDirsChanged tells watchHeldDirs that runs were held or released.
func (d *Dispatcher) heldDirsChanged() {
	select {
	case d.heldDirs <- struct{}{}:
	default:
	}
}

// watchHeldDirs releases the runs held because their working directory did not exist, once
// it does: fsnotify watches the nearest existing parent of each such directory, and the
// directories are looked at again whenever runs are held or released and every
// heldDirRecheck. Release runs the gate again: a directory that appears outside every
// known place, or as a symlink to elsewhere, is held again for that reason.
func (d *Dispatcher) watchHeldDirs() {
	ctx := d.ctx
	w, err := fsnotify.NewWatcher()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if err != nil {
		slog.Warn("dispatch: no fsnotify watch on held directories; they are looked at every minute", "err", err)
	} else {
		defer w.Close()
		events, errs = w.Events, w.Errors
	}
	watched := map[string]bool{}
	missing := map[string]bool{} // held directories seen missing
	looked := map[string]bool{}  // held directories looked at (a new one is looked at at once)
	defer d.seenMissing(nil)
	tk := time.NewTicker(heldDirRecheck)
	defer tk.Stop()
	all := true
	for {
		want := d.checkHeldDirs(ctx, missing, looked, all)
		if w != nil {
			for dir := range watched {
				if !want[dir] {
					_ = w.Remove(dir)
					delete(watched, dir)
				}
			}
			added := false
			for dir := range want {
				if !watched[dir] {
					if err := w.Add(dir); err != nil {
						slog.Debug("dispatch: watch a held directory's parent", "dir", dir, "err", err)
						continue
					}
					watched[dir], added = true, true
				}
			}
			if added {
				// What appeared before the watch took hold.
				d.checkHeldDirs(ctx, missing, looked, true)
			}
		}
		d.seenMissing(missing)
		all = true
		select {
		case <-ctx.Done():
			return
		case <-d.heldDirs:
			all = false // runs held or released: only new directories need a look
		case <-events:
			drain(events)
		case err := <-errs:
			slog.Debug("dispatch: held directory watch", "err", err)
		case <-tk.C:
		}
	}
}

// drain takes what is pending on c, so that a burst of events costs one look.
func drain(c <-chan fsnotify.Event) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// checkHeldDirs releases the runs waiting on a directory that exists now and was missing
// (or now resolves elsewhere, or is known now), and returns the existing parents to watch
// for the directories still missing. Without all, only directories not looked at yet
// are (the others' watches tell when they change).
func (d *Dispatcher) checkHeldDirs(ctx context.Context, missing, looked map[string]bool, all bool) map[string]bool {
	var dirs []string
	if err := d.db.WithContext(ctx).Model(&Run{}).Where("status = ? AND waiting_dept = '' AND waiting_dir <> ''", StatusWaitingDirectory).
		Distinct().Pluck("waiting_dir", &dirs).Error; err != nil {
		slog.Warn("dispatch: held directories", "err", err)
		return nil
	}
	held := make(map[string]bool, len(dirs))
	for _, dir := range dirs {
		held[dir] = true
	}
	for dir := range missing {
		if !held[dir] {
			delete(missing, dir) // its runs were answered, expired or cancelled
		}
	}
	for dir := range looked {
		if !held[dir] {
			delete(looked, dir)
		}
	}
	want := map[string]bool{}
	for _, dir := range dirs {
		if !all && missing[dir] {
			if p := existingParent(dir); p != "" {
				want[p] = true
			}
			continue
		}
		if !all && looked[dir] {
			continue
		}
		looked[dir] = true
		k, err := d.depts.Known(ctx, dir)
		if err != nil {
			continue
		}
		if !k.Exists {
			missing[dir] = true
			if p := existingParent(dir); p != "" {
				want[p] = true
			}
			continue
		}
		// A directory that exists and was never seen missing waits to be authorized.
		if !missing[dir] && !k.Known && k.Path == dir {
			continue
		}
		delete(missing, dir)
		if _, err := d.Release(ctx, dir, "", fmt.Sprintf("released: working directory %s exists now", dir)); err != nil {
			slog.Warn("dispatch: release runs whose directory appeared", "dir", dir, "err", err)
		}
	}
	return want
}

// existingParent returns the nearest parent of dir that exists as a directory.
func existingParent(dir string) string {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil && fi.IsDir() {
			return p
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			return ""
		}
		if p == filepath.Dir(p) {
			return ""
		}
	}
}

// seenMissing publishes a copy of the directories the watcher saw missing (tests wait on it).
func (d *Dispatcher) seenMissing(m map[string]bool) {
	cp := make(map[string]bool, len(m))
	for k, v := range m {
		cp[k] = v
	}
	d.mu.Lock()
	d.heldMissing = cp
	d.mu.Unlock()
}

// heldDirsSeen reports whether the watcher saw dir missing.
func (d *Dispatcher) heldDirsSeen(dir string) (bool, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.heldMissing[dir], len(d.heldMissing)
}
