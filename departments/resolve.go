package departments

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/airlock-app/airlock/internal/realpath"
)

// Resolve returns the absolute, symlink-free form of path with the sandbox's own walk
// (internal/realpath), so that "is this place known?" and the sandbox never land on
// different directories for one path. Components that do not exist are kept as written,
// and exists is false. A relative path is taken relative to the current directory. More
// than 40 links, as in a loop, give an error that wraps syscall.ELOOP.
func Resolve(path string) (resolved string, exists bool, err error) {
	if path == "" {
		return "", false, errors.New("empty path: give an absolute directory")
	}
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", false, fmt.Errorf("resolve %s: %w", path, err)
		}
		path = wd + string(filepath.Separator) + path
	}
	return realpath.Resolve(path, realpath.Options{})
}

// Within reports whether path is root or lies below it. Both must be resolved.
func Within(path, root string) bool { return realpath.Within(path, root) }
