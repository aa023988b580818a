package secrets

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// FileStore keeps secrets in one file, for a machine without a Secret Service (a
// headless `airlock daemon`, a CI runner). It is chosen only by `[secrets] store =
// "file"` in config.toml, never as a fallback when the keyring does not answer.
//
// The file is secrets.json (a JSON object of name to value, mode 0600) in its own
// directory (mode 0700) under the data directory, which every sandbox hides. The values
// are in clear on disk: anyone who can read files as you outside a sandbox (or as root)
// reads them, as they could read the keyring of an unlocked session. Every access checks
// the modes and the owner and refuses a looser directory or file, or a symlink, naming
// the fix; writes replace the file atomically under an exclusive lock, each with a new
// file. A secrets.json with a second name (a hard link, which the sandbox's path-based
// hiding would not cover) is refused too, and every sandbox refuses to start meanwhile.
type FileStore struct {
	dir string
}

// FileStoreDir is the file store's directory under the data directory.
func FileStoreDir(dataDir string) string { return filepath.Join(dataDir, "secrets") }

// NewFileStore returns the file store in FileStoreDir(dataDir).
func NewFileStore(dataDir string) *FileStore { return &FileStore{dir: FileStoreDir(dataDir)} }

// Path is the file holding the secrets.
func (s *FileStore) Path() string { return filepath.Join(s.dir, "secrets.json") }

// Kind is KindFile.
func (s *FileStore) Kind() Kind { return KindFile }

// Where is the file's path.
func (s *FileStore) Where() string { return s.Path() }

// Get returns the value stored under name.
func (s *FileStore) Get(ctx context.Context, name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	var v string
	err := s.locked(ctx, false, func(m map[string]string) (bool, error) {
		var ok bool
		if v, ok = m[name]; !ok {
			return false, ErrNotFound
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("read secret %s: %w", name, err)
	}
	return v, nil
}

// Set stores value under name.
func (s *FileStore) Set(ctx context.Context, name, value string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := s.locked(ctx, true, func(m map[string]string) (bool, error) { m[name] = value; return true, nil }); err != nil {
		return fmt.Errorf("store secret %s: %w", name, err)
	}
	return nil
}

// Delete removes name; deleting a missing secret is ErrNotFound.
func (s *FileStore) Delete(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	err := s.locked(ctx, true, func(m map[string]string) (bool, error) {
		if _, ok := m[name]; !ok {
			return false, ErrNotFound
		}
		delete(m, name)
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("delete secret %s: %w", name, err)
	}
	return nil
}

// Check reports whether the store can be used: its directory and file (when they
// exist) have the modes and owner the store requires, and the file parses.
func (s *FileStore) Check(ctx context.Context) error {
	return s.locked(ctx, false, func(map[string]string) (bool, error) { return false, nil })
}

// locked runs f on the secrets under the directory's lock (exclusive when writing),
// and writes the map back when f says it changed it.
func (s *FileStore) locked(ctx context.Context, write bool, f func(map[string]string) (bool, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.ensureDir(write); err != nil {
		return err
	}
	if _, err := os.Lstat(s.dir); errors.Is(err, fs.ErrNotExist) {
		// Nothing stored yet, and a read does not create the directory.
		_, err := f(map[string]string{})
		return err
	}
	lock, err := os.OpenFile(filepath.Join(s.dir, ".lock"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("the secrets file store's lock: %w", err)
	}
	defer lock.Close()
	how := syscall.LOCK_SH
	if write {
		how = syscall.LOCK_EX
	}
	if err := syscall.Flock(int(lock.Fd()), how); err != nil {
		return fmt.Errorf("lock the secrets file store: %w", err)
	}
	m, err := s.read()
	if err != nil {
		return err
	}
	changed, err := f(m)
	if err != nil || !changed {
		return err
	}
	return s.write(m)
}

// ensureDir checks the directory (creating it 0700 for a write) is a real directory,
// ours, and closed to everyone else.
func (s *FileStore) ensureDir(create bool) error {
	if create {
		if err := os.MkdirAll(filepath.Dir(s.dir), 0o700); err != nil {
			return fmt.Errorf("the secrets file store: %w", err)
		}
		if err := os.Mkdir(s.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("the secrets file store: %w", err)
		}
	}
	fi, err := os.Lstat(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the secrets file store: %w", err)
	}
	return checkPrivate(s.dir, fi, true)
}

func (s *FileStore) read() (map[string]string, error) {
	m := map[string]string{}
	f, err := os.OpenFile(s.Path(), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &PermissionError{Path: s.Path(), Problem: "is a symlink", Fix: "remove it; Airlock writes the file itself"}
		}
		return nil, fmt.Errorf("the secrets file store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("the secrets file store: %w", err)
	}
	if err := checkPrivate(s.Path(), fi, false); err != nil {
		return nil, err
	}
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		return nil, fmt.Errorf("the secrets file %s is not a JSON object of names to values (%v): restore it from a backup, or move it aside to start empty", s.Path(), err)
	}
	return m, nil
}

// write replaces the file atomically: a new 0600 file of its own (O_EXCL|O_NOFOLLOW, a
// random name in the same directory), checked to be one link and ours, synced, renamed
// over the old one, and the result checked to be that very file. Every write is a new
// inode: a name someone gave the old file keeps only what it held.
func (s *FileStore) write(m map[string]string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	rnd := make([]byte, 12)
	if _, err := rand.Read(rnd); err != nil {
		return fmt.Errorf("the secrets file store: %w", err)
	}
	name := filepath.Join(s.dir, ".secrets-"+hex.EncodeToString(rnd)+".tmp")
	tmp, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("the secrets file store: %w", err)
	}
	defer os.Remove(name)
	fail := func(err error) error {
		tmp.Close()
		return fmt.Errorf("the secrets file store: %w", err)
	}
	made, err := tmp.Stat()
	if err != nil {
		return fail(err)
	}
	if err := checkPrivate(name, made, false); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("the secrets file store: %w", err)
	}
	if err := os.Rename(name, s.Path()); err != nil {
		return fmt.Errorf("the secrets file store: %w", err)
	}
	now, err := os.Lstat(s.Path())
	if err != nil {
		return fmt.Errorf("the secrets file store: %w", err)
	}
	if !os.SameFile(made, now) {
		return fmt.Errorf("the secrets file store: %s is not the file just written (something replaced it meanwhile): check who else writes to %s", s.Path(), s.dir)
	}
	if err := checkPrivate(s.Path(), now, false); err != nil {
		return err
	}
	if d, err := os.Open(s.dir); err == nil { // the rename itself, on disk
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// PermissionError says the file store's directory or file is open to others, not
// ours, or not what it should be, and how to fix that.
type PermissionError struct {
	Path, Problem, Fix string
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("the secrets file store refuses %s: it %s; %s", e.Path, e.Problem, e.Fix)
}

// checkPrivate refuses a directory (dir) or regular file that is not ours or whose
// mode lets anyone else in.
func checkPrivate(path string, fi fs.FileInfo, dir bool) error {
	want, kind := fs.FileMode(0o600), "a regular file"
	if dir {
		want, kind = 0o700, "a directory"
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &PermissionError{Path: path, Problem: "is a symlink", Fix: "remove it; Airlock creates the store itself"}
	case dir != fi.IsDir() || (!dir && !fi.Mode().IsRegular()):
		return &PermissionError{Path: path, Problem: "is not " + kind, Fix: "move it aside; Airlock creates the store itself"}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if int(st.Uid) != os.Getuid() {
			return &PermissionError{Path: path, Problem: fmt.Sprintf("belongs to uid %d, not to you (uid %d)", st.Uid, os.Getuid()),
				Fix: "run Airlock as its owner, or move it aside"}
		}
		// A second name for the file is a copy nobody sees: hidden from sandboxes by its
		// path, the store would be read through the other one (a hard link left in a
		// workspace). A directory's links are its subdirectories, and the store makes none.
		if n := uint64(st.Nlink); !dir && n > 1 {
			return &PermissionError{Path: path, Problem: fmt.Sprintf("has %d hard links, and another name for it (in a workspace, /var/tmp…) shows every secret it holds to whoever reads there", n),
				Fix: fmt.Sprintf("find them with `find / -xdev -samefile %s`, remove the names you did not make, then change the secrets it holds (airlock secret set NAME), since they may have been read", path)}
		} else if dir && n > 2 {
			return &PermissionError{Path: path, Problem: "holds directories, which the store never makes",
				Fix: "move it aside; Airlock creates the store itself"}
		}
	}
	if fi.Mode().Perm()&^want != 0 {
		return &PermissionError{Path: path, Problem: fmt.Sprintf("has mode %04o, which lets others in", fi.Mode().Perm()),
			Fix: fmt.Sprintf("chmod %o %s (and check no one else read it: rotate what it holds if so)", want, path)}
	}
	return nil
}
