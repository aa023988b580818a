package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlock-app/airlock/sandbox"
)

// opener opens a file for reading and writing, creating it (and its directories) when
// create is true.
type opener func(path string, create bool) (*os.File, error)

// plainOpen is the opener without confinement (full-access, and tests).
func plainOpen(path string, create bool) (*os.File, error) {
	flag := os.O_RDWR
	if create {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		flag |= os.O_CREATE
	}
	return os.OpenFile(path, flag, 0o644)
}

// confinedOpen opens path inside the writable root that holds it. The file tools run in
// this process, outside the sandbox, so the policy check before the broker is not enough:
// a symlink swapped in between the check and the write (by the agent's own bash, say)
// would carry the write out. os.Root refuses to leave the root, and the opened file's
// real path is checked against the policy once more (protected paths such as .git).
func (s *Server) confinedOpen(path string, create bool) (*os.File, error) {
	pol := s.opts.Policy
	if pol.Mode == sandbox.ModeFullAccess {
		return plainOpen(path, create)
	}
	root, rel, err := rootOf(pol.WritableRoots, path)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := openIn(root, rel, create)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// os.Root follows no absolute symlink, even one that stays inside: retry with
		// where the path really is, still confined to the root.
		if real := realOfDeepest(path); real != path {
			if rel2, ok := relWithin(root.Name(), real); ok {
				f, err = openIn(root, rel2, create)
			}
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("isolation error: open %s inside %s: %w", path, root.Name(), err)
	}
	if real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd())); err == nil {
		if err := pol.CheckWrite(real); err != nil {
			f.Close()
			return nil, isolationError(err)
		}
	}
	return f, nil
}

func openIn(root *os.Root, rel string, create bool) (*os.File, error) {
	flag := os.O_RDWR
	if create {
		if dir := filepath.Dir(rel); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
		flag |= os.O_CREATE
	}
	return root.OpenFile(rel, flag, 0o644)
}

// relWithin is p relative to root, when p is strictly inside it.
func relWithin(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// rootOf finds the writable root holding path, judged lexically and then where the
// path's deepest existing ancestor really is, and opens it.
func rootOf(roots []string, path string) (*os.Root, string, error) {
	candidates := []string{path}
	if real := realOfDeepest(path); real != path {
		candidates = append(candidates, real)
	}
	for _, p := range candidates {
		for _, r := range roots {
			rel, ok := relWithin(r, p)
			if !ok {
				continue
			}
			root, err := os.OpenRoot(r)
			if err != nil {
				return nil, "", fmt.Errorf("open the writable root %s: %w", r, err)
			}
			return root, rel, nil
		}
	}
	return nil, "", fmt.Errorf("isolation error: %s is not inside a writable root (%s)", path, strings.Join(roots, ", "))
}

// realOfDeepest resolves the deepest existing ancestor of path and appends the rest.
func realOfDeepest(path string) string {
	rest := ""
	for dir := path; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}
