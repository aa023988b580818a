// Package testdb is for tests only: it opens a real SQLite database as the core does
// (internal/sqlitedb) and creates the tables the test needs.
package testdb

import (
	"testing"

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
