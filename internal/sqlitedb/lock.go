package sqlitedb

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive lock beside the database at dbPath (dbPath + ".lock") for the
// life of the core; closing the file releases it.
// The socket's lock already keeps one core per socket; this one keeps one core per
// database even when two processes see different runtime directories (an agent that
// drops XDG_RUNTIME_DIR resolves another socket, but the same database).
func Lock(dbPath string) (*os.File, error) {
	path := dbPath + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("another Airlock core already uses the database %s (started with another XDG_RUNTIME_DIR?): stop it, or use that one", dbPath)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
