package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gorm.io/gorm/clause"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/deadowner"
)

// Start recovers from the last stop and begins scheduling:
//   - runs found running whose dispatcher is gone are recorded interrupted (logs kept);
//   - held runs past their deadline are recorded expired; the others stay held;
//   - queued runs and runs waiting for an approval are picked up again;
//   - occurrences that fell while the app was closed are recorded (and run once when the
//     task's missed-run policy says so);
//   - one digest of what was held, missed or failed meanwhile is published and returned.
func (d *Dispatcher) Start(ctx context.Context) (Digest, error) {
	since := d.lastAlive(ctx)
	if err := d.recoverInterrupted(ctx); err != nil {
		return Digest{}, err
	}
	if _, err := d.ExpireHeld(ctx); err != nil {
		return Digest{}, err
	}
	var resume []uint
	if err := d.db.WithContext(ctx).Model(&Run{}).Where("status IN ?", []string{StatusQueued, StatusWaitingApproval}).
		Order("id").Pluck("id", &resume).Error; err != nil {
		return Digest{}, fmt.Errorf("dispatch start: %w", err)
	}
	for _, id := range resume {
		d.launch(id)
	}
	var tasks []Task
	if err := d.db.WithContext(ctx).Where("enabled = ? AND schedule <> ''", true).Find(&tasks).Error; err != nil {
		return Digest{}, fmt.Errorf("dispatch start: %w", err)
	}
	now := d.now()
	if err := d.recordDowntime(ctx, tasks, now); err != nil {
		slog.Error("dispatch: missed occurrences", "err", err)
	}
	d.sched.load(tasks, now)
	d.beat(ctx)
	dg, err := d.Digest(ctx, since)
	if err != nil {
		return Digest{}, err
	}
	if !dg.Empty() {
		d.digested(dg)
	}
	d.spawn(func() { d.sched.run(d.ctx) })
	d.spawn(d.housekeeping)
	d.spawn(d.watchHeldDirs)
	return dg, nil
}

// recoverInterrupted ends the runs found running whose dispatcher is gone.
func (d *Dispatcher) recoverInterrupted(ctx context.Context) error {
	var running []Run
	if err := d.db.WithContext(ctx).Where("status = ?", StatusRunning).Find(&running).Error; err != nil {
		return fmt.Errorf("dispatch start: %w", err)
	}
	for i := range running {
		r := &running[i]
		if evidence, gone := d.ownerGone(r); gone {
			d.endOrphan(r, "found running when the app started", evidence)
		}
	}
	return nil
}

// ownerGone reports whether the dispatcher recorded as running r is gone, and the
// evidence. A run this dispatcher works on is never gone. With Options.Exclusive the
// database's lock is the proof; without it, the owner's pid is looked at.
func (d *Dispatcher) ownerGone(r *Run) (string, bool) {
	d.mu.Lock()
	_, mine := d.active[r.ID]
	d.mu.Unlock()
	if mine {
		return "", false
	}
	host, pid := parseOwner(r.Owner)
	if d.opts.Exclusive {
		return deadowner.Evidence(host, pid), true
	}
	if ownerAlive(r.Owner) {
		return "", false
	}
	return fmt.Sprintf("its owner %q is not running", r.Owner), true
}

// endOrphan records a run whose dispatcher is gone: how it ended when its dispatcher
// wrote that beside its log but the database did not take it (a full disk), else
// interrupted, with the evidence, in its log and its record.
func (d *Dispatcher) endOrphan(r *Run, found, evidence string) {
	if r.LogPath != "" {
		side := endPath(r.LogPath)
		if e, ok := readEnd(side); ok {
			reason := e.Reason
			if reason != "" {
				reason += "; "
			}
			reason += fmt.Sprintf("its end (at %s) was recorded from the file beside its log when it was %s: the database had not taken it",
				e.FinishedAt.Format(time.RFC3339), found)
			cols := e.columns()
			cols["finished_at"] = e.FinishedAt
			if err := d.finishErr(r, e.Status, reason, cols); err != nil {
				// The file stays for the next start.
				slog.Error("dispatch: record a run's end from beside its log", "run", r.ID, "err", err)
				return
			}
			os.Remove(side)
			return
		}
		defer os.Remove(side) // blank: the run had not ended
	}
	started := "at an unknown time"
	if r.StartedAt != nil {
		started = r.StartedAt.UTC().Format(time.RFC3339)
	}
	reason := fmt.Sprintf("interrupted: %s at %s (the app or machine stopped during the run, started %s); %s",
		found, d.now().UTC().Format(time.RFC3339), started, evidence)
	slog.Warn("dispatch: run interrupted", "run", r.ID, "owner", r.Owner, "evidence", evidence)
	if r.LogPath != "" {
		if f, err := os.OpenFile(r.LogPath, os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			fmt.Fprintf(f, "\n[airlock] %s\n", reason)
			f.Close()
		}
	}
	var size int64
	if fi, err := os.Stat(r.LogPath); err == nil {
		size = fi.Size()
	}
	d.finish(r, StatusInterrupted, reason, map[string]any{"log_bytes": size})
}

// parseOwner splits an owner host/pid (pid 0 when there is none).
func parseOwner(owner string) (string, int) {
	host, pidStr, _ := strings.Cut(owner, "/")
	pid, _ := strconv.Atoi(pidStr)
	return host, pid
}

// ownerAlive reports whether the dispatcher that owns a run is another live process on
// this host. This process's own earlier dispatchers count as gone.
func ownerAlive(owner string) bool {
	host, pid := parseOwner(owner)
	me, _ := os.Hostname()
	if host != me || pid == os.Getpid() || pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ExpireHeld records held runs past their deadline as expired and returns how many.
func (d *Dispatcher) ExpireHeld(ctx context.Context) (int, error) {
	now := d.now().UTC()
	var ids []uint
	if err := d.db.WithContext(ctx).Model(&Run{}).Where("status IN ? AND hold_until IS NOT NULL AND hold_until < ?",
		[]string{StatusWaitingDirectory, StatusWaitingApproval}, now).Pluck("id", &ids).Error; err != nil {
		return 0, fmt.Errorf("expire held runs: %w", err)
	}
	n := 0
	for _, id := range ids {
		d.mu.Lock()
		ar := d.active[id]
		d.mu.Unlock()
		if ar != nil {
			continue // its approval wait ends at the same deadline
		}
		res := d.db.WithContext(ctx).Model(&Run{}).Where("id = ? AND status IN ?", id, []string{StatusWaitingDirectory, StatusWaitingApproval}).
			Updates(map[string]any{"status": StatusExpired, "finished_at": now,
				"reason": reasonPrefix("expired: nobody answered before the hold deadline — ")})
		if res.Error == nil && res.RowsAffected > 0 {
			n++
			d.publishRun(id)
		}
	}
	if n > 0 {
		d.inboxChanged()
		d.notice(api.DispatchNotice{Kind: api.NoticeFailure, Message: fmt.Sprintf("%d held runs expired", n)})
	}
	return n, nil
}

func reasonPrefix(prefix string) clause.Expr {
	return clause.Expr{SQL: "? || reason", Vars: []any{prefix}}
}

// housekeeping expires held runs, prunes logs and keeps the heartbeat until shutdown;
// a long gap between beats (the machine slept) publishes a digest.
func (d *Dispatcher) housekeeping() {
	tk := time.NewTicker(heartbeatInterval)
	defer tk.Stop()
	lastPrune := time.Time{}
	prev := time.Now()
	for {
		select {
		case <-d.ctx.Done():
			return
		case now := <-tk.C:
			if gap := now.Sub(prev); gap > 3*heartbeatInterval {
				since := d.lastAlive(d.ctx)
				if dg, err := d.Digest(d.ctx, since); err == nil && !dg.Empty() {
					d.digested(dg)
				}
			}
			prev = now
			d.beat(d.ctx)
			if _, err := d.ExpireHeld(d.ctx); err != nil {
				slog.Warn("dispatch: expire", "err", err)
			}
			if now.Sub(lastPrune) > time.Hour {
				lastPrune = now
				if _, err := d.PruneLogs(d.ctx); err != nil {
					slog.Warn("dispatch: prune logs", "err", err)
				}
			}
		}
	}
}

func (d *Dispatcher) beat(ctx context.Context) {
	d.db.WithContext(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(&stateRow{Key: "alive", Value: d.now().UTC()})
}

func (d *Dispatcher) lastAlive(ctx context.Context) time.Time {
	var s stateRow
	if err := d.db.WithContext(ctx).Where("key = ?", "alive").Take(&s).Error; err != nil {
		return time.Time{}
	}
	return s.Value
}
