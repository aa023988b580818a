package app

import (
	"context"
	"fmt"

	"github.com/airlock-app/airlock/internal/sqlitedb"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
)

// Migrator is a domain package's Migrate function.
type Migrator struct {
	Name    string
	Migrate func(db *gorm.DB) error
}

// openDatabase opens the one SQLite database as internal/sqlitedb says (WAL, foreign
// keys, a busy timeout, immediate write transactions), checks it and migrates it.
func openDatabase(ctx context.Context, path string, migrators []Migrator) (*gorm.DB, error) {
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
	var check string
	if err := db.WithContext(ctx).Raw("PRAGMA quick_check").Scan(&check).Error; err != nil || check != "ok" {
		sqlDB.Close()
		if err == nil {
			err = fmt.Errorf("integrity check says %q", check)
		}
		return nil, fmt.Errorf("database %s is damaged (%v): move it aside and start again; Airlock will create a new one", path, err)
	}
	for _, m := range migrators {
		if err := m.Migrate(db.WithContext(ctx)); err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("migrate %s tables in %s: %w", m.Name, path, err)
		}
	}
	return db, nil
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
