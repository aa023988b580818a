//go:build !cgo

package sqlitedb

// isSQLiteFull: without cgo there is no SQLite driver, so no SQLite error either.
func isSQLiteFull(error) bool { return false }

func isSQLiteDamaged(error) bool { return false }
