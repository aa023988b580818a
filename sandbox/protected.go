package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// setProtected fills Protected and ProtectedNames from the configured entries:
// relative entries apply inside every writable root, absolute ones as they are,
// and the target of a `gitdir:` pointer file (and its commondir) is added.
func (p *Policy) setProtected(entries []string) {
	var names, abs []string
	for _, e := range entries {
		if filepath.IsAbs(e) {
			abs = append(abs, e)
		} else if e != "" && e != "." {
			names = append(names, e)
		}
	}
	slices.Sort(names)
	p.ProtectedNames = slices.Compact(names)
	p.protectedEntries = slices.Clone(entries)
	for _, root := range p.WritableRoots {
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			continue // a single granted file holds no .git
		}
		for _, n := range p.ProtectedNames {
			abs = append(abs, filepath.Join(root, n))
		}
		abs = append(abs, gitdirTargets(filepath.Join(root, ".git"))...)
	}
	slices.Sort(abs)
	p.Protected = slices.Compact(abs)
	p.protectedReal = make([]string, len(p.Protected))
	for i, prot := range p.Protected {
		if rp, err := resolvePath(prot, true); err == nil {
			p.protectedReal[i] = rp
		}
	}
}

// gitdirTargets returns the repository directories a `.git` pointer file names
// (gitdir: …, and the commondir inside it), or nil when dotgit is not a pointer file.
func gitdirTargets(dotgit string) []string {
	st, err := os.Lstat(dotgit)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 4096 {
		return nil
	}
	target := readKey(dotgit, "gitdir:")
	if target == "" {
		return nil
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(dotgit), target)
	}
	out := []string{filepath.Clean(target)}
	if common := readFirstLine(filepath.Join(target, "commondir")); common != "" {
		if !filepath.IsAbs(common) {
			common = filepath.Join(target, common)
		}
		out = append(out, filepath.Clean(common))
	}
	return out
}

func readKey(file, key string) string {
	line := readFirstLine(file)
	if v, ok := strings.CutPrefix(line, key); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

func readFirstLine(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if sc.Scan() {
		return strings.TrimSpace(sc.Text())
	}
	return ""
}
