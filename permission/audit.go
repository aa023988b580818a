package permission

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/sqlitedb"
	"gorm.io/gorm"
)

// AuditQuery narrows an audit listing.
type AuditQuery struct {
	Since     time.Time
	Until     time.Time
	Tool      string
	Verdict   Verdict
	Run       string
	Session   string
	RequestID string
	Limit     int // default 200
}

// auditWriter batches audit records off the hot path; Flush and Close write what is
// queued.
type auditWriter struct {
	db     *gorm.DB
	wmu    *sync.Mutex // shared with the broker: one writer at a time
	log    *slog.Logger
	queue  chan auditItem
	wg     sync.WaitGroup
	mu     sync.RWMutex
	closed bool
}

type auditItem struct {
	rec   *AuditRecord
	flush chan struct{}
}

func newAuditWriter(db *gorm.DB, log *slog.Logger, wmu *sync.Mutex) *auditWriter {
	w := &auditWriter{db: db, wmu: wmu, log: log, queue: make(chan auditItem, 4096)}
	w.wg.Add(1)
	go w.loop()
	return w
}

func (w *auditWriter) loop() {
	defer w.wg.Done()
	var batch []*AuditRecord
	write := func() {
		if len(batch) == 0 {
			return
		}
		w.wmu.Lock()
		err := w.db.CreateInBatches(batch, 200).Error
		w.wmu.Unlock()
		if err != nil {
			w.log.Error("write permission audit", "records", len(batch), "err", err)
		}
		batch = batch[:0]
	}
	for it := range w.queue {
		if it.rec != nil {
			batch = append(batch, it.rec) // redacted by AuditRecord.BeforeSave
		}
		if it.flush != nil || len(batch) >= 200 || len(w.queue) == 0 {
			write()
		}
		if it.flush != nil {
			close(it.flush)
		}
	}
	write()
}

func (w *auditWriter) add(rec *AuditRecord) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		// After Close the table is written directly (rare: a late timer or answer).
		w.wmu.Lock()
		err := w.db.Create(rec).Error
		w.wmu.Unlock()
		if err != nil {
			w.log.Error("write permission audit", "err", err)
		}
		return
	}
	w.queue <- auditItem{rec: rec}
}

// Flush waits until every queued record is written.
func (w *auditWriter) Flush(ctx context.Context) error {
	done := make(chan struct{})
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return nil
	}
	select {
	case w.queue <- auditItem{flush: done}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *auditWriter) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	close(w.queue)
	w.mu.Unlock()
	w.wg.Wait()
}

// auditRecord builds the audit row of a decision.
func auditRecord(req Request, d Decision, now time.Time) *AuditRecord {
	reasons, _ := json.Marshal(d.Reasons)
	asked := req.Context.Caller.Description
	if req.Context.Caller.PID > 0 {
		asked += " pid " + strconv.Itoa(req.Context.Caller.PID)
	}
	return &AuditRecord{api.AuditRecord{
		RequestID: req.ID, Tool: req.Tool, Subject: req.Subject(), Tier: d.Tier,
		Verdict: d.Verdict, Layer: d.Layer, Kind: d.Kind, InteractiveOnly: d.InteractiveOnly,
		Reasons: string(reasons), Rule: d.Rule, Session: req.Context.Session, Run: req.Context.Run,
		Task: req.Context.Task, Department: req.Context.Department, Cwd: req.Context.Cwd,
		AskedBy: asked, AnsweredBy: d.AnsweredBy, WaitedMs: d.Waited.Milliseconds(), CreatedAt: now, CallID: req.CallID,
	}}
}

// Audit lists decisions, newest first.
func (b *Broker) Audit(ctx context.Context, q AuditQuery) ([]api.AuditRecord, error) {
	if err := b.audit.Flush(ctx); err != nil {
		return nil, fmt.Errorf("flush audit: %w", err)
	}
	tx := b.db.WithContext(ctx).Order("id DESC")
	if !q.Since.IsZero() {
		tx = tx.Where("created_at >= ?", q.Since)
	}
	if !q.Until.IsZero() {
		tx = tx.Where("created_at < ?", q.Until)
	}
	tx = tx.Scopes(sqlitedb.EqIfSet("tool", q.Tool), sqlitedb.EqIfSet("verdict", q.Verdict), sqlitedb.EqIfSet("run", q.Run), sqlitedb.EqIfSet("session", q.Session), sqlitedb.EqIfSet("request_id", q.RequestID))
	limit := q.Limit
	if limit <= 0 {
		limit = 200
	}
	var rows []AuditRecord
	if err := tx.Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("query permission audit: %w", err)
	}
	out := make([]api.AuditRecord, len(rows))
	for i, r := range rows {
		out[i] = r.AuditRecord
	}
	return out, nil
}
