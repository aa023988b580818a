package dispatch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"
)

// seedScale fills db with tasks tasks and runs run records in one transaction of raw
// inserts (seconds for a million rows, where gorm's Create takes minutes). Runs are spread
// evenly over the tasks (task by task, so that the indexes grow in order), one hour apart, almost all finished; about one in 20,000 waits
// for a directory, one in 50,000 for an approval, one in 200,000 is a paused running run.
// dir is the tasks' working directory and the held runs' waiting directory.
func seedScale(tb testing.TB, db *gorm.DB, tasks, runs int, dir string) {
	tb.Helper()
	per := max(runs/tasks, 1)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02 15:04:05")
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < ?)
			INSERT INTO tasks (name, argv, cwd, schedule, time_zone, overlap, missed, enabled, hold_deadline, paused, pause_reason,
				consecutive_failures, created_at, updated_at)
			SELECT printf('t%05d', x), '["true"]', ?, '@hourly', 'UTC', 'skip', 'skip', 1, ?, 0, '', 0, ?, ?  FROM c`,
			tasks, dir, int64(DefaultHoldDeadline), base+"+00:00", base+"+00:00").Error; err != nil {
			return fmt.Errorf("seed tasks: %w", err)
		}
		return tx.Exec(`WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM c WHERE x < ? - 1)
			INSERT INTO runs (task_id, scheduled_at, trigger, task_name, status, reason, waiting_dir, started_at, finished_at,
				exit_code, cwd, log_path, log_bytes, log_truncated, log_pruned, paused, created_at, updated_at)
			SELECT t, at, 'schedule', printf('t%05d', t), st,
				CASE st WHEN 'waiting_directory' THEN 'waiting for the directory to be authorized' ELSE '' END,
				CASE st WHEN 'waiting_directory' THEN ? ELSE '' END,
				at, CASE WHEN st IN ('succeeded', 'skipped') THEN at END,
				0, ?, '', 0, 0, 0, st = 'running', at, at
			FROM (SELECT x / ? + 1 AS t, datetime(?, printf('+%d hours', x % ?)) || '+00:00' AS at,
				CASE WHEN x % 20000 = 7 THEN 'waiting_directory' WHEN x % 50000 = 11 THEN 'waiting_approval'
					WHEN x % 200000 = 13 THEN 'running' WHEN x % 100 = 0 THEN 'skipped' ELSE 'succeeded' END AS st
				FROM c)`,
			runs, dir, dir, per, base, per).Error
	})
	if err != nil {
		tb.Fatal(err)
	}
}

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

// TestWaitingQueriesUseTheirIndex: the inbox and `runs list --waiting` read the small
// index of held runs, never the whole table (at a million runs a scan took 110 ms and
// more; the aim is 20 ms).
func TestWaitingQueriesUseTheirIndex(t *testing.T) {
	h := newHarness(t)
	seedScale(t, h.db, 100, 20000, h.ws)
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
