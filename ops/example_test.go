package ops

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkedExampleSQLiteMigration runs the README's worked example end to end against a
// real SQLite database with the real sqlite3 CLI: plan, diff (the schema before and after
// the migration, computed read-only in memory), approve, apply, verify, journal.
func TestWorkedExampleSQLiteMigration(t *testing.T) {
	for _, tool := range []string{"sqlite3", "bash", "diff"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: apt install sqlite3 bash diffutils", tool)
		}
	}
	e := newEnv(t)
	ctx := context.Background()
	for _, f := range []string{"plan.json", "migrate.sql", "seed.sql"} {
		b, err := os.ReadFile(filepath.Join("testdata", "sqlite-migration", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seed := exec.Command("sqlite3", "db.sqlite", ".read seed.sql")
	seed.Dir = e.dir
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("seed: %v %s", err, out)
	}

	// airlock ops plan --file plan.json (the CLI resolves "workdir": "." against the file's directory)
	var in PlanInput
	b, _ := os.ReadFile(filepath.Join(e.dir, "plan.json"))
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	in.Workdir = filepath.Join(e.dir, in.Workdir)
	pv, err := e.svc.OpsPlan(ctx, in)
	if err != nil {
		t.Fatal(err)
	}

	// airlock ops diff PLAN --run
	d, err := e.svc.OpsDiff(ctx, DiffInput{PlanID: pv.ID, Run: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL);",
		"+CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);",
		"+CREATE UNIQUE INDEX users_email ON users(email);"} {
		if !strings.Contains(d.Diff.Content, want) {
			t.Fatalf("diff lacks %q:\n%s", want, d.Diff.Content)
		}
	}
	if schema(t, e.dir) != "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL);" {
		t.Fatal("the diff changed the database")
	}

	// airlock ops approve PLAN (a person types the hash prefix)
	ap, err := e.svc.ApprovalPrompt(ctx, pv.ID)
	if err != nil || ap.WorstReversibility != Hard || ap.ApplyCommand != "sqlite3 -bail db.sqlite < migrate.sql" {
		t.Fatalf("approval prompt: %+v %v", ap, err)
	}
	ar, err := e.svc.OpsApprove(ctx, ApproveInput{PlanID: pv.ID, ConfirmHashPrefix: pv.Hash[:12]}, Attestation{By: "alice", Interactive: true})
	if err != nil {
		t.Fatal(err)
	}

	// airlock ops apply PLAN --token T
	res, err := e.svc.OpsApply(ctx, ApplyInput{PlanID: pv.ID, Token: ar.Token})
	if err != nil || res.Status != StatusApplied {
		t.Fatalf("apply: %+v %v", res, err)
	}
	if !strings.Contains(res.SnapshotAfter.Content, "email TEXT") || strings.Contains(res.SnapshotBefore.Content, "email") {
		t.Fatalf("snapshots: before %q after %q", res.SnapshotBefore.Content, res.SnapshotAfter.Content)
	}
	if !strings.Contains(schema(t, e.dir), "email TEXT") {
		t.Fatal("the migration did not reach the database")
	}

	// airlock ops verify PLAN
	vr, err := e.svc.OpsVerify(ctx, VerifyInput{PlanID: pv.ID})
	if err != nil || vr.Status != StatusVerified {
		t.Fatalf("verify: %+v %v", vr, err)
	}

	// airlock ops journal --plan PLAN --verify
	jo, err := e.svc.OpsJournal(ctx, JournalInput{PlanID: pv.ID, Verify: true})
	if err != nil || !jo.Verification.OK {
		t.Fatalf("journal: %+v %v", jo, err)
	}
	var events []string
	for _, x := range jo.Entries {
		events = append(events, x.Event)
	}
	if strings.Join(events, ",") != "planned,diff_attached,approved,apply_started,apply_finished,verified" {
		t.Fatalf("journal events: %v", events)
	}

	// Applying the same token again runs nothing.
	if _, err := e.svc.OpsApply(ctx, ApplyInput{PlanID: pv.ID, Token: ar.Token}); err == nil {
		t.Fatal("the token was accepted twice")
	}
}

func schema(t *testing.T, dir string) string {
	t.Helper()
	c := exec.Command("sqlite3", "-readonly", "db.sqlite", ".schema")
	c.Dir = dir
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
