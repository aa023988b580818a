package gateway

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// noOpenat2 makes openResolved take the way of kernels without openat2 (tests).
var noOpenat2 bool

// openResolved opens path, which must hold no symbolic link (the caller resolved it),
// following none: openat2 with RESOLVE_NO_SYMLINKS, or component by component with
// O_NOFOLLOW on kernels without openat2 (before 5.6) or where seccomp refuses it. A link
// swapped in since the path was resolved fails with ELOOP instead of being followed.
func openResolved(path string, flags int) (*os.File, error) {
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NOCTTY
	if noOpenat2 {
		return openByComponents(path, flags)
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: uint64(flags),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err == nil {
		return os.NewFile(uintptr(fd), path), nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.E2BIG) {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return openByComponents(path, flags)
}

// openByComponents walks path from / one component at a time, never following a link.
func openByComponents(path string, flags int) (*os.File, error) {
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) == 1 && parts[0] == "" { // "/" itself
		defer unix.Close(dir)
		fd, err := unix.Openat(dir, ".", flags, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
	for i, c := range parts {
		if c == "." || c == ".." {
			unix.Close(dir)
			return nil, fmt.Errorf("open %s: the path is not resolved (%q)", path, c)
		}
		if i == len(parts)-1 {
			fd, err := unix.Openat(dir, c, flags, 0)
			unix.Close(dir)
			if err != nil {
				return nil, &os.PathError{Op: "open", Path: path, Err: err}
			}
			return os.NewFile(uintptr(fd), path), nil
		}
		next, err := unix.Openat(dir, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		dir = next
	}
	panic("unreachable")
}

// fdPath is where the kernel says an open file is, from /proc/self/fd.
func fdPath(f *os.File) (string, error) {
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return "", fmt.Errorf("where %s leads: %w", f.Name(), err)
	}
	return strings.TrimSuffix(p, " (deleted)"), nil
}
