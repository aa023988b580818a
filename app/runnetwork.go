package app

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox/egress"
	"gorm.io/gorm"
)

// NetworkConnection is one connection a dispatch run made (or was refused) through its
// egress proxy. The run's log has it as a line of text and the audit has its verdict;
// this row keeps it structured, bytes and duration included, so the run view and
// `airlock runs show` fold a run's connections into a per-domain summary.
type NetworkConnection struct {
	ID         uint   `gorm:"primaryKey"`
	RunID      uint   `gorm:"index;not null"`
	Domain     string `gorm:"not null"`
	Port       int
	Allowed    bool
	Reason     string
	BytesUp    int64
	BytesDown  int64
	DurationNs int64
	StartedAt  time.Time
}

func migrateNetwork(db *gorm.DB) error { return db.AutoMigrate(&NetworkConnection{}) }

// removeConnections deletes the connection rows of runs retention removes, in its
// transaction (dispatch.Options.RemoveWithRuns).
func removeConnections(tx *gorm.DB, runIDs []uint) error {
	if err := tx.Where("run_id IN ?", runIDs).Delete(&NetworkConnection{}).Error; err != nil {
		return fmt.Errorf("delete the network connections of %d pruned runs: %w", len(runIDs), err)
	}
	return nil
}

// recordConnections makes cfg also keep a row for each connection of run id.
func (c *Core) recordConnections(runID uint, cfg egress.Config) egress.Config {
	next := cfg.Log
	cfg.Log = func(r egress.Record) {
		if next != nil {
			next(r)
		}
		c.recordConnection(runID, r)
	}
	return cfg
}

func (c *Core) recordConnection(runID uint, r egress.Record) {
	if c.DB == nil || runID == 0 {
		return
	}
	row := NetworkConnection{RunID: runID, Domain: r.Domain, Port: r.Port, Allowed: r.Verdict == egress.Allow, Reason: string(r.Reason),
		BytesUp: r.BytesUp, BytesDown: r.BytesDown, DurationNs: int64(r.Duration), StartedAt: r.Start.UTC()}
	if err := c.DB.Create(&row).Error; err != nil {
		slog.Error("record a run's network connection", "run", runID, "domain", r.Domain, "err", err)
	}
}

// RunNetwork is where run id connected: its recorded connections folded per domain.
func (c *Core) RunNetwork(cl Caller, id uint) (api.RunNetwork, error) {
	if _, err := c.GetRun(cl, id); err != nil {
		return api.RunNetwork{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	var rows []NetworkConnection
	if err := c.DB.WithContext(ctx).Where("run_id = ?", id).Order("id").Find(&rows).Error; err != nil {
		return api.RunNetwork{}, fmt.Errorf("read run %d's network connections: %w", id, err)
	}
	records := make([]egress.Record, len(rows))
	for i, row := range rows {
		v := egress.Deny
		if row.Allowed {
			v = egress.Allow
		}
		records[i] = egress.Record{Start: row.StartedAt, Domain: row.Domain, Port: row.Port, Verdict: v, Reason: egress.Reason(row.Reason),
			BytesUp: row.BytesUp, BytesDown: row.BytesDown, Duration: time.Duration(row.DurationNs)}
	}
	out := api.RunNetwork{RunID: id, Domains: []api.DomainTraffic{}}
	for _, d := range egress.Summarize(records) {
		out.Domains = append(out.Domains, api.DomainTraffic{Domain: d.Domain, Ports: d.Ports, Connections: d.Connections,
			Allowed: d.Allowed, Refused: d.Refused, Asked: d.Asked, BytesUp: d.BytesUp, BytesDown: d.BytesDown,
			DurationMs: d.Duration.Milliseconds(), LastReason: string(d.LastReason)})
	}
	return out, nil
}
