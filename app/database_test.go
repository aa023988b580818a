package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/sqlitedb"
	"gorm.io/gorm"
)

// blob is a table that makes the test database span many pages.
type blob struct {
	ID   uint `gorm:"primaryKey"`
	Data []byte
}

// makeDatabase writes a database of about 1 MiB at path whose last start stopped
// cleanly or not, closed as the core closes it (the WAL checkpointed into the file).
func makeDatabase(t *testing.T, path string, clean bool) {
	t.Helper()
	migrators := []Migrator{{"core", migrateCore}, {"blob", func(db *gorm.DB) error { return db.AutoMigrate(&blob{}) }}}
	db, err := openDatabase(context.Background(), path, migrators)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 256; i++ {
		if err := db.Create(&blob{Data: []byte(strings.Repeat("x", 4000))}).Error; err != nil {
			t.Fatal(err)
		}
	}
	start := CoreStart{PID: 1, Kind: "test", Version: "test", StartedAt: time.Now().UTC()}
	if clean {
		now := time.Now().UTC()
		start.StoppedAt = &now
	}
	if err := db.Create(&start).Error; err != nil {
		t.Fatal(err)
	}
	if err := closeDatabase(db); err != nil {
		t.Fatal(err)
	}
}

// The start-up check is bounded: every page is checked only after an unclean stop; after
// a clean one, the header and the size only (constant time, however large the file).
// Damage is found either way with the way out.
func TestStartupCheckIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		clean   bool
		damage  func(t *testing.T, path string)
		check   string // the check that ran, when the database opens
		problem string // what the error says, when it is damaged
	}{
		{name: "clean stop", clean: true, check: checkHeader},
		{name: "unclean stop", clean: false, check: checkFull},
		{name: "new database", check: checkFull, damage: func(t *testing.T, path string) { os.Remove(path) }},
		{name: "truncated after a clean stop", clean: true, problem: "truncated", damage: func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "not a database", clean: true, problem: "does not start with a SQLite header", damage: func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not sqlite\n", 100)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a page overwritten before an unclean stop", clean: false, problem: "", damage: func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			if _, err := f.WriteAt([]byte(strings.Repeat("\xff", 4096)), fi.Size()/2/4096*4096); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "airlock.db")
			makeDatabase(t, path, tc.clean)
			if tc.damage != nil {
				tc.damage(t, path)
			}
			if tc.check == "" {
				_, err := openDatabase(context.Background(), path, nil)
				if err == nil || !strings.Contains(err.Error(), "move it aside") || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("open = %v, want the damage (%q) and the way out", err, tc.problem)
				}
				if tc.problem != "" && !errors.Is(err, sqlitedb.ErrDamaged) {
					t.Fatalf("open = %v, want it to wrap sqlitedb.ErrDamaged", err)
				}
				return
			}
			db, err := openDatabase(context.Background(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer closeDatabase(db)
			got, err := integrityCheck(context.Background(), db)
			if err != nil || got != tc.check {
				t.Fatalf("check = %q, %v; want %q", got, err, tc.check)
			}
		})
	}
}
