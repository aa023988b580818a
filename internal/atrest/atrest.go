// Package atrest is for tests only: it checks that no secret lies at rest in the one
// SQLite database, as bytes in the file or its write-ahead log (what any process that
// can read the data directory sees). The tests of permission, dispatch and ops use it.
package atrest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check fails the test for each secret found in the database at dbPath or in its WAL,
// and when neither file exists (then nothing was checked); when names the moment.
func Check(t testing.TB, dbPath, when string, secrets ...string) {
	t.Helper()
	found := 0
	for _, f := range []string{dbPath, dbPath + "-wal"} {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		found++
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s: %q is in %s", when, s, filepath.Base(f))
			}
		}
	}
	if found == 0 {
		t.Fatalf("%s: no database file at %s", when, dbPath)
	}
}
