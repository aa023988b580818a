package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// bwrapBaseFlags are the namespace and capability flags of the OS layer (README, "What Airlock promises"). As
// root, bwrap without --unshare-user --cap-drop ALL keeps every capability.
var bwrapBaseFlags = []string{
	"--new-session", "--die-with-parent",
	"--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
	"--cap-drop", "ALL",
	"--ro-bind", "/", "/",
	"--dev", "/dev",
	"--proc", "/proc",
	"--tmpfs", "/tmp",
}

// ProtectedSymlinkError is returned when a protected path crosses a symlink
// the sandboxed process could rewrite: the sandbox fails closed.
type ProtectedSymlinkError struct {
	Protected string
	Symlink   string
}

func (e *ProtectedSymlinkError) Error() string {
	return fmt.Sprintf("sandbox refuses to start: protected path %s goes through the symlink %s, which the sandboxed process could rewrite; "+
		"replace the symlink with the real directory, or run from a directory where it is not writable", e.Protected, e.Symlink)
}

// mountPlan is what the OS layer mounts for a policy: computed once, used by
// bwrap (mount arguments) and Landlock (rules).
type mountPlan struct {
	writable []string // writable roots
	// protectedExisting are protected paths inside writable roots that exist.
	protectedExisting []string
	// protectedMissing are the first missing components of protected paths
	// inside writable roots: an empty read-only mount keeps them from being created.
	protectedMissing []string
	hiddenDirs       []string // hidden directories (tmpfs over them)
	hiddenFiles      []string // hidden sockets/files (/dev/null over them)
	// reveal are Policy.Unhidden (resolved by WithUnhidden): inside a hidden directory
	// they are bound back (read-only, their writable roots and protected paths as
	// everywhere); elsewhere they need nothing.
	reveal []string
}

// planMounts computes the mount plan, failing closed on a protected path that
// crosses a symlink inside a writable root.
func planMounts(p Policy, hidden []string) (mountPlan, error) {
	var m mountPlan
	if p.Mode == ModeFullAccess {
		return m, nil
	}
	m.reveal = p.Unhidden
	if p.Mode == ModeWorkspaceWrite {
		m.writable = p.WritableRoots
	}
	seen := map[string]bool{}
	for _, prot := range p.Protected {
		root := ""
		for _, r := range m.writable {
			if within(prot, r) && prot != r {
				root = r
				break
			}
		}
		if root == "" {
			continue // outside the writable roots: read-only already
		}
		rel, err := filepath.Rel(root, prot)
		if err != nil {
			return m, fmt.Errorf("protected path %s: %w", prot, err)
		}
		cur := root
		for _, c := range strings.Split(rel, "/") {
			next := filepath.Join(cur, c)
			st, err := os.Lstat(next)
			if errors.Is(err, fs.ErrNotExist) {
				if !canCreateIn(cur) {
					break // nobody here can create it (the sandbox runs as the same user, without capabilities)
				}
				if !seen[next] {
					m.protectedMissing = append(m.protectedMissing, next)
					seen[next] = true
				}
				break
			}
			if err != nil {
				return m, fmt.Errorf("protected path %s: %w", prot, err)
			}
			if st.Mode()&fs.ModeSymlink != 0 {
				return m, &ProtectedSymlinkError{Protected: prot, Symlink: next}
			}
			if next == prot && !seen[next] {
				m.protectedExisting = append(m.protectedExisting, next)
				seen[next] = true
			}
			cur = next
		}
	}
	m.hiddenDirs, m.hiddenFiles = splitHidden(hidden)
	// Hidden by name only: a hidden file with a second name would be read through it.
	if err := checkHiddenLinks(m.hiddenFiles, m.hiddenDirs, m.reveal); err != nil {
		return m, err
	}
	return m, nil
}

// splitHidden resolves the hidden paths that exist (mounting on what a path leads to:
// /var/run -> /run) into directories and other files, once each, skipping what lies in
// the sandbox's fresh /tmp.
func splitHidden(hidden []string) (dirs, files []string) {
	seen := map[string]bool{}
	for _, h := range hidden {
		real, err := filepath.EvalSymlinks(h)
		if err != nil || seen[real] || within(real, "/tmp") {
			continue // missing, done, or inside the sandbox's fresh /tmp
		}
		seen[real] = true
		st, err := os.Stat(real)
		if err != nil {
			continue
		}
		if st.IsDir() {
			dirs = append(dirs, real)
		} else {
			files = append(files, real)
		}
	}
	return dirs, files
}

// bwrapArgs returns bubblewrap's arguments for the plan (without the command).
// seccompFD and statusFD are the child's fds of the filter and status pipes (-1: none).
func bwrapArgs(p Policy, m mountPlan, cwd string, seccompFD, statusFD int) []string {
	args := make([]string, 0, len(bwrapBaseFlags)+8+3*(len(m.writable)+len(m.protectedExisting)+len(m.hiddenDirs)+len(m.hiddenFiles))+4*len(m.protectedMissing))
	args = append(args, bwrapBaseFlags...)
	// A network namespace of the run's own in every case: with the network on, a
	// user-mode stack connects it out (netstack_linux.go); the host's loopback services
	// and abstract unix sockets (X11, some session buses) stay out of reach.
	args = append(args, "--unshare-net")
	// The sandbox's /tmp is a fresh tmpfs: a working directory under the host's /tmp that
	// no writable root brings back (read-only mode, or a cwd outside the roots) is bound
	// read-only, so the command still starts there and reads it.
	if within(cwd, "/tmp") && !withinAny(cwd, m.writable) {
		args = append(args, "--ro-bind", cwd, cwd)
	}
	for _, r := range m.writable {
		args = append(args, "--bind", r, r)
	}
	for _, prot := range m.protectedExisting {
		args = append(args, "--ro-bind", prot, prot)
	}
	for _, miss := range m.protectedMissing {
		args = append(args, "--tmpfs", miss, "--remount-ro", miss)
	}
	for _, h := range m.hiddenDirs {
		args = append(args, "--tmpfs", h)
		// A revealed directory is bound back into the empty tmpfs (bwrap makes its
		// mount point there), then what is writable or protected within it, before the
		// tmpfs turns read-only: nothing else of h is there, now or later.
		for _, r := range m.reveal {
			if !within(r, h) || r == h {
				continue
			}
			args = append(args, "--ro-bind", r, r)
			for _, w := range m.writable {
				if within(w, r) {
					args = append(args, "--bind", w, w)
				}
			}
			for _, prot := range m.protectedExisting {
				if within(prot, r) {
					args = append(args, "--ro-bind", prot, prot)
				}
			}
			for _, miss := range m.protectedMissing {
				if within(miss, r) {
					args = append(args, "--tmpfs", miss, "--remount-ro", miss)
				}
			}
		}
		args = append(args, "--remount-ro", h)
	}
	for _, h := range m.hiddenFiles {
		args = append(args, "--ro-bind", "/dev/null", h)
	}
	if seccompFD >= 0 {
		args = append(args, "--seccomp", strconv.Itoa(seccompFD))
	}
	if statusFD >= 0 {
		args = append(args, "--json-status-fd", strconv.Itoa(statusFD))
	}
	args = append(args, "--chdir", cwd)
	return args
}

// BwrapArgs returns the bubblewrap arguments Exec would use for p in cwd,
// without the command and without the pipe fds Exec adds (--seccomp 3
// --json-status-fd 4, and with the network on --info-fd, --block-fd and the generated
// resolv.conf). For `airlock check` and for benchmarks against raw bwrap.
func BwrapArgs(p Policy, hidden []string, cwd string) ([]string, error) {
	if cwd == "" {
		cwd = p.Cwd
	}
	m, err := planMounts(p, append(append([]string(nil), p.Hidden...), hidden...))
	if err != nil {
		return nil, err
	}
	return bwrapArgs(p, m, cwd, -1, -1), nil
}

func withinAny(path string, roots []string) bool {
	for _, r := range roots {
		if within(path, r) {
			return true
		}
	}
	return false
}
