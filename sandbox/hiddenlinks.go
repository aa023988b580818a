package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// A hidden path is hidden by its name: a tmpfs or /dev/null is mounted over it. A hard
// link gives the same file another name, and that name (a file left in the workspace, in
// /var/tmp, anywhere the sandbox reads) is not hidden: `cat hard.json` in the workspace
// printed the secrets file store. No kernel interface a sandbox can use hides an inode
// by identity (bubblewrap and Landlock both work on paths), so the sandbox refuses to
// start while a hidden file has a second name. No sandboxed process can make one (it
// cannot name a hidden file: link(2) wants the old path, and linkat with AT_EMPTY_PATH
// and open_by_handle_at want CAP_DAC_READ_SEARCH, which it lacks), so what holds at the
// start holds for the run: only a process outside every sandbox, which could copy the
// file as well, can add one.

// hiddenLinkBudget bounds how many entries the check looks at for one sandbox, and
// hiddenLinkDepth how deep below a hidden directory: credentials and Airlock's secret
// files sit near the top (~/.ssh/id_rsa, <data>/secrets/secrets.json, a browser
// profile's logins at depth 3); a browser's cache below them is not walked on every run.
const (
	hiddenLinkBudget = 20000
	hiddenLinkDepth  = 3
)

// HiddenLinkError says a hidden file has more than one name, so a sandbox could read it
// through the other one, and how to fix that.
type HiddenLinkError struct {
	Path  string
	Links uint64
}

func (e *HiddenLinkError) Error() string {
	return fmt.Sprintf("sandbox refuses to start: %s is hidden from sandboxes but has %d hard links, and another name for it (in a "+
		"workspace, /var/tmp, anywhere a sandbox reads) would show what it holds: find them with `find / -xdev -samefile %s`, "+
		"remove the names you did not make on purpose, and change any secret it holds, since it may have been read",
		e.Path, e.Links, e.Path)
}

// checkHiddenLinks refuses a regular file with more than one link among the hidden
// files and within the hidden directories (to hiddenLinkDepth, hiddenLinkBudget entries
// in all), revealed directories aside (the run sees them anyway).
func checkHiddenLinks(files, dirs, reveal []string) error {
	for _, f := range files {
		if err := linkCheck(f, nil); err != nil {
			return err
		}
	}
	budget := hiddenLinkBudget
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(path string, de fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: nothing of it can be linked by name from here either
			}
			if budget--; budget < 0 {
				return fs.SkipAll
			}
			if de.IsDir() {
				if path != d && (withinAny(path, reveal) || depthBelow(path, d) >= hiddenLinkDepth) {
					return fs.SkipDir
				}
				return nil
			}
			if !de.Type().IsRegular() {
				return nil
			}
			return linkCheck(path, de)
		})
		if err != nil {
			return err
		}
		if budget < 0 {
			break
		}
	}
	return nil
}

func linkCheck(path string, de fs.DirEntry) error {
	var fi fs.FileInfo
	var err error
	if de != nil {
		fi, err = de.Info()
	} else {
		fi, err = os.Lstat(path)
	}
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(st.Nlink) > 1 {
		return &HiddenLinkError{Path: path, Links: uint64(st.Nlink)}
	}
	return nil
}

// depthBelow is how many components path has below root.
func depthBelow(path, root string) int {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." {
		return 0
	}
	n := 1
	for _, c := range rel {
		if c == filepath.Separator {
			n++
		}
	}
	return n
}
