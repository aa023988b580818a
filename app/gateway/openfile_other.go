//go:build !linux

package gateway

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// openResolved opens path, which must hold no symbolic link (the caller resolved it),
// component by component with O_NOFOLLOW: a link swapped in since fails with ELOOP.
func openResolved(path string, flags int) (*os.File, error) {
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NOCTTY
	dir, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) == 1 && parts[0] == "" {
		parts = []string{"."}
	}
	for i, c := range parts {
		if c == ".." {
			unix.Close(dir)
			return nil, fmt.Errorf("open %s: the path is not resolved", path)
		}
		fl := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i == len(parts)-1 {
			fl = flags
		}
		fd, err := unix.Openat(dir, c, fl, 0)
		unix.Close(dir)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		if i == len(parts)-1 {
			return os.NewFile(uintptr(fd), path), nil
		}
		dir = fd
	}
	panic("unreachable")
}

// fdPath is where an open file is: the path it was opened by, which openResolved
// reached without following a link.
func fdPath(f *os.File) (string, error) { return f.Name(), nil }
