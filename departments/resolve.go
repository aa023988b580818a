package departments

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlock-app/airlock/internal/realpath"
)

// Resolve returns the absolute, symlink-free form of path, walking it one component at a
// time the way the kernel does (so "link/.." goes to the parent of the link's target, not
// back to where the link is), as the sandbox does (realpath.Resolve). Components that do
// not exist are kept as written, and exists is false. A relative path is taken relative
// to the current directory.
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
func Within(path, root string) bool {
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == root || strings.HasPrefix(path, root+"/")
}
