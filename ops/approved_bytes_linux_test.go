//go:build linux

package ops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/ops/internal/swaptest"
)

const (
	approvedSQL = "ALTER TABLE users ADD COLUMN email TEXT;\n"
	swappedSQL  = "DROP TABLE users;\n"
)

// migration sets up a real database with a users table, the approved migrate.sql, and
// the attacker's replacement outside the working directory; it returns the plan.
func (e *env) migration(t testing.TB, apply Command) (PlanInput, string) {
	t.Helper()
	swaptest.SQLite3(t, e.dir, "db.sqlite", "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES ('ada'), ('bob');")
	if err := os.WriteFile(filepath.Join(e.dir, "migrate.sql"), []byte(approvedSQL), 0o644); err != nil {
		t.Fatal(err)
	}
	evil := filepath.Join(e.dbDir, "evil.sql")
	if err := os.WriteFile(evil, []byte(swappedSQL), 0o644); err != nil {
		t.Fatal(err)
	}
	in := e.plan()
	in.Target = Target{Provider: "sqlite", Device: "db.sqlite"}
	in.Intent = "add an email column to users"
	in.Apply = apply
	in.Snapshot = Command{}
	in.Diff = Command{Argv: []string{"cat", "migrate.sql"}}
	in.Inputs = []string{"migrate.sql"}
	in.Steps = []Step{{Description: "ALTER TABLE users ADD COLUMN email TEXT", Effect: "add column", Reversibility: Hard, BlastRadius: BlastLow}}
	in.Verify = []Assertion{{Command: `sqlite3 -readonly db.sqlite "SELECT count(*) FROM pragma_table_info('users') WHERE name = 'email'"`, ExpectText: "1"}}
	return in, evil
}

// An attacker swaps migrate.sql (rename over it) the moment the apply opens or reads
// anything in the working directory: what runs is always the approved SQL, or nothing.
func TestApplyRunsTheApprovedInputWhileItIsSwapped(t *testing.T) {
	swaptest.NeedSQLite3(t)
	ctx := context.Background()
	cases := []struct {
		name  string
		apply func(dir string) Command
	}{
		{"shell redirect", func(string) Command { return Command{Shell: "sqlite3 -bail db.sqlite < migrate.sql"} }},
		{"argv .read", func(string) Command {
			return Command{Argv: []string{"sqlite3", "-bail", "db.sqlite", ".read migrate.sql"}}
		}},
		{"shell, absolute path, quoted", func(dir string) Command {
			return Command{Shell: "cat '" + filepath.Join(dir, "migrate.sql") + "' | sqlite3 -bail db.sqlite"}
		}},
	}
	const rounds = 12
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			applied := 0
			for round := range rounds {
				e := newEnv(t)
				in, evil := e.migration(t, tc.apply(e.dir))
				v, token := e.approved(t, in)
				stop := swaptest.Start(t, e.dir, "migrate.sql", evil, 64)
				_, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{})
				stop()
				if tables := swaptest.SQLite3(t, e.dir, "db.sqlite", "SELECT name FROM sqlite_master WHERE type = 'table'"); tables != "users" {
					t.Fatalf("round %d: the swapped SQL ran (tables now %q); apply: %v", round, tables, err)
				}
				email := swaptest.SQLite3(t, e.dir, "db.sqlite", "SELECT count(*) FROM pragma_table_info('users') WHERE name = 'email'")
				var de *DriftError
				switch {
				case err == nil && email == "1":
					applied++
				case errors.As(err, &de) && de.Field == FieldInputs && email == "0" && !e.tokenUsed(t, token):
					// Swapped before the drift check: refused, nothing ran.
				default:
					t.Fatalf("round %d: apply %v, email column %s", round, err, email)
				}
			}
			if applied == 0 {
				t.Fatal("no round applied: the test never reached the run")
			}
			t.Logf("%d of %d rounds applied the approved SQL while migrate.sql was being swapped", applied, rounds)
		})
	}
}

// A change after approval is drift, and the approved copy is what a later approval
// pins: restoring the file is not needed for the store, only for the drift check.
func TestApprovedInputIsKeptInTheStateDirectory(t *testing.T) {
	swaptest.NeedSQLite3(t)
	e := newEnv(t)
	in, _ := e.migration(t, Command{Shell: "sqlite3 -bail db.sqlite < migrate.sql"})
	e.approved(t, in)
	copyPath := filepath.Join(e.state, "inputs", sha256Hex([]byte(approvedSQL)))
	b, err := os.ReadFile(copyPath)
	if err != nil || string(b) != approvedSQL {
		t.Fatalf("approved copy: %q %v", b, err)
	}
	if fi, err := os.Stat(copyPath); err != nil || fi.Mode().Perm() != 0o500 {
		t.Fatalf("approved copy mode: %v %v", fi.Mode(), err)
	}
	// A damaged copy refuses the apply before the token is spent.
	os.Chmod(copyPath, 0o600)
	os.WriteFile(copyPath, []byte(swappedSQL), 0o600)
	v, token := e.approved(t, func() PlanInput { in.Intent = "again"; return in }())
	os.WriteFile(copyPath, []byte(swappedSQL), 0o600)
	var de *DriftError
	if _, err := e.svc.Apply(context.Background(), v.ID, token, ApplyOptions{}); !errors.As(err, &de) || de.Field != FieldInputs ||
		!strings.Contains(de.Detail, "missing or damaged") || e.tokenUsed(t, token) {
		t.Fatalf("apply with a damaged copy: %v", err)
	}
	if tables := swaptest.SQLite3(t, e.dir, "db.sqlite", "SELECT name FROM sqlite_master WHERE type = 'table'"); tables != "users" {
		t.Fatalf("tables: %q", tables)
	}
}

// Another real directory moved to the approved working directory's path, with the same
// input files, is drift: refused with a clear message, nothing runs, the token is kept.
func TestWorkdirSwappedForAnotherDirectoryIsDrift(t *testing.T) {
	swaptest.NeedSQLite3(t)
	e := newEnv(t)
	in, _ := e.migration(t, Command{Shell: "sqlite3 -bail db.sqlite < migrate.sql"})
	v, token := e.approved(t, in)
	decoy := filepath.Join(e.dbDir, "decoy")
	if err := os.Mkdir(decoy, 0o755); err != nil {
		t.Fatal(err)
	}
	swaptest.SQLite3(t, decoy, "db.sqlite", "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);")
	os.WriteFile(filepath.Join(decoy, "migrate.sql"), []byte(approvedSQL), 0o644)
	if err := os.Rename(e.dir, e.dir+".approved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(decoy, e.dir); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Apply(context.Background(), v.ID, token, ApplyOptions{})
	var de *DriftError
	if !errors.As(err, &de) || de.Field != FieldWorkdir || !strings.Contains(de.Detail, "is not the directory that was approved") ||
		!strings.Contains(de.Detail, "another directory was moved to its path") {
		t.Fatalf("apply in the swapped directory: %v", err)
	}
	if e.tokenUsed(t, token) {
		t.Fatal("the token was spent")
	}
	if n := swaptest.SQLite3(t, e.dir, "db.sqlite", "SELECT count(*) FROM pragma_table_info('users') WHERE name = 'email'"); n != "0" {
		t.Fatal("the apply ran in the decoy directory")
	}
	// The approved directory back in place: the same token applies.
	os.Rename(e.dir, decoy)
	os.Rename(e.dir+".approved", e.dir)
	if _, err := e.svc.Apply(context.Background(), v.ID, token, ApplyOptions{}); err != nil {
		t.Fatalf("apply in the approved directory: %v", err)
	}
}

// Someone with the sqlite3 CLI deletes a project's journal rows and its head (dropping
// the guard first): verify says the journal was truncated, from the anchor kept outside
// the database.
func TestJournalWipedWithTheSQLiteCLIIsDetected(t *testing.T) {
	swaptest.NeedSQLite3(t)
	e := newEnv(t)
	fillJournal(t, e, 5)
	e.journalOK(t, tamperProject)
	swaptest.SQLite3(t, e.dbDir, "airlock.db", "DROP TRIGGER IF EXISTS ops_journal_no_delete; "+
		"DELETE FROM ops_journal_entries WHERE project = '"+tamperProject+"'; DELETE FROM ops_journal_heads WHERE project = '"+tamperProject+"';")
	rep, err := e.svc.VerifyJournal(context.Background(), tamperProject)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.Entries != 0 || rep.Expected != 5 {
		t.Fatalf("after the wipe: %+v", rep)
	}
	found := false
	for _, p := range rep.Problems {
		if p.Kind == ProblemTruncated && strings.Contains(p.Detail, "5 entries expected, 0 found: the journal was truncated") {
			found = true
		}
	}
	if !found {
		t.Fatalf("problems: %s", problemList(rep.Problems))
	}
	// A fresh service over the same database and state (an app restart) still sees it.
	again, err := Open(context.Background(), Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: e.keys})
	if err != nil {
		t.Fatal(err)
	}
	if rep, _ := again.VerifyJournal(context.Background(), tamperProject); rep.OK {
		t.Fatal("the restart forgot the wipe")
	}
	// Deleting the anchor too is named, not passed as an empty journal.
	fillJournal(t, e, 1)
	os.Remove(filepath.Join(e.state, "journal-anchor.json"))
	rep, _ = e.svc.VerifyJournal(context.Background(), tamperProject)
	if rep.OK || len(rep.Problems) == 0 || rep.Problems[0].Kind != ProblemAnchor {
		t.Fatalf("anchor deleted: %+v", rep)
	}
}

// Editing the anchor without the key is detected like editing an entry.
func TestJournalAnchorEditedWithoutTheKey(t *testing.T) {
	e := newEnv(t)
	fillJournal(t, e, 3)
	path := filepath.Join(e.state, "journal-anchor.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"seq": 3`, `"seq": 2`, 1)
	if edited == string(b) {
		t.Fatalf("anchor file: %s", b)
	}
	os.WriteFile(path, []byte(edited), 0o600)
	rep, _ := e.svc.VerifyJournal(context.Background(), tamperProject)
	if rep.OK || rep.Problems[0].Kind != ProblemAnchor || !strings.Contains(rep.Problems[0].Detail, "edited without the key") {
		t.Fatalf("anchor edited: %+v", rep)
	}
	// The service never overwrites an anchor that does not authenticate.
	fillJournal(t, e, 1)
	if after, _ := os.ReadFile(path); string(after) != edited {
		t.Fatal("the edited anchor was replaced")
	}
}
