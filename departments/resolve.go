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

// maxSymlinks is how many symbolic links one resolution follows: the kernel's limit
// (MAXSYMLINKS), the same as the sandbox's (sandbox/realpath.MaxLinks), so that the two
// never disagree on a place. departments imports no other Airlock package, hence the walk
// of its own; TestGateAndSandboxAgree in sandbox/realpath holds the two together.
const maxSymlinks = 40

// Resolve returns the absolute, symlink-free form of path, walking it one component at a
// time the way the kernel does (so "link/.." goes to the parent of the link's target, not
// back to where the link is). Components that do not exist are kept as written, and exists
// is false. A relative path is taken relative to the current directory. More than 40
// links, as in a loop, give an error that wraps syscall.ELOOP.
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
	pending := strings.Split(path, "/")
	cur := "/"
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			// The rest does not exist (or a component is a file): keep it as written.
			return filepath.Join(append([]string{next}, pending...)...), false, nil
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
			return "", false, fmt.Errorf("resolve %s: %w", path, syscall.ELOOP)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false, fmt.Errorf("resolve %s: %w", path, err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	return cur, true, nil
}

// Within reports whether path is root or lies below it. Both must be resolved.
func Within(path, root string) bool {
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == root || strings.HasPrefix(path, root+"/")
}
