//go:build linux

package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/airlock-app/airlock/ops/internal/swaptest"
)

// realKeyring returns a key source over the real Secret Service, or skips when none
// answers (scripts/with-test-keyring.sh starts one).
func realKeyring(t *testing.T) StoredKeySource {
	t.Helper()
	service := fmt.Sprintf("airlock-test-ops-rollback-%d", os.Getpid())
	probe := make(chan error, 1)
	go func() { _, err := keyring.Get(service, "probe"); probe <- err }()
	var err error
	select {
	case err = <-probe:
	case <-time.After(10 * time.Second):
		err = errors.New("no answer in 10s")
	}
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		if os.Getenv("AIRLOCK_REQUIRE_KEYRING") == "1" {
			t.Fatalf("the keyring is required here but: %v", err)
		}
		t.Skipf("no Secret Service answers on this session bus (run under scripts/with-test-keyring.sh): %v", err)
	}
	t.Cleanup(func() {
		_ = keyring.Delete(service, JournalKeyName)
		_ = keyring.Delete(service, JournalCounterName)
	})
	return StoredKeySource{Store: goKeyring{service: service}, IsNotFound: func(err error) bool { return errors.Is(err, keyring.ErrNotFound) }}
}

// The attack: save the project's head row and the anchor file, let the journal grow,
// delete the new entries with the sqlite3 CLI and put the saved head row and anchor
// file back. Both are authentic (written with the key), so only the counter kept in
// the secret store shows the journal was rolled back.
func TestJournalRestoredToAnOlderHeadIsRolledBack(t *testing.T) {
	swaptest.NeedSQLite3(t)
	stores := map[string]func(t *testing.T) KeySource{
		"real keyring": func(t *testing.T) KeySource { return realKeyring(t) },
		"memory store": func(*testing.T) KeySource {
			return StoredKeySource{Store: memStore{}, IsNotFound: func(err error) bool { return errors.Is(err, errNoSecret) }}
		},
	}
	for name, keys := range stores {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			ks := keys(t)
			svc, err := Open(context.Background(), Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: ks})
			if err != nil {
				t.Fatal(err)
			}
			e.svc = svc
			fillJournal(t, e, 3)
			anchorPath := AnchorPath(e.state)
			savedAnchor, err := os.ReadFile(anchorPath)
			if err != nil {
				t.Fatal(err)
			}
			savedHead := swaptest.SQLite3(t, e.dbDir, "airlock.db", "SELECT seq || '|' || hash || '|' || mac FROM ops_journal_heads WHERE project = '"+tamperProject+"'")
			parts := strings.Split(savedHead, "|")
			if len(parts) != 3 || parts[0] != "3" {
				t.Fatalf("saved head: %q", savedHead)
			}
			fillJournal(t, e, 2)
			swaptest.SQLite3(t, e.dbDir, "airlock.db", "DROP TRIGGER IF EXISTS ops_journal_no_delete; "+
				"DELETE FROM ops_journal_entries WHERE project = '"+tamperProject+"' AND seq > 3; "+
				"UPDATE ops_journal_heads SET seq = "+parts[0]+", hash = '"+parts[1]+"', mac = '"+parts[2]+"' WHERE project = '"+tamperProject+"';")
			if err := os.WriteFile(anchorPath, savedAnchor, 0o600); err != nil {
				t.Fatal(err)
			}
			// A fresh service (an app restart) over the restored database and anchor.
			again, err := Open(context.Background(), Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: ks})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := again.VerifyJournal(context.Background(), tamperProject)
			if err != nil {
				t.Fatal(err)
			}
			var rolled *JournalProblem
			for i, p := range rep.Problems {
				if p.Kind == ProblemRolledBack {
					rolled = &rep.Problems[i]
				}
			}
			if rep.OK || rolled == nil || rolled.Seq != 5 || rep.Expected != 5 ||
				!strings.Contains(rolled.Detail, "records seq 5") || !strings.Contains(rolled.Detail, "only seq 3") ||
				!strings.Contains(rolled.Detail, "entries 4 to 5 were deleted") {
				t.Fatalf("restored older head: %+v", rep)
			}
			t.Log(rolled)
			// Appending more does not paper over it: the counter keeps the newest head.
			fillJournal(t, &env{svc: again}, 4)
			rep, _ = again.VerifyJournal(context.Background(), tamperProject)
			if rep.OK || !strings.Contains(problemList(rep.Problems), "rolled back: seq 5: the journal was rolled back") {
				t.Fatalf("appends after the rollback hid it: %+v", rep)
			}
		})
	}
}

// An untouched journal under a counter verifies, across restarts.
func TestJournalCounterKeepsAnIntactJournalOK(t *testing.T) {
	e := newEnv(t)
	ks := StoredKeySource{Store: memStore{}, IsNotFound: func(err error) bool { return errors.Is(err, errNoSecret) }}
	svc, err := Open(context.Background(), Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: ks})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	fillJournal(t, e, 4)
	again, _ := Open(context.Background(), Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: ks})
	if rep, err := again.VerifyJournal(context.Background(), tamperProject); err != nil || !rep.OK {
		t.Fatalf("intact journal: %+v %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(e.state, "journal-anchor.json")); err != nil {
		t.Fatal(err)
	}
}
