//go:build cgo

package sqlitedb

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

func isSQLiteFull(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrFull
}

func isSQLiteDamaged(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB)
}
