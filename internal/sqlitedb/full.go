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
