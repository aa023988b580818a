package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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
func (s *Server) confinedOpen(pol sandbox.Policy) opener {
	return func(path string, create bool) (*os.File, error) { return s.openConfined(pol, path, create) }
}

func (s *Server) openConfined(pol sandbox.Policy, path string, create bool) (*os.File, error) {
	if pol.Mode == sandbox.ModeFullAccess {
		return plainOpen(path, create)
	}
	g := s.guard(pol)
	// Before anything is created: a writable root may hold a hidden path (a run in ~).
	for _, p := range []string{path, realOfDeepest(path)} {
		if h, ok := g.covers(p); ok {
			return nil, g.denyAs(sandbox.ReasonWrite, path, p, h, "")
		}
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
	real, err := fdPath(f)
	if err != nil {
		f.Close()
		return nil, isolationError(fmt.Errorf("cannot tell where %s leads, so it is not written: %w", path, err))
	}
	if err := pol.CheckWrite(real); err != nil {
		f.Close()
		return nil, isolationError(err)
	}
	// What was opened, not the path: a hidden file (the workspace may hold ~), a hard link
	// to one, and any hard-linked file at all (its other names change too) are refused.
	if err := g.judge(f, path, true); err != nil {
		f.Close()
		return nil, err
	}
	if st, err := statOf(f); err == nil && st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file, so it is not written", path)
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

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 }

func idOf(st *syscall.Stat_t) fileID { return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)} }

// statOf returns f's stat, read from the open file itself.
func statOf(f *os.File) (*syscall.Stat_t, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, fmt.Errorf("%s: no inode information", f.Name())
	}
	return st, nil
}

// hiddenID reports whether the open file f is a hidden path itself (same device and
// inode), whatever name it was reached by: a hidden directory moved or bind-mounted into
// the tree is not entered.
func (g *guard) hiddenID(f *os.File) bool {
	if g == nil {
		return false
	}
	st, err := statOf(f)
	if err != nil {
		return true
	}
	_, ok := g.ids[idOf(st)]
	return ok
}

// maxHiddenScan bounds how many entries of the hidden directories are looked at to tell
// whether a hard-linked file is one of them.
const maxHiddenScan = 200_000

// guard judges what the file tools opened, not the path they were given: the tools run
// in this process, outside the sandbox, and a path checked before the open can lead
// elsewhere by the time it is opened (the agent's own bash swapping a file and a link),
// or be a hard link to a key. A file is refused when where the kernel says it is lies in a
// hidden path (or where that path leads), when it is a hidden file or directory (same
// device and inode), or when it is a hard-linked regular file that is, or cannot be shown
// not to be, one of the files in a hidden directory. A nil guard (full-access) allows all.
type guard struct {
	pol   sandbox.Policy
	paths []string          // hidden paths, cleaned, and where those that are links lead
	names map[string]string // paths entry -> the hidden path it stands for
	ids   map[fileID]string // identity of each hidden path that exists -> that path
	dirs  []string          // hidden paths that are directories

	linked map[uint64]map[uint64]string // device -> inode -> hidden path holding it (lazily)
	unsure map[uint64]bool              // device whose hidden directories could not all be read
}

// guard builds the hidden set as it is on disk now (a hidden path created since the
// session started counts).
func (s *Server) guard(pol sandbox.Policy) *guard {
	if pol.Mode == sandbox.ModeFullAccess {
		return nil
	}
	g := &guard{pol: pol, names: map[string]string{}, ids: map[fileID]string{}}
	for _, h := range append(append([]string(nil), pol.Hidden...), s.opts.HiddenPaths...) {
		if !filepath.IsAbs(h) {
			continue
		}
		h = filepath.Clean(h)
		g.add(h, h)
		if real, err := filepath.EvalSymlinks(h); err == nil && real != h {
			g.add(real, h)
		}
		var st syscall.Stat_t
		if syscall.Stat(h, &st) == nil {
			g.ids[idOf(&st)] = h
			if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				g.dirs = append(g.dirs, h)
			}
		}
	}
	return g
}

func (g *guard) add(p, name string) {
	if _, ok := g.names[p]; !ok {
		g.paths = append(g.paths, p)
		g.names[p] = name
	}
}

// hiddenRead is covers for a read: a path the person allowed this one call to read (an
// escalation's Grant.Readable, in the policy's Revealed) is not hidden from it.
func (g *guard) hiddenRead(p string) (string, bool) {
	if g != nil {
		for _, r := range g.pol.Revealed {
			if p == r || strings.HasPrefix(p, r+"/") {
				return "", false
			}
		}
	}
	return g.covers(p)
}

// covers returns the hidden path that p (absolute, clean) lies in.
func (g *guard) covers(p string) (string, bool) {
	if g == nil {
		return "", false
	}
	for _, h := range g.paths {
		if p == h || strings.HasPrefix(p, h+"/") || h == "/" {
			return g.names[h], true
		}
	}
	return "", false
}

// deny is the refusal of a read of shown because of the hidden path h.
func (g *guard) deny(shown, real, h, how string) error {
	return g.denyAs(sandbox.ReasonRead, shown, real, h, how)
}

// denyAs is deny for a read or a write (reason).
func (g *guard) denyAs(reason, shown, real, h, how string) error {
	d := &sandbox.IsolationDeniedError{Reason: reason, Path: shown,
		Why:  h + " is hidden from sandboxed runs",
		Hint: "a sandboxed run cannot reach it in any mode but full-access; ask the person instead"}
	var hd *sandbox.IsolationDeniedError
	if errors.As(g.pol.CheckRead(h), &hd) {
		d.Why, d.Hint = hd.Why, hd.Hint
	}
	if real != "" && real != shown {
		d.Path = shown + " (resolves to " + real + ")"
	}
	if how != "" {
		d.Why = how + "; " + d.Why
	}
	return isolationError(d)
}

// judge checks the opened file f (reached by the path shown). write also refuses any
// hard-linked file: writing it changes every other name of the same file.
func (g *guard) judge(f *os.File, shown string, write bool) error {
	if g == nil {
		return nil
	}
	real, err := fdPath(f)
	if err != nil {
		return isolationError(fmt.Errorf("cannot tell where %s leads, so it is not opened: %w", shown, err))
	}
	reason := sandbox.ReasonRead
	if write {
		reason = sandbox.ReasonWrite
	}
	covered := g.covers
	if !write {
		covered = g.hiddenRead
	}
	if h, ok := covered(real); ok {
		return g.denyAs(reason, shown, real, h, "")
	}
	st, err := statOf(f)
	if err != nil {
		return isolationError(fmt.Errorf("cannot tell what %s is, so it is not opened: %w", shown, err))
	}
	id := idOf(st)
	if h, ok := g.ids[id]; ok {
		return g.denyAs(reason, shown, real, h, "it is "+h+" under another name")
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink <= 1 {
		return nil
	}
	h, unsure := g.linkedHidden(id)
	switch {
	case h != "":
		return g.denyAs(reason, shown, real, h, "it is a hard link to a file in "+h)
	case write:
		return isolationError(&sandbox.IsolationDeniedError{Reason: sandbox.ReasonWrite, Path: shown,
			Why: fmt.Sprintf("it has %d hard links: writing it would change every other name of the same file too, "+
				"which may lie outside the writable roots", st.Nlink),
			Hint: "give the file a content of its own first (cp FILE FILE.new && mv FILE.new FILE), then write it"})
	case unsure:
		return isolationError(&sandbox.IsolationDeniedError{Reason: sandbox.ReasonRead, Path: shown,
			Why:  fmt.Sprintf("it has %d hard links and Airlock cannot rule out that one of them is a hidden credential file", st.Nlink),
			Hint: "copy the file to a file of its own (cp FILE FILE.copy) and use that, or ask the person"})
	}
	return nil
}

// linkedHidden returns the hidden path holding a file with identity id (walking the
// hidden directories on id's device once per guard), and whether the walk was incomplete.
func (g *guard) linkedHidden(id fileID) (string, bool) {
	if g.linked == nil {
		g.linked, g.unsure = map[uint64]map[uint64]string{}, map[uint64]bool{}
	}
	inodes, ok := g.linked[id.dev]
	if !ok {
		inodes = map[uint64]string{}
		budget := maxHiddenScan
		for _, d := range g.dirs {
			var st syscall.Stat_t
			if syscall.Stat(d, &st) != nil || uint64(st.Dev) != id.dev {
				continue // a hard link never crosses devices
			}
			_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
				if err != nil {
					g.unsure[id.dev] = true
					return nil
				}
				if budget--; budget < 0 {
					g.unsure[id.dev] = true
					return filepath.SkipAll
				}
				if e.Type().IsRegular() {
					if info, err := e.Info(); err == nil {
						if st, ok := info.Sys().(*syscall.Stat_t); ok {
							inodes[uint64(st.Ino)] = d
						}
					}
				}
				return nil
			})
		}
		g.linked[id.dev] = inodes
	}
	return inodes[id.ino], g.unsure[id.dev]
}

// openRead opens path for reading (a directory too) and judges what was opened. Links
// are resolved first and the resolved path opened without following any, so a link
// swapped in meanwhile fails instead of being followed; either way the opened file is
// judged by where the kernel says it is.
func (g *guard) openRead(path string, flags int) (*os.File, error) {
	var lastErr error
	for range 3 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, err
		}
		if h, ok := g.hiddenRead(real); ok {
			return nil, g.deny(path, real, h, "")
		}
		f, err := openResolved(real, flags|syscall.O_RDONLY|syscall.O_NONBLOCK)
		if errors.Is(err, syscall.ELOOP) {
			lastErr = err // a link was swapped in since it was resolved: resolve again
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := g.judge(f, path, false); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	return nil, fmt.Errorf("%s kept changing while it was opened (a link swapped in and out), so it was not read: %w", path, lastErr)
}
