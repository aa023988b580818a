// Package realpath resolves a path the way the kernel does. It is the one walk for every
// part of Airlock that judges a path: the sandbox (may a run write there, start there?)
// and the departments (is this place known?) must land on the same directory for the
// same path, or one could pass what the other refuses. It is a leaf (the standard
// library only), so both leaves may import it.
package realpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// MaxLinks is how many symbolic links one resolution follows: the kernel's limit
// (MAXSYMLINKS), so a path is refused exactly when opening it would fail with ELOOP.
const MaxLinks = 40

// Options change how Resolve walks a path.
type Options struct {
	// NoFollowFinal leaves a final symbolic link unfollowed (rm, mv and ln act on the
	// link itself).
	NoFollowFinal bool
	// Base is a directory known to be free of symbolic links: when the path lies
	// lexically below it and has no "..", the walk starts there instead of at "/".
	Base string
}

// Resolve returns the absolute, symlink-free form of the absolute path p, walking it
// one component at a time the way the kernel does: every symbolic link is followed
// where it stands, so "link/.." goes to the parent of the link's target, not back to
// where the link is. From the first component that does not exist (or is not a
// directory) on, the rest is kept as written, with "." and ".." taken lexically, and
// exists is false. More than MaxLinks links, as in a loop, give an error that wraps
// syscall.ELOOP.
func Resolve(p string, opt Options) (resolved string, exists bool, err error) {
	if !filepath.IsAbs(p) {
		return "", false, fmt.Errorf("resolve %q: not an absolute path", p)
	}
	cur, rest := "/", p
	if b := opt.Base; b != "" && b != "/" && strings.HasPrefix(p, b+"/") && !strings.Contains(p, "..") {
		cur, rest = b, p[len(b):]
	}
	pending := strings.Split(rest, "/")
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
			return filepath.Join(append([]string{next}, pending...)...), false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("resolve %s: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 || opt.NoFollowFinal && len(pending) == 0 {
			cur = next
			continue
		}
		links++
		if links > MaxLinks {
			return "", false, fmt.Errorf("resolve %s: %w", p, syscall.ELOOP)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false, fmt.Errorf("resolve %s: %w", p, err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	return cur, true, nil
}

// Within reports whether path is root or lies below it. Both must be clean and absolute
// (resolved, to judge a place rather than a spelling).
func Within(path, root string) bool {
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == root || strings.HasPrefix(path, root+"/")
}
