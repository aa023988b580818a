// Package sqlitedb says how Airlock opens its one SQLite database, so that the core
// (app/database.go) and the tests of every package that owns tables open it alike: WAL
// (readers never block the writer), foreign keys on, a busy timeout so two processes wait
// rather than fail, immediate write transactions so they never deadlock on upgrade, and
// times in UTC.
package sqlitedb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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

// ErrDamaged marks a database file whose header or size cannot be right.
var ErrDamaged = errors.New("the database file is damaged")

// CheckHeader checks, in constant time, what a whole-file check would find first in a
// database damaged while nothing had it open: a file that is not SQLite's, and a file
// shorter than its header says (a truncated copy or a full disk). A missing or empty file
// is fine: SQLite creates it.
func CheckHeader(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check database %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("check database %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return nil
	}
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return fmt.Errorf("%w: %d bytes, shorter than a SQLite header", ErrDamaged, fi.Size())
	}
	if string(h[:16]) != "SQLite format 3\x00" {
		return fmt.Errorf("%w: it does not start with a SQLite header", ErrDamaged)
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return fmt.Errorf("%w: its header gives a page size of %d", ErrDamaged, pageSize)
	}
	// The header's page count is valid when its "version valid for" matches the change
	// counter (SQLite's file format, §1.3.7). With a write-ahead log that holds frames the
	// file may be short for good reason: a checkpoint that wrote page 1 and then ran out
	// of space leaves the rest in the log, which SQLite replays. Then only the log knows.
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		return nil
	}
	if binary.BigEndian.Uint32(h[92:96]) == binary.BigEndian.Uint32(h[24:28]) && pages*pageSize > fi.Size() {
		return fmt.Errorf("%w: it is truncated (its header says %d pages of %d bytes, %d bytes, but the file has %d)",
			ErrDamaged, pages, pageSize, pages*pageSize, fi.Size())
	}
	return nil
}
