package sandbox

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// placeholders keeps the mount points of protected paths alive while a
// bubblewrap sandbox uses them. A missing protected path gets an empty
// directory (bwrap mounts an empty read-only tmpfs on it) that is removed
// afterwards, but only when no other sandbox holds it: removing a directory
// that is a mount point in another sandbox's namespace would silently lift
// that sandbox's protection. Every sandbox holds a shared flock on each
// protected directory; the last one out (the one that can take the lock
// exclusively) removes the directory if it is still an empty placeholder
// (recognised by its mode, placeholderMode).
type placeholders struct {
	held []heldDir
}

type heldDir struct {
	path string
	fd   int
}

// placeholderMode marks Airlock's placeholders: sticky and read-only, a
// combination no one gives a .git or .airlock directory.
const placeholderMode = 0o1555

func holdPlaceholders(m mountPlan) *placeholders {
	ph := &placeholders{}
	for _, p := range m.protectedMissing {
		if err := os.Mkdir(p, 0o700); err == nil {
			_ = os.Chmod(p, placeholderMode|fs.ModeSticky)
		} else if !errors.Is(err, fs.ErrExist) {
			continue // bwrap will create it (and report a failure)
		}
		ph.lock(p)
	}
	for _, p := range m.protectedExisting {
		if st, err := os.Lstat(p); err == nil && st.IsDir() {
			ph.lock(p)
		}
	}
	return ph
}

func (ph *placeholders) lock(path string) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	if err := unix.Flock(fd, unix.LOCK_SH); err != nil {
		unix.Close(fd)
		return
	}
	ph.held = append(ph.held, heldDir{path: path, fd: fd})
}

// release removes the placeholders nobody else holds (still empty and still
// marked), and drops every lock.
func (ph *placeholders) release() {
	for _, h := range ph.held {
		var st unix.Stat_t
		if unix.Flock(h.fd, unix.LOCK_EX|unix.LOCK_NB) == nil && unix.Fstat(h.fd, &st) == nil && st.Mode&0o7777 == placeholderMode {
			_ = unix.Rmdir(h.path) // fails (and keeps it) when not empty
		}
		unix.Close(h.fd)
	}
	ph.held = nil
}

// canCreateIn reports whether this user may create entries in dir.
func canCreateIn(dir string) bool {
	return unix.Access(dir, unix.W_OK) == nil
}
