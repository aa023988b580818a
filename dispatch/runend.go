package dispatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/sqlitedb"
)

// A run's end is written twice: into room reserved beside its log when it started
// (<log>.end, a fixed size, so writing it needs no new space: a full disk still takes
// it), then into the database, retried until it lands. A start that finds the run still
// running reads the side file and records the real outcome rather than interrupted.

// endFileSize is the room reserved for a run's end.
const endFileSize = 2048

// Backoff of the database write of a run's end.
const (
	endRetryFirst = 200 * time.Millisecond
	endRetryMax   = 30 * time.Second
)

// endRecord is how a run ended, as written beside its log.
type endRecord struct {
	Status       string    `json:"status"`
	Reason       string    `json:"reason,omitempty"`
	ExitCode     *int      `json:"exit_code,omitempty"`
	Signal       string    `json:"signal,omitempty"`
	LogBytes     int64     `json:"log_bytes"`
	LogTruncated bool      `json:"log_truncated"`
	FinishedAt   time.Time `json:"finished_at"`
}

// columns are the run's columns the end sets besides its status and reason.
func (e endRecord) columns() map[string]any {
	m := map[string]any{"log_bytes": e.LogBytes, "log_truncated": e.LogTruncated, "signal": e.Signal}
	if e.ExitCode != nil {
		m["exit_code"] = *e.ExitCode
	}
	return m
}

// endPath is the side file of the run whose log is logPath.
func endPath(logPath string) string {
	return strings.TrimSuffix(logPath, ".log") + ".end"
}

// reserveEnd creates the side file at path with its room written (and synced), at the
// start of a run, while there is space.
func reserveEnd(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("reserve room for the run's end: %w", err)
	}
	room := bytes.Repeat([]byte{' '}, endFileSize)
	if _, err := f.Write(room); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("reserve room for the run's end in %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("reserve room for the run's end in %s: %w", path, err)
	}
	return f.Close()
}

// writeEnd writes e over the room reserved at path (a reason too long for it is cut).
func writeEnd(path string, e endRecord) error {
	b, err := json.Marshal(e)
	for err == nil && len(b) > endFileSize && e.Reason != "" {
		cut := max(0, len(e.Reason)-(len(b)-endFileSize)-len("…"))
		e.Reason = strings.ToValidUTF8(e.Reason[:cut], "") + "…"
		b, err = json.Marshal(e)
	}
	if err != nil {
		return fmt.Errorf("write the run's end: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write the run's end: %w", err)
	}
	defer f.Close()
	room := bytes.Repeat([]byte{' '}, endFileSize)
	copy(room, b)
	if _, err := f.WriteAt(room, 0); err != nil {
		return fmt.Errorf("write the run's end to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write the run's end to %s: %w", path, err)
	}
	return nil
}

// readEnd reads the end written at path; ok is false when there is none (no file, or
// the room is still blank: the run had not ended).
func readEnd(path string) (endRecord, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return endRecord{}, false
	}
	b = bytes.TrimSpace(b)
	var e endRecord
	if len(b) == 0 || json.Unmarshal(b, &e) != nil || e.Status == "" || !Finished(e.Status) {
		return endRecord{}, false
	}
	return e, true
}

// ending is a run that finished here and whose end the database has not taken yet.
type ending struct {
	end      endRecord
	err      error // the last write's
	attempts int
}

// describe says what is happening and the way out.
func (e ending) describe(dbFile string) string {
	outcome := e.end.Status
	if e.end.Reason != "" {
		outcome += ": " + e.end.Reason
	}
	cause, way := e.err.Error(), "Airlock records it from the file beside its log at the next start if this keeps failing"
	if sqlitedb.IsFull(e.err) {
		cause = "disk full"
		way = "free space on the disk that holds Airlock's database"
		if filepath.IsAbs(dbFile) {
			way += " (" + filepath.Dir(dbFile) + ")"
		}
	}
	return fmt.Sprintf("finished (%s); recording its end failed: %s; retrying (%d failed so far): %s", outcome, cause, e.attempts, way)
}

// recordEnd records how run r ended: beside its log (logPath), then in the database,
// retried with backoff until it lands or the dispatcher stops (the next start then
// reads the side file). Meanwhile Run, Runs and Cancel say so, and the run's slot is
// given back: it runs nothing any more.
func (d *Dispatcher) recordEnd(ar *activeRun, r *Run, logPath string, e endRecord) {
	side := endPath(logPath)
	if err := writeEnd(side, e); err != nil {
		slog.Warn("dispatch: the run's end could not be written beside its log", "run", r.ID, "err", err)
	}
	wait := endRetryFirst
	for attempt := 1; ; attempt++ {
		err := d.finishErr(r, e.Status, e.Reason, e.columns())
		if err == nil {
			break
		}
		slog.Error("dispatch: record the end of a run", "run", r.ID, "status", e.Status, "attempt", attempt, "err", err)
		d.mu.Lock()
		d.ending[r.ID] = ending{end: e, err: err, attempts: attempt}
		d.mu.Unlock()
		d.releaseSlot(ar)
		if attempt == 1 {
			// Once: the window shows it, and the person hears the way out.
			if cur, rerr := d.Run(d.ctx, r.ID); rerr == nil {
				d.runUpdated(cur)
				d.notice(api.DispatchNotice{Kind: api.NoticeFailure, RunID: r.ID, Task: r.TaskName, Status: e.Status,
					Message: fmt.Sprintf("run #%d %s", r.ID, cur.Reason)})
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-d.ctx.Done():
			t.Stop()
			return // the side file holds it for the next start
		case <-t.C:
		}
		wait = min(2*wait, endRetryMax)
	}
	d.mu.Lock()
	delete(d.ending, r.ID)
	d.mu.Unlock()
	if err := os.Remove(side); err != nil && !errors.Is(err, os.ErrNotExist) {
		slog.Warn("dispatch: remove the run's end file", "run", r.ID, "err", err)
	}
}

// endingNote is what Run and Runs show as the reason of a run whose end is being
// retried ("" for any other).
func (d *Dispatcher) endingNote(id uint) string {
	d.mu.Lock()
	e, ok := d.ending[id]
	d.mu.Unlock()
	if !ok {
		return ""
	}
	return e.describe(d.dbFile())
}

// dbFile is the database's file (where to free space).
func (d *Dispatcher) dbFile() string {
	var rows []struct {
		Name string
		File string
	}
	if err := d.db.Raw("PRAGMA database_list").Scan(&rows).Error; err == nil {
		for _, r := range rows {
			if r.Name == "main" && r.File != "" {
				return r.File
			}
		}
	}
	return ""
}
