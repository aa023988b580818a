package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// A protected path that does not exist yet (.git, .airlock, a configured extra) must
// not be creatable inside the sandbox. bubblewrap can only mount over a path that
// exists on the host: its writable root is a bind mount of the host's directory, so
// whatever mount point it would make itself lands in the workspace and stays there.
// So the host side makes an empty placeholder directory, bwrap mounts an empty
// read-only tmpfs on it, and the placeholder goes when the last sandbox using it ends.
//
// Several sandboxes share a working directory (overlapping runs of one task, the MCP
// bash tool next to a run), so a placeholder is reference counted with flock: every
// sandbox that uses it holds a shared lock on it; a sandbox that ends removes it only
// when it can take the lock exclusively, that is when nobody else holds it. Removing a
// placeholder another sandbox uses would lift that sandbox's protection (the kernel
// detaches a mount whose mount point is removed in another namespace) or make its
// bwrap fail on a vanished path. Taking a share is race-free because a holder checks,
// after its lock is granted, that the directory it locked was not removed and that the
// path still names it: a remover holds its exclusive lock until the directory is gone,
// so a share granted after a removal sees that and starts again.

// placeholders are the placeholder directories one sandbox holds.
type placeholders struct {
	held []heldDir
}

type heldDir struct {
	path string
	fd   int
}

// placeholderMode marks Airlock's placeholders: sticky and read-only, a combination
// no one gives a .git or .airlock directory. mkdir applies the umask, which can only
// take permission bits away, so isPlaceholder accepts every subset of r-x.
const placeholderMode = 0o1555

// isPlaceholder reports whether mode (a stat mode's low 12 bits) is a placeholder's.
func isPlaceholder(mode uint32) bool {
	return mode&0o7000 == 0o1000 && mode&0o222 == 0
}

// lockPoll is how often a shared lock is tried again while another process holds the
// placeholder exclusively (a remover, for the few syscalls of its removal).
const lockPoll = 2 * time.Millisecond

// holdPlaceholders takes a share of a placeholder for every protected path of m that
// is missing or is a placeholder, creating the placeholder when needed, and returns the
// plan bwrap mounts: the held placeholders in m.protectedMissing (an empty read-only
// tmpfs goes on each) and the real protected paths in m.protectedExisting (bound
// read-only). A path that appeared or vanished since planMounts is classified again.
// On error nothing is held.
func holdPlaceholders(ctx context.Context, m mountPlan) (*placeholders, mountPlan, error) {
	ph := &placeholders{}
	out := m
	out.protectedMissing, out.protectedExisting = nil, nil
	paths := append(append([]string(nil), m.protectedMissing...), m.protectedExisting...)
	for _, p := range paths {
		held, err := ph.hold(ctx, p)
		if err != nil {
			ph.release()
			return nil, m, err
		}
		if held {
			out.protectedMissing = append(out.protectedMissing, p)
		} else {
			out.protectedExisting = append(out.protectedExisting, p)
		}
	}
	return ph, out, nil
}

// hold takes a share of the placeholder at path, creating it if path is missing. held
// is false when path is a real file or directory (someone's .git), which is not ours to
// hold or remove.
func (ph *placeholders) hold(ctx context.Context, path string) (held bool, err error) {
	for {
		if err := unix.Mkdir(path, placeholderMode); err != nil && !errors.Is(err, unix.EEXIST) {
			return false, fmt.Errorf("protected path %s does not exist and its empty read-only placeholder cannot be made: %w", path, err)
		}
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch {
		case errors.Is(err, unix.ENOENT):
			if err := ctx.Err(); err != nil {
				return false, fmt.Errorf("protected path %s: %w", path, err)
			}
			continue // removed by the last holder just now: make it again
		case errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP): // O_NOFOLLOW|O_DIRECTORY on a symlink gives either
			var st unix.Stat_t
			if unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return false, &ProtectedSymlinkError{Protected: path, Symlink: path}
			}
			return false, nil // a real file (a gitdir: pointer file, …), bound read-only as it is
		case err != nil:
			return false, fmt.Errorf("protected path %s: %w", path, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return false, fmt.Errorf("protected path %s: %w", path, err)
		}
		if !isPlaceholder(st.Mode & 0o7777) {
			unix.Close(fd)
			return false, nil // a real directory: bound read-only as it is
		}
		if err := lockShared(ctx, fd); err != nil {
			unix.Close(fd)
			return false, fmt.Errorf("protected path %s: %w", path, err)
		}
		if current(fd, path) {
			ph.held = append(ph.held, heldDir{path: path, fd: fd})
			return true, nil
		}
		unix.Close(fd) // the directory we locked was removed meanwhile: start again
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("protected path %s: %w", path, err)
		}
	}
}

// lockShared takes a shared flock on fd without ever blocking past ctx.
func lockShared(ctx context.Context, fd int) error {
	for {
		err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("lock placeholder: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lock placeholder: %w", ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// current reports whether the directory open as fd is still the one path names. A
// removed directory has no links left; the link count is what tells, as the removed
// directory's inode number may already be reused by the one made after it.
func current(fd int, path string) bool {
	var st, now unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Nlink > 0 &&
		unix.Lstat(path, &now) == nil && now.Dev == st.Dev && now.Ino == st.Ino
}

// release removes the placeholders nobody else holds, and drops every share. The
// exclusive lock is kept until the directory is gone, so that a process that locks it
// afterwards sees that it was removed.
func (ph *placeholders) release() {
	for _, h := range ph.held {
		var st unix.Stat_t
		if unix.Flock(h.fd, unix.LOCK_EX|unix.LOCK_NB) == nil && unix.Fstat(h.fd, &st) == nil &&
			isPlaceholder(st.Mode&0o7777) && current(h.fd, h.path) {
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
