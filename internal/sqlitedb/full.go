package sqlitedb

import (
	"errors"
	"syscall"
)

// IsFull reports whether err says the disk (or the database) is full: SQLite's
// SQLITE_FULL, or ENOSPC from a file write. Freeing space is the way out of both.
func IsFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || isSQLiteFull(err)
}

// IsDamaged reports whether err says the database file is damaged (SQLITE_CORRUPT,
// SQLITE_NOTADB): a truncated or overwritten file.
func IsDamaged(err error) bool { return isSQLiteDamaged(err) }
