package sandbox

import (
	"path/filepath"
	"slices"

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

// maxCwds bounds the directories a command's relative paths are checked from. Each
// literal `cd` adds where it leads from every directory already possible (a cd that
// fails leaves the shell where it was), so without the set and the bound `cd a;` × N
// would make 2^N of them.
const maxCwds = 16

// cdFrom returns cwds with where `cd target` leads from each of them added, each
// directory once; ok is false when that would be more than maxCwds directories (the
// caller then treats the working directory as unknown).
func cdFrom(cwds []string, target, home string) (out []string, ok bool) {
	out = cwds
	for _, base := range cwds {
		next := filepath.Clean(absFrom(target, base, home))
		if slices.Contains(out, next) {
			continue
		}
		if len(out) >= maxCwds {
			return cwds, false
		}
		out = append(out, next)
	}
	return out, true
}
