package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

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
// keys, a busy timeout, immediate write transactions), checks it and migrates it.
func openDatabase(ctx context.Context, path string, migrators []Migrator) (*gorm.DB, error) {
	if err := sqlitedb.CheckHeader(path); err != nil {
		return nil, damaged(path, err)
	}
	db, err := gorm.Open(sqlite.Open(sqlitedb.DSN(path)), sqlitedb.Config())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	kind, err := integrityCheck(ctx, db)
	if err != nil {
		sqlDB.Close()
		return nil, damaged(path, err)
	}
	slog.Debug("database checked", "path", path, "check", kind)
	for _, m := range migrators {
		if err := m.Migrate(db.WithContext(ctx)); err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("migrate %s tables in %s: %w", m.Name, path, err)
		}
	}
	return db, nil
}

// damaged is the error of a damaged database, with the way out.
func damaged(path string, err error) error {
	return fmt.Errorf("database %s is damaged (%w): move it aside and start again; Airlock will create a new one", path, err)
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
