// Package testdb is for tests only: it opens a real SQLite database as the core does
// (internal/sqlitedb) and creates the tables the test needs.
package testdb

import (
	"fmt"
	"testing"
	"time"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/airlock-app/airlock/internal/sqlitedb"
)

// Open opens the database file at path, creates the tables of each migrate, and closes
// it when the test ends (a test that closes it earlier, to reopen it as a restart does,
// may).
func Open(t testing.TB, path string, migrate ...func(*gorm.DB) error) *gorm.DB {
	t.Helper()
	db, err := gorm.Open(sqlite.Open(sqlitedb.DSN(path)), sqlitedb.Config())
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	for _, m := range migrate {
		if err := m(db); err != nil {
			t.Fatalf("migrate %s: %v", path, err)
		}
	}
	return db
}

// SeedScale fills db with tasks tasks and runs run records in one transaction of raw
// inserts (seconds for a million rows, where gorm's Create takes minutes). Runs are
// spread evenly over the tasks (task by task, so that the indexes grow in order), one
// hour apart up to now, almost all finished; about one in 20,000 waits for a directory, one in
// 50,000 for an approval, one in 200,000 is a paused running run.
// dir is the tasks' working directory and the held runs' waiting directory; holdDeadline
// the tasks' (nanoseconds). The tables are dispatch's (migrated before).
func SeedScale(tb testing.TB, db *gorm.DB, tasks, runs int, dir string, holdDeadline int64) {
	tb.Helper()
	per := max(runs/tasks, 1)
	// The newest runs are of the last hour: none is past retention.
	base := time.Now().UTC().Truncate(time.Hour).Add(-time.Duration(per) * time.Hour).Format("2006-01-02 15:04:05")
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < ?)
			INSERT INTO tasks (name, argv, cwd, schedule, time_zone, overlap, missed, enabled, hold_deadline, paused, pause_reason,
				consecutive_failures, created_at, updated_at)
			SELECT printf('t%05d', x), '["true"]', ?, '@hourly', 'UTC', 'skip', 'skip', 1, ?, 0, '', 0, ?, ?  FROM c`,
			tasks, dir, holdDeadline, base+"+00:00", base+"+00:00").Error; err != nil {
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
	// Fold the WAL (hundreds of MiB after such an insert) into the file, as a quiet core
	// would have long since: else the first writes measured pay for that checkpoint.
	if err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
		tb.Fatal(err)
	}
}
