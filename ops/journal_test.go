package ops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/redact"
)

const tamperProject = "name:tamper"

func fillJournal(t testing.TB, e *env, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		if _, err := e.svc.appendJournal(context.Background(), journalRecord{Project: tamperProject, PlanID: "op-x",
			Event: EventPlanned, Status: StatusDraft, Actor: "t", Detail: map[string]any{"i": i}}); err != nil {
			t.Fatal(err)
		}
	}
}

func mustExec(t *testing.T, db *gorm.DB, sql string, args ...any) {
	t.Helper()
	if err := db.Exec(sql, args...).Error; err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// forge builds a row the way an attacker without the key would: correct hash, made-up MAC.
func forge(seq int64, prev string) JournalEntry {
	f := JournalEntry{Project: tamperProject, Seq: seq, PlanID: "op-x", Event: EventApproved, Status: StatusApproved,
		Actor: "mallory", At: "2026-09-04T12:00:00Z", Detail: `{"by":"mallory"}`, PrevHash: prev}
	f.Hash = entryHash(&f)
	f.MAC = strings.Repeat("ab", 32)
	return f
}

func rowAt(t *testing.T, db *gorm.DB, seq int64) JournalEntry {
	t.Helper()
	var r JournalEntry
	if err := db.First(&r, "project = ? AND seq = ?", tamperProject, seq).Error; err != nil {
		t.Fatal(err)
	}
	return r
}

func TestJournalTamperingIsDetectedAndNamed(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, e *env)
		kind   string
		seq    int64
	}{
		{"edit a detail", func(t *testing.T, e *env) {
			mustExec(t, e.db, `UPDATE ops_journal_entries SET detail = '{"i":99}' WHERE seq = 4`)
		}, ProblemEdited, 4},
		{"edit the event and recompute the hash", func(t *testing.T, e *env) {
			r := rowAt(t, e.db, 4)
			r.Event = EventRejected
			mustExec(t, e.db, `UPDATE ops_journal_entries SET event = ?, hash = ? WHERE id = ?`, r.Event, entryHash(&r), r.ID)
		}, ProblemEdited, 4},
		{"edit the actor", func(t *testing.T, e *env) {
			mustExec(t, e.db, `UPDATE ops_journal_entries SET actor = 'someone else' WHERE seq = 1`)
		}, ProblemEdited, 1},
		{"delete a row in the middle", func(t *testing.T, e *env) {
			mustExec(t, e.db, `DELETE FROM ops_journal_entries WHERE seq = 4`)
		}, ProblemDeleted, 4},
		{"delete the first row", func(t *testing.T, e *env) {
			mustExec(t, e.db, `DELETE FROM ops_journal_entries WHERE seq = 1`)
		}, ProblemDeleted, 1},
		{"delete the newest rows", func(t *testing.T, e *env) {
			mustExec(t, e.db, `DELETE FROM ops_journal_entries WHERE seq >= 7`)
		}, ProblemDeleted, 7},
		{"delete the newest row and the head", func(t *testing.T, e *env) {
			mustExec(t, e.db, `DELETE FROM ops_journal_entries WHERE seq = 8`)
			mustExec(t, e.db, `DELETE FROM ops_journal_heads`)
		}, ProblemTruncated, 8}, // the anchor outside the database still says 8
		{"delete every row of the project and its head", func(t *testing.T, e *env) {
			mustExec(t, e.db, `DELETE FROM ops_journal_entries WHERE project = ?`, tamperProject)
			mustExec(t, e.db, `DELETE FROM ops_journal_heads WHERE project = ?`, tamperProject)
		}, ProblemTruncated, 1},
		{"delete the newest row and the head, then keep using the journal", func(t *testing.T, e *env) {
			mustExec(t, e.db, `DELETE FROM ops_journal_entries WHERE seq = 8`)
			mustExec(t, e.db, `DELETE FROM ops_journal_heads`)
			fillJournal(t, e, 1)
		}, ProblemHead, 8},
		{"insert a forged row at the end", func(t *testing.T, e *env) {
			f := forge(9, rowAt(t, e.db, 8).Hash)
			if err := e.db.Create(&f).Error; err != nil {
				t.Fatal(err)
			}
		}, ProblemInserted, 9},
		{"insert a forged row in the middle, renumbering the rest", func(t *testing.T, e *env) {
			mustExec(t, e.db, `UPDATE ops_journal_entries SET seq = seq + 1000 WHERE seq >= 4`)
			mustExec(t, e.db, `UPDATE ops_journal_entries SET seq = seq - 999 WHERE seq >= 1000`)
			f := forge(4, rowAt(t, e.db, 3).Hash)
			if err := e.db.Create(&f).Error; err != nil {
				t.Fatal(err)
			}
		}, ProblemInserted, 4},
		{"insert a duplicate seq after dropping the unique index", func(t *testing.T, e *env) {
			mustExec(t, e.db, `DROP INDEX idx_ops_journal_project_seq`)
			f := forge(4, rowAt(t, e.db, 3).Hash)
			if err := e.db.Create(&f).Error; err != nil {
				t.Fatal(err)
			}
		}, ProblemInserted, 4},
		{"insert a copy of a genuine row", func(t *testing.T, e *env) {
			mustExec(t, e.db, `DROP INDEX idx_ops_journal_project_seq`)
			r := rowAt(t, e.db, 5)
			r.ID = 0
			if err := e.db.Create(&r).Error; err != nil {
				t.Fatal(err)
			}
		}, ProblemInserted, 5},
		{"reorder by swapping seq numbers", func(t *testing.T, e *env) {
			mustExec(t, e.db, `UPDATE ops_journal_entries SET seq = 1000 WHERE seq = 4`)
			mustExec(t, e.db, `UPDATE ops_journal_entries SET seq = 4 WHERE seq = 5`)
			mustExec(t, e.db, `UPDATE ops_journal_entries SET seq = 5 WHERE seq = 1000`)
		}, ProblemReordered, 4},
		{"reorder by swapping whole rows", func(t *testing.T, e *env) {
			a, b := rowAt(t, e.db, 4), rowAt(t, e.db, 5)
			mustExec(t, e.db, `DELETE FROM ops_journal_entries WHERE id IN (?, ?)`, a.ID, b.ID)
			a.ID, b.ID = b.ID, a.ID
			if err := e.db.Create(&a).Error; err != nil {
				t.Fatal(err)
			}
			if err := e.db.Create(&b).Error; err != nil {
				t.Fatal(err)
			}
		}, ProblemReordered, 4},
		{"edit the head", func(t *testing.T, e *env) {
			mustExec(t, e.db, `UPDATE ops_journal_heads SET seq = 6, hash = ?`, rowAt(t, e.db, 6).Hash)
		}, ProblemHead, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			fillJournal(t, e, 8)
			rep, err := e.svc.VerifyJournal(context.Background(), tamperProject)
			if err != nil || !rep.OK || rep.Entries != 8 {
				t.Fatalf("clean journal: %+v %v", rep, err)
			}
			dropGuards(t, e)
			tc.tamper(t, e)
			rep, err = e.svc.VerifyJournal(context.Background(), tamperProject)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK {
				t.Fatal("tampering not detected")
			}
			found := false
			for _, p := range rep.Problems {
				if p.Kind == tc.kind && p.Seq == tc.seq {
					found = true
				}
			}
			t.Logf("problems:\n%s", problemList(rep.Problems))
			if !found {
				t.Fatalf("want %s at seq %d, got:\n%s", tc.kind, tc.seq, problemList(rep.Problems))
			}
		})
	}
}

// dropGuards removes the triggers, as someone editing the database file would.
func dropGuards(t *testing.T, e *env) {
	t.Helper()
	for _, g := range []string{"ops_journal_no_update", "ops_journal_no_delete", "ops_plans_immutable"} {
		mustExec(t, e.db, "DROP TRIGGER "+g)
	}
}

func TestGuardsRefuseEditsThroughTheDatabase(t *testing.T) {
	e := newEnv(t)
	fillJournal(t, e, 2)
	v := e.create(t, e.plan())
	for _, sql := range []string{
		`UPDATE ops_journal_entries SET actor = 'x' WHERE seq = 1`,
		`DELETE FROM ops_journal_entries WHERE seq = 2`,
		`UPDATE ops_plans SET spec = '{}' WHERE id = '` + v.ID + `'`,
		`UPDATE ops_plans SET hash = 'x' WHERE id = '` + v.ID + `'`,
	} {
		if err := e.db.Exec(sql).Error; err == nil || !strings.Contains(err.Error(), "ops") {
			t.Errorf("%s: %v", sql, err)
		}
	}
	// Status changes still work (the flow needs them), and the journal still verifies.
	e.diff(t, v.ID)
	e.journalOK(t, tamperProject)
}

func problemList(ps []JournalProblem) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	return b.String()
}

func TestJournalUnderAnotherKey(t *testing.T) {
	e := newEnv(t)
	fillJournal(t, e, 3)
	other, err := New(Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: newMemKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := other.VerifyJournal(context.Background(), tamperProject)
	if err != nil {
		t.Fatal(err)
	}
	// The anchor, written under the real key, does not authenticate either.
	kinds := map[string]bool{}
	for _, p := range rep.Problems {
		kinds[p.Kind] = true
	}
	if rep.OK || len(rep.Problems) != 2 || !kinds[ProblemKey] || !kinds[ProblemAnchor] {
		t.Fatalf("journal under another key: %+v", rep)
	}
}

func TestJournalSurvivesRestartAndIsProjectScoped(t *testing.T) {
	e := newEnv(t)
	fillJournal(t, e, 3)
	if _, err := e.svc.appendJournal(context.Background(), journalRecord{Project: "name:other", Event: EventPlanned}); err != nil {
		t.Fatal(err)
	}
	// A new service over the same database and key (an app restart) continues the chain.
	again, err := New(Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: e.keys})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.appendJournal(context.Background(), journalRecord{Project: tamperProject, Event: EventPlanned}); err != nil {
		t.Fatal(err)
	}
	entries, err := again.Journal(context.Background(), JournalQuery{Project: tamperProject})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || entries[3].Seq != 4 || entries[3].PrevHash != entries[2].Hash {
		t.Fatalf("chain across restart: %+v", entries)
	}
	for _, p := range []string{tamperProject, "name:other"} {
		rep, _ := again.VerifyJournal(context.Background(), p)
		if !rep.OK {
			t.Fatalf("%s: %+v", p, rep.Problems)
		}
	}
	other, _ := again.Journal(context.Background(), JournalQuery{Project: "name:other"})
	if len(other) != 1 || other[0].Seq != 1 {
		t.Fatalf("other project: %+v", other)
	}
}

func TestJournalRedactsDetail(t *testing.T) {
	e := newEnv(t)
	if _, err := e.svc.appendJournal(context.Background(), journalRecord{Project: tamperProject, Event: EventApplyFailed,
		Actor: "bob", Detail: map[string]any{"output": "export GITHUB_TOKEN=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"}}); err != nil {
		t.Fatal(err)
	}
	entries, _ := e.svc.Journal(context.Background(), JournalQuery{Project: tamperProject})
	if strings.Contains(entries[0].Detail, "ghp_") || !strings.Contains(entries[0].Detail, redact.Marker) {
		t.Fatalf("detail: %s", entries[0].Detail)
	}
	e.journalOK(t, tamperProject)
}

// Two services on two connections to one database file (the daemon and a CLI, say)
// append to one journal at the same time: the chain stays whole.
func TestJournalConcurrentWritersOnTwoConnections(t *testing.T) {
	e := newEnv(t)
	other := openDB(t, e.dbDir+"/airlock.db")
	svc2, err := New(Config{DB: other, Runner: LocalRunner{}, StateDir: e.state, Keys: e.keys})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 100)
	for i := range 100 {
		s := e.svc
		if i%2 == 1 {
			s = svc2
		}
		go func() {
			_, err := s.appendJournal(context.Background(), journalRecord{Project: tamperProject, Event: EventPlanned, Detail: map[string]any{"i": i}})
			errs <- err
		}()
	}
	for range 100 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rep, err := e.svc.VerifyJournal(context.Background(), tamperProject)
	if err != nil || !rep.OK || rep.Entries != 100 || rep.LastSeq != 100 {
		t.Fatalf("%+v %v", rep, err)
	}
}

// A journal written before the anchor existed is anchored when the service opens, from
// the heads that authenticate; a wipe after that is caught.
func TestOpenAnchorsAJournalWrittenBeforeAnchoring(t *testing.T) {
	e := newEnv(t)
	fillJournal(t, e, 4)
	anchor := filepath.Join(e.state, "journal-anchor.json")
	if err := os.Remove(anchor); err != nil {
		t.Fatal(err)
	}
	svc, err := Open(context.Background(), Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: e.keys})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := svc.VerifyJournal(context.Background(), tamperProject); err != nil || !rep.OK {
		t.Fatalf("after adoption: %+v %v", rep, err)
	}
	dropGuards(t, e)
	mustExec(t, e.db, `DELETE FROM ops_journal_entries WHERE project = ?`, tamperProject)
	mustExec(t, e.db, `DELETE FROM ops_journal_heads WHERE project = ?`, tamperProject)
	rep, _ := svc.VerifyJournal(context.Background(), tamperProject)
	if rep.OK || rep.Expected != 4 || rep.Problems[0].Kind != ProblemTruncated {
		t.Fatalf("after the wipe: %+v", rep)
	}
}
