package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"gorm.io/gorm"
)

// PruneResult says what PruneLogs removed.
type PruneResult struct {
	Removed    int   `json:"removed"`
	FreedBytes int64 `json:"freed_bytes"`
	// RunsRemoved counts the run records retention removed (their logs with them).
	RunsRemoved int `json:"runs_removed"`
}

// pruneBatch bounds one delete of run records, so that the write lock is held briefly
// and the scheduler and the API wait little behind a large prune.
const pruneBatch = 500

// PruneLogs applies retention: first the run records (PruneRuns), then the logs of
// finished runs older than LogMaxAge, then the oldest ones until the total is under
// LogMaxTotal. The records of pruned logs stay (marked log_pruned).
func (d *Dispatcher) PruneLogs(ctx context.Context) (PruneResult, error) {
	var res PruneResult
	n, err := d.PruneRuns(ctx)
	res.RunsRemoved = n
	if err != nil {
		return res, err
	}
	var runs []Run
	if err := d.db.WithContext(ctx).Select("id", "log_path", "finished_at", "status").
		Where("log_path <> '' AND log_pruned = ? AND finished_at IS NOT NULL", false).Order("finished_at").Find(&runs).Error; err != nil {
		return res, fmt.Errorf("prune logs: %w", err)
	}
	sizes := make([]int64, len(runs))
	var total int64
	for i, r := range runs {
		if fi, err := os.Stat(r.LogPath); err == nil {
			sizes[i] = fi.Size()
			total += fi.Size()
		}
	}
	cutoff := d.now().Add(-d.opts.LogMaxAge)
	for i, r := range runs {
		if !Finished(r.Status) {
			continue
		}
		if !r.FinishedAt.Before(cutoff) && total <= d.opts.LogMaxTotal {
			continue
		}
		if err := os.Remove(r.LogPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("prune log of run #%d: %w", r.ID, err)
		}
		if err := d.removeAgentDir(r.ID); err != nil {
			return res, err
		}
		total -= sizes[i]
		res.Removed++
		res.FreedBytes += sizes[i]
		d.db.WithContext(ctx).Model(&Run{}).Where("id = ?", r.ID).Update("log_pruned", true)
	}
	return res, nil
}

// prunable selects the runs retention may remove: finished, not paused, and not the
// last run of their task (so a task's history always shows how it last went).
func prunable(tx *gorm.DB) *gorm.DB {
	return tx.Where("status NOT IN ? AND NOT paused", activeStatuses).
		Where("id < (SELECT MAX(last.id) FROM runs AS last WHERE last.task_id = runs.task_id)")
}

// PruneRuns removes run records past retention, with their log files: finished runs
// that ended more than RunMaxAge ago, then for each task the oldest finished runs beyond
// its newest RunMaxCount. A run still queued, held, running or paused, and the last run
// of each task, always stay. It returns how many records it removed.
func (d *Dispatcher) PruneRuns(ctx context.Context) (int, error) {
	db := d.db.WithContext(ctx)
	cutoff := d.now().Add(-d.opts.RunMaxAge).UTC()
	// In finished_at order, so that SQLite walks that index over the old runs only
	// (ordered by id it scans the whole table instead).
	removed, err := d.deleteRuns(ctx, "finished_at", func(tx *gorm.DB) *gorm.DB {
		return prunable(tx.Where("finished_at < ?", cutoff))
	})
	if err != nil {
		return removed, fmt.Errorf("prune runs older than %s: %w", d.opts.RunMaxAge, err)
	}
	var over []struct {
		TaskID uint
		N      int
	}
	if err := db.Model(&Run{}).Select("task_id, COUNT(*) AS n").Group("task_id").
		Having("COUNT(*) > ?", d.opts.RunMaxCount).Scan(&over).Error; err != nil {
		return removed, fmt.Errorf("prune runs: count runs per task: %w", err)
	}
	for _, o := range over {
		// The oldest run to keep: the RunMaxCount-th newest.
		var keepFrom uint
		if err := db.Model(&Run{}).Where("task_id = ?", o.TaskID).Order("id DESC").Offset(d.opts.RunMaxCount-1).
			Limit(1).Pluck("id", &keepFrom).Error; err != nil {
			return removed, fmt.Errorf("prune runs of task %d: %w", o.TaskID, err)
		}
		n, err := d.deleteRuns(ctx, "id", func(tx *gorm.DB) *gorm.DB {
			return prunable(tx.Where("task_id = ? AND id < ?", o.TaskID, keepFrom))
		})
		removed += n
		if err != nil {
			return removed, fmt.Errorf("prune runs of task %d beyond %d: %w", o.TaskID, d.opts.RunMaxCount, err)
		}
	}
	if removed > 0 {
		slog.Info("dispatch: pruned run records", "removed", removed, "max_age", d.opts.RunMaxAge, "max_per_task", d.opts.RunMaxCount)
	}
	return removed, nil
}

// deleteRuns deletes the runs that where selects, pruneBatch at a time in order of the
// column order, then their log files (a file left behind is named in the error; its
// record is gone either way).
func (d *Dispatcher) deleteRuns(ctx context.Context, order string, where func(*gorm.DB) *gorm.DB) (int, error) {
	removed := 0
	for {
		var batch []Run
		// One write transaction (immediate) per batch: a run released or started between
		// the select and the delete cannot be removed.
		err := d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := where(tx.Model(&Run{})).Select("id", "log_path").Order(order).Limit(pruneBatch).Find(&batch).Error; err != nil {
				return err
			}
			if len(batch) == 0 {
				return nil
			}
			ids := make([]uint, len(batch))
			for i, r := range batch {
				ids[i] = r.ID
			}
			if d.opts.RemoveWithRuns != nil {
				if err := d.opts.RemoveWithRuns(tx, ids); err != nil {
					return fmt.Errorf("remove what belongs to the pruned runs: %w", err)
				}
			}
			return tx.Where("id IN ?", ids).Delete(&Run{}).Error
		})
		if err != nil {
			return removed, err
		}
		removed += len(batch)
		var errs []error
		for _, r := range batch {
			if err := d.removeAgentDir(r.ID); err != nil {
				errs = append(errs, err)
			}
			if r.LogPath == "" {
				continue
			}
			if err := os.Remove(r.LogPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove the log of pruned run #%d: %w", r.ID, err))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return removed, err
		}
		if len(batch) < pruneBatch {
			return removed, nil
		}
	}
}
