package dispatch

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/internal/testdb"
)

// explainQueries runs f and returns the query plan of every SELECT it made on table.
func explainQueries(t *testing.T, db *gorm.DB, table string, f func()) map[string]string {
	t.Helper()
	type query struct {
		sql  string
		vars []any
	}
	var (
		mu   sync.Mutex
		seen []query
	)
	name := "test:explain:" + t.Name()
	if err := db.Callback().Query().After("gorm:query").Register(name, func(tx *gorm.DB) {
		if tx.Statement.Table == table {
			mu.Lock()
			seen = append(seen, query{tx.Statement.SQL.String(), slices.Clone(tx.Statement.Vars)})
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	f()
	if err := db.Callback().Query().Remove(name); err != nil {
		t.Fatal(err)
	}
	plans := map[string]string{}
	for _, q := range seen {
		var rows []struct{ Detail string }
		if err := db.Raw("EXPLAIN QUERY PLAN "+q.sql, q.vars...).Scan(&rows).Error; err != nil {
			t.Fatalf("explain %s: %v", q.sql, err)
		}
		var details []string
		for _, r := range rows {
			details = append(details, r.Detail)
		}
		plans[q.sql] = strings.Join(details, "; ")
	}
	if len(plans) == 0 {
		t.Fatalf("no query on %s", table)
	}
	return plans
}

// TestQueriesUseTheirIndex: the inbox and `runs list --waiting` read the small index of
// held runs, never the whole table (at a million runs a scan took 110 ms and more; the
// aim is 20 ms), retention reads the old runs only, and the backlog cap counts a task's
// active runs from an index.
func TestQueriesUseTheirIndex(t *testing.T) {
	h := newHarness(t, withClock(t0))
	testdb.SeedScale(t, h.db, 100, 20000, h.ws, int64(DefaultHoldDeadline))
	ctx := context.Background()
	for _, tc := range []struct {
		name, table, index string
		call               func() error
	}{
		{"inbox: held runs", "runs", "idx_runs_held", func() error { _, err := h.d.Inbox(ctx); return err }},
		{"inbox: paused tasks", "tasks", "idx_tasks_paused", func() error { _, err := h.d.Inbox(ctx); return err }},
		{"runs list --waiting", "runs", "idx_runs_held", func() error { _, err := h.d.Runs(ctx, RunFilter{Waiting: true}); return err }},
		{"runs list --waiting, a page back", "runs", "idx_runs_held", func() error {
			_, err := h.d.Runs(ctx, RunFilter{Waiting: true, Offset: 10, Limit: 5})
			return err
		}},
		{"runs list --waiting --task", "runs", "idx_runs", func() error { _, err := h.d.Runs(ctx, RunFilter{Waiting: true, Task: "t00007"}); return err }},
		{"retention by age", "runs", "idx_runs_finished_at", func() error { _, err := h.d.PruneRuns(ctx); return err }},
		{"digest at start and wake: runs", "runs", "idx_runs_", func() error { _, err := h.d.Digest(ctx, t0.Add(-time.Hour)); return err }},
		{"digest at start and wake: paused tasks", "tasks", "idx_tasks_paused", func() error { _, err := h.d.Digest(ctx, t0.Add(-time.Hour)); return err }},
		{"backlog of a task", "runs", "idx_runs_task_status", func() error {
			_, _, err := h.d.backlogFull(ctx, h.d.db, Task{ID: 7, Name: "t00007", Overlap: OverlapQueue})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			plans := explainQueries(t, h.db, tc.table, func() { err = tc.call() })
			if err != nil {
				t.Fatal(err)
			}
			for sql, plan := range plans {
				if !strings.Contains(plan, "USING INDEX "+tc.index) && !strings.Contains(plan, "USING COVERING INDEX "+tc.index) {
					t.Errorf("%s\nplan: %s\nwant it to read %s, not scan the table", sql, plan, tc.index)
				}
			}
		})
	}
}
