package sandbox

import (
	"path/filepath"

	"github.com/airlock-app/airlock/internal/realpath"
)

// resolvePath resolves p the way the kernel would (realpath.Resolve): the deepest
// existing ancestor is resolved with every symlink followed (so `..` after a symlink goes
// where the kernel goes), and the missing rest is appended lexically. When followFinal is
// false a final symlink is not followed (rm, mv, ln act on the link itself).
func resolvePath(p string, followFinal bool) (string, error) {
	return resolveFrom(p, "", followFinal)
}

// resolveFrom is resolvePath with a known real (symlink-free) directory: when p
// lies lexically below it and has no `..`, the walk starts there.
func resolveFrom(p, realBase string, followFinal bool) (string, error) {
	real, _, err := realpath.Resolve(p, realpath.Options{Base: realBase, NoFollowFinal: !followFinal})
	return real, err
}

// within reports whether p is dir or inside it (both clean and absolute).
func within(p, dir string) bool { return realpath.Within(p, dir) }

// absFrom makes p absolute against cwd, expanding a leading ~.
func absFrom(p, cwd, home string) string {
	p = expandHome(p, home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return p
}
