package departments

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const maxSymlinks = 255

// Resolve returns the absolute, symlink-free form of path, walking it one component at a
// time the way the kernel does (so "link/.." goes to the parent of the link's target, not
// back to where the link is). Components that do not exist are kept as written, and exists
// is false. A relative path is taken relative to the current directory.
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
	pending := splitPath(path)
	cur := "/"
	links := 0
	exists = true
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if !exists {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			// The rest does not exist (or a component is a file): keep it as written.
			exists = false
			cur = next
			continue
		}
		if err != nil {
			return "", false, fmt.Errorf("resolve %s: %w", path, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", false, fmt.Errorf("resolve %s: too many levels of symbolic links", path)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false, fmt.Errorf("resolve %s: %w", path, err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		pending = append(splitPath(target), pending...)
	}
	return cur, exists, nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// Within reports whether path is root or lies below it. Both must be resolved.
func Within(path, root string) bool {
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == root || strings.HasPrefix(path, root+"/")
}
