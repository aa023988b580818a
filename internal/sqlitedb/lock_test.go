package sqlitedb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One core per database: a second lock is refused with the way out until the first is
// released; a link planted where the lock goes is not followed.
func TestLock(t *testing.T) {
	db := filepath.Join(t.TempDir(), "airlock.db")
	first, err := Lock(db)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := Lock(db); err == nil || !strings.Contains(err.Error(), "another Airlock core already uses the database") {
		if second != nil {
			second.Close()
		}
		t.Fatalf("a second lock = %v; want refused while the first is held", err)
	}
	first.Close()
	again, err := Lock(db)
	if err != nil {
		t.Fatalf("lock after the first was released: %v", err)
	}
	again.Close()

	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	linked := filepath.Join(dir, "linked.db")
	if err := os.Symlink(target, linked+".lock"); err != nil {
		t.Fatal(err)
	}
	if f, err := Lock(linked); err == nil {
		f.Close()
		t.Fatal("the lock followed a symbolic link")
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the link's target was created: %v", err)
	}
}
