package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const maxSymlinkHops = 40

// errTooManyLinks is returned for symlink loops.
var errTooManyLinks = errors.New("too many levels of symbolic links")

// resolvePath resolves p the way the kernel would: the deepest existing
// ancestor is resolved with every symlink followed (so `..` after a symlink goes
// where the kernel goes), and the missing rest is appended lexically. When
// followFinal is false a final symlink is not followed (rm, mv, ln act on the
// link itself).
func resolvePath(p string, followFinal bool) (string, error) {
	return resolveFrom(p, "", followFinal)
}

// resolveFrom is resolvePath with a known real (symlink-free) directory: when p
// lies lexically below it and has no `..`, the walk starts there.
func resolveFrom(p, realBase string, followFinal bool) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("resolve %q: not an absolute path", p)
	}
	cur := "/"
	if realBase != "" && realBase != "/" && strings.HasPrefix(p, realBase+"/") && !strings.Contains(p, "..") {
		cur, p = realBase, p[len(realBase):]
	}
	rest := splitPath(p)
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		st, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			// The rest does not exist: append it lexically.
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", p, err)
		}
		if st.Mode()&fs.ModeSymlink == 0 || (!followFinal && len(rest) == 0) {
			cur = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("resolve %s: %w", p, errTooManyLinks)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", p, err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(splitPath(target), rest...)
	}
	return cur, nil
}

func splitPath(p string) []string {
	return strings.Split(p, "/")
}

// within reports whether p is dir or inside it (both clean and absolute).
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// absFrom makes p absolute against cwd, expanding a leading ~.
func absFrom(p, cwd, home string) string {
	p = expandHome(p, home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return p
}
