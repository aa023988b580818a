package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestFileStoreRoundTripKeepsModes(t *testing.T) {
	data := t.TempDir()
	s := NewFileStore(data)
	ctx := context.Background()
	if err := s.Check(ctx); err != nil {
		t.Fatalf("an empty store does not check: %v", err)
	}
	if _, err := os.Stat(FileStoreDir(data)); !os.IsNotExist(err) {
		t.Fatal("a read created the store's directory")
	}
	if _, err := s.Get(ctx, "api.token"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of nothing = %v, want ErrNotFound", err)
	}
	if err := s.Set(ctx, "api.token", "hunter2 ✓"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "api.token"); err != nil || got != "hunter2 ✓" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	for path, want := range map[string]os.FileMode{FileStoreDir(data): 0o700, s.Path(): 0o600} {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: mode %v (%v), want %04o", path, fi.Mode(), err, want)
		}
	}
	if err := s.Delete(ctx, "api.token"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "api.token"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete = %v, want ErrNotFound", err)
	}
	if err := s.Set(ctx, "../x", "v"); err == nil {
		t.Fatal("a bad name was accepted")
	}
}

// TestFileStoreRefusesWhatOthersCouldReadOrSwap: a looser mode, a symlinked file or
// directory is refused, naming the path and the fix, and nothing is read through it.
func TestFileStoreRefusesWhatOthersCouldReadOrSwap(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, s *FileStore, data string)
		want  string
	}{
		{"group-readable file", func(t *testing.T, s *FileStore, _ string) {
			if err := os.Chmod(s.Path(), 0o640); err != nil {
				t.Fatal(err)
			}
		}, "chmod 600"},
		{"world-open directory", func(t *testing.T, s *FileStore, data string) {
			if err := os.Chmod(FileStoreDir(data), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "chmod 700"},
		{"symlinked file", func(t *testing.T, s *FileStore, _ string) {
			other := filepath.Join(t.TempDir(), "other.json")
			if err := os.WriteFile(other, []byte(`{"api.token":"planted"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(s.Path()); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, s.Path()); err != nil {
				t.Fatal(err)
			}
		}, "is a symlink"},
		{"symlinked directory", func(t *testing.T, s *FileStore, data string) {
			other := t.TempDir()
			if err := os.WriteFile(filepath.Join(other, "secrets.json"), []byte(`{"api.token":"planted"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(FileStoreDir(data)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, FileStoreDir(data)); err != nil {
				t.Fatal(err)
			}
		}, "is a symlink"},
		{"hard-linked file", func(t *testing.T, s *FileStore, _ string) {
			// The attack: a second name in a workspace a sandbox reads.
			if err := os.Link(s.Path(), filepath.Join(t.TempDir(), "hard.json")); err != nil {
				t.Fatal(err)
			}
		}, "has 2 hard links"},
		{"directory holding a directory", func(t *testing.T, s *FileStore, data string) {
			if err := os.Mkdir(filepath.Join(FileStoreDir(data), "sub"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, "holds directories"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			s := NewFileStore(data)
			if err := s.Set(ctx, "api.token", "real"); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, s, data)
			v, err := s.Get(ctx, "api.token")
			var pe *PermissionError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || v != "" {
				t.Fatalf("Get = %q, %v; want a PermissionError saying %q", v, err, tc.want)
			}
			if err := s.Check(ctx); !errors.As(err, &pe) {
				t.Fatalf("Check = %v, want the same refusal", err)
			}
			if err := s.Set(ctx, "other", "x"); !errors.As(err, &pe) {
				t.Fatalf("Set = %v, want the same refusal", err)
			}
		})
	}
}

// TestFileStoreWritesANewFileEachTime: every write is a new inode of one link, made
// in the store's directory, and leaves no temporary file: a name someone gave the old
// file never sees what is written after.
func TestFileStoreWritesANewFileEachTime(t *testing.T) {
	data := t.TempDir()
	s := NewFileStore(data)
	ctx := context.Background()
	if err := s.Set(ctx, "a", "first"); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "b", "second"); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Error("the second write rewrote the same file in place")
	}
	entries, _ := os.ReadDir(FileStoreDir(data))
	for _, e := range entries {
		if e.Name() != "secrets.json" && e.Name() != ".lock" {
			t.Errorf("left behind in the store: %s", e.Name())
		}
	}
}

// TestFileStoreConcurrentWritersLoseNothing: two stores (as two processes would) set
// different names at once; every one is kept.
func TestFileStoreConcurrentWritersLoseNothing(t *testing.T) {
	data := t.TempDir()
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 2 {
		s := NewFileStore(data)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if err := s.Set(ctx, fmt.Sprintf("w%d.n%d", w, i), "v"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	s := NewFileStore(data)
	for w := range 2 {
		for i := range 25 {
			if _, err := s.Get(ctx, fmt.Sprintf("w%d.n%d", w, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestUnavailableKeyringNamesTheFileStore: without a session bus the keyring store
// fails with the two ways out, the file store named exactly as config.toml takes it,
// and does not fall back to a file.
func TestUnavailableKeyringNamesTheFileStore(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if !sessionBusMissing(os.Getenv) {
		t.Skip("a bus socket exists at /run/user/<uid>/bus")
	}
	err := New().Set(context.Background(), "api.token", "v")
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("Set = %v, want UnavailableError", err)
	}
	for _, want := range []string{"gnome-keyring-daemon", "[secrets]", `store = "file"`, "config.toml", "never switches to the file by itself"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %s", want, err)
		}
	}
}

func TestOpenChoosesTheStore(t *testing.T) {
	data := t.TempDir()
	for kind, want := range map[Kind]Kind{"": KindKeyring, KindKeyring: KindKeyring, KindFile: KindFile} {
		b, err := Open(kind, data)
		if err != nil || b.Kind() != want {
			t.Fatalf("Open(%q) = %v, %v", kind, b, err)
		}
	}
	if b, _ := Open(KindFile, data); b.Where() != filepath.Join(data, "secrets", "secrets.json") {
		t.Fatalf("file store at %s", b.Where())
	}
	if _, err := Open("plaintext", data); err == nil || !strings.Contains(err.Error(), `"keyring"`) {
		t.Fatalf("Open(plaintext) = %v", err)
	}
}
