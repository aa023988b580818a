// Package sqlitedb says how Airlock opens its one SQLite database, so that the core
// (app/database.go) and the tests of every package that owns tables open it alike: WAL
// (readers never block the writer), foreign keys on, a busy timeout so two processes wait
// rather than fail, immediate write transactions so they never deadlock on upgrade, and
// times in UTC.
package sqlitedb

import (
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// DSN is the data source name of the database file at path.
func DSN(path string) string {
	return "file:" + path + "?_journal_mode=WAL&_foreign_keys=1&_busy_timeout=10000&_txlock=immediate&_synchronous=NORMAL"
}

// Config is gorm's configuration: no query log, times in UTC.
func Config() *gorm.Config {
	return &gorm.Config{Logger: logger.Discard, NowFunc: func() time.Time { return time.Now().UTC() }}
}

// EqIfSet is a gorm scope for an optional filter: col = v, or no condition when v is
// empty. col is a column name written in the code, never input.
func EqIfSet[T ~string](col string, v T) func(*gorm.DB) *gorm.DB {
	return func(tx *gorm.DB) *gorm.DB {
		if v == "" {
			return tx
		}
		return tx.Where(col+" = ?", v)
	}
}
