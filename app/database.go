package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/sqlitedb"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
)

// Migrator is a domain package's Migrate function.
type Migrator struct {
	Name    string
	Migrate func(db *gorm.DB) error
}

// Integrity checks openDatabase runs (integrityCheck's answer).
const (
	checkHeader = "header" // the header and the file's size only: constant time
	checkFull   = "full"   // PRAGMA quick_check: every page, time grows with the file
)

// openDatabase opens the one SQLite database as internal/sqlitedb says (WAL, foreign
// keys, a busy timeout, immediate write transactions), checks it and migrates it. A
// damaged file or a full disk is an error that says so and gives the way out; the way
// out of a damaged one also moves aside the files kept beside it that belong to it
// (companions).
func openDatabase(ctx context.Context, path string, migrators []Migrator, companions ...string) (*gorm.DB, error) {
	if err := sqlitedb.CheckHeader(path); err != nil {
		return nil, damagedDatabase(path, err, companions)
	}
	db, err := gorm.Open(sqlite.Open(sqlitedb.DSN(path)), sqlitedb.Config())
	if err != nil {
		return nil, databaseError(path, "open", err, companions)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, databaseError(path, "open", err, companions)
	}
	kind, err := integrityCheck(ctx, db)
	if err != nil {
		sqlDB.Close()
		if errors.Is(err, sqlitedb.ErrDamaged) {
			return nil, damagedDatabase(path, err, companions)
		}
		return nil, databaseError(path, "check", err, companions)
	}
	slog.Debug("database checked", "path", path, "check", kind)
	for _, m := range migrators {
		if err := m.Migrate(db.WithContext(ctx)); err != nil {
			sqlDB.Close()
			return nil, databaseError(path, "migrate "+m.Name+" tables in", err, companions)
		}
	}
	return db, nil
}

// databaseError names what failed on the database at path, with the way out of a
// damaged file or a full disk.
func databaseError(path, op string, err error, companions []string) error {
	switch {
	case sqlitedb.IsDamaged(err):
		return damagedDatabase(path, err, companions)
	case sqlitedb.IsFull(err):
		return fmt.Errorf("%s database %s: the disk is full (%w): free space on the disk that holds %s, then start Airlock again", op, path, err, filepath.Dir(path))
	}
	return fmt.Errorf("%s database %s: %w", op, path, err)
}

// damagedDatabase is the error for a damaged database file, with the commands that move
// it aside with its write-ahead log and shared memory (which a new database must not
// replay) and its companions; Airlock then creates a new one.
func damagedDatabase(path string, err error, companions []string) error {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	var moves []string
	move := func(from, to string) {
		if _, serr := os.Lstat(from); serr == nil {
			moves = append(moves, api.ShellJoin([]string{"mv", from, to}))
		}
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		// SQLite's names, so the copy opens with its own log.
		move(path+suffix, path+".damaged-"+stamp+suffix)
	}
	for _, f := range companions {
		move(f, f+".damaged-"+stamp)
	}
	way := "move it aside"
	if len(moves) > 0 {
		way = "move it aside (`" + strings.Join(moves, " && ") + "`)"
	}
	return fmt.Errorf("database %s is damaged (%w): %s and start Airlock again; it creates a new database (tasks, runs and the ops journal start empty; the old file stays for recovery)", path, err, way)
}

// integrityCheck checks every page (PRAGMA quick_check) only when the previous core did
// not stop cleanly, and says which check it ran. A whole-file check takes time that grows
// with the file (0.7 s at 379 MB) and would be paid at every start; damage comes with a
// crash or power loss in the middle of writes, which is exactly an unclean stop. After a
// clean stop nothing wrote (the WAL was checkpointed, the last start's row records the
// stop), and what can happen to a file nobody has open, a truncated copy or a foreign
// file, sqlitedb.CheckHeader found already. Running the full check in the background
// instead was rejected: the core would answer from a database it may find damaged
// moments later.
func integrityCheck(ctx context.Context, db *gorm.DB) (string, error) {
	var stopped []*time.Time
	// Read before the migrations, so a database of any version answers; no table (a new
	// database, or one from before starts were recorded) or no row means "not known
	// clean".
	err := db.WithContext(ctx).Raw("SELECT stopped_at FROM core_starts ORDER BY id DESC LIMIT 1").Scan(&stopped).Error
	if err == nil && len(stopped) == 1 && stopped[0] != nil {
		return checkHeader, nil
	}
	var check string
	if err := db.WithContext(ctx).Raw("PRAGMA quick_check").Scan(&check).Error; err != nil {
		return checkFull, err
	}
	if check != "ok" {
		return checkFull, fmt.Errorf("%w: integrity check says %q", sqlitedb.ErrDamaged, check)
	}
	return checkFull, nil
}

// closeDatabase checkpoints the WAL into the main file and closes.
func closeDatabase(db *gorm.DB) error {
	if db == nil {
		return nil
	}
	_ = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}
