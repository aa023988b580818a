package dispatch

import (
	"context"
	"fmt"
	"log/slog"

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
