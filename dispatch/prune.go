package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// PruneResult says what PruneLogs removed.
type PruneResult struct {
	Removed    int   `json:"removed"`
	FreedBytes int64 `json:"freed_bytes"`
}

// PruneLogs deletes the logs of finished runs older than LogMaxAge, then the oldest ones
// until the total is under LogMaxTotal. Run records stay (marked log_pruned).
func (d *Dispatcher) PruneLogs(ctx context.Context) (PruneResult, error) {
	var runs []Run
	if err := d.db.WithContext(ctx).Select("id", "log_path", "finished_at", "status").
		Where("log_path <> '' AND log_pruned = ? AND finished_at IS NOT NULL", false).Order("finished_at").Find(&runs).Error; err != nil {
		return PruneResult{}, fmt.Errorf("prune logs: %w", err)
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
	var res PruneResult
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
		total -= sizes[i]
		res.Removed++
		res.FreedBytes += sizes[i]
		d.db.WithContext(ctx).Model(&Run{}).Where("id = ?", r.ID).Update("log_pruned", true)
	}
	return res, nil
}
