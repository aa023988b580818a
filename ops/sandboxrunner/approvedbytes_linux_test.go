//go:build linux

package sandboxrunner

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/internal/testdb"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/ops/internal/swaptest"
)

// swapBeforeApply is the attacker at its best moment: it renames its SQL over
// migrate.sql after every check of the apply passed, just before the real sandbox runs
// the command.
type swapBeforeApply struct {
	Runner
	dir, evil string
}

func (s swapBeforeApply) Run(ctx context.Context, spec ops.RunSpec) (ops.RunResult, error) {
	if spec.Purpose == "apply" {
		b, _ := os.ReadFile(s.evil)
		tmp := filepath.Join(filepath.Dir(s.dir), "swap.tmp")
		os.WriteFile(tmp, b, 0o644)
		os.Rename(tmp, filepath.Join(s.dir, "migrate.sql"))
	}
	return s.Runner.Run(ctx, spec)
}

// migrationService is a real ops service over real SQLite whose commands run in the real
// sandbox, with the attacker swapping migrate.sql for DROP TABLE users right before the
// apply runs.
func migrationService(t *testing.T) (*ops.Service, string) {
	t.Helper()
	root := workDir(t)
	dir := filepath.Join(root, "shop")
	os.Mkdir(dir, 0o755)
	swaptest.SQLite3(t, dir, "db.sqlite", "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES ('ada');")
	os.WriteFile(filepath.Join(dir, "migrate.sql"), []byte("ALTER TABLE users ADD COLUMN email TEXT;\n"), 0o644)
	evil := filepath.Join(root, "evil.sql")
	os.WriteFile(evil, []byte("DROP TABLE users;\n"), 0o644)
	db := testdb.Open(t, filepath.Join(root, "airlock.db"), ops.Migrate)
	key := make(memKeys, 32)
	rand.Read(key)
	state := filepath.Join(root, "state")
	r := swapBeforeApply{Runner: Runner{Policy: workspaceWrite(false), HiddenPaths: []string{state}}, dir: dir, evil: evil}
	svc, err := ops.New(ops.Config{DB: db, Runner: r, Keys: key, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	return svc, dir
}

func migrationPlan(dir string, apply ops.Command, inputs ...string) ops.PlanInput {
	return ops.PlanInput{OperationPlan: ops.OperationPlan{
		Target: ops.Target{Provider: "sqlite", Device: "db.sqlite"}, Intent: "add an email column", Apply: apply,
		Diff: ops.Command{Argv: []string{"echo", "+email"}}, Workdir: dir, Inputs: inputs,
		Steps:  []ops.Step{{Description: "ALTER TABLE users ADD COLUMN email TEXT", Effect: "add column", Reversibility: ops.Hard, BlastRadius: ops.BlastLow}},
		Verify: []ops.Assertion{{Command: "sqlite3 -readonly db.sqlite .schema", ExpectText: "email"}},
	}, By: "agent"}
}

// Approved for ALTER TABLE, the file swapped for DROP TABLE right before the apply runs,
// whatever spelling of migrate.sql the command uses: the approved ALTER runs, never the
// DROP.
func TestApplyRunsOnlyTheApprovedBytesByAnySpelling(t *testing.T) {
	needSandbox(t)
	swaptest.NeedSQLite3(t)
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(dir string)
		apply func(dir string) ops.Command
	}{
		{".//", nil, func(string) ops.Command { return ops.Command{Shell: "sqlite3 -bail db.sqlite < .//migrate.sql"} }},
		{"x/..", func(dir string) { os.Mkdir(filepath.Join(dir, "x"), 0o755) },
			func(string) ops.Command { return ops.Command{Shell: "sqlite3 -bail db.sqlite < ./x/../migrate.sql"} }},
		{"absolute, doubled slash", nil, func(dir string) ops.Command {
			return ops.Command{Argv: []string{"sqlite3", "-bail", "db.sqlite", ".read " + dir + "//migrate.sql"}}
		}},
		{"symlink", func(dir string) { os.Symlink("migrate.sql", filepath.Join(dir, "link.sql")) },
			func(string) ops.Command { return ops.Command{Shell: "sqlite3 -bail db.sqlite < link.sql"} }},
		{"named twice, once plainly", nil, func(string) ops.Command {
			return ops.Command{Shell: "test -s migrate.sql && sqlite3 -bail db.sqlite < .//migrate.sql"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc, dir := migrationService(t)
			if tc.setup != nil {
				tc.setup(dir)
			}
			pv, err := svc.OpsPlan(ctx, migrationPlan(dir, tc.apply(dir), "migrate.sql"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.OpsDiff(ctx, ops.DiffInput{PlanID: pv.ID, Run: true}); err != nil {
				t.Fatal(err)
			}
			ar, err := svc.OpsApprove(ctx, ops.ApproveInput{PlanID: pv.ID, ConfirmHashPrefix: pv.Hash[:8]}, ops.Attestation{By: "alice", Interactive: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := svc.OpsApply(ctx, ops.ApplyInput{PlanID: pv.ID, Token: ar.Token})
			if tables := swaptest.SQLite3(t, dir, "db.sqlite", "SELECT name FROM sqlite_master WHERE type = 'table'"); tables != "users" {
				t.Fatalf("the swapped SQL ran (tables %q): %+v %v", tables, res, err)
			}
			if err != nil || res.Status != ops.StatusApplied {
				t.Fatalf("apply: %+v %v", res, err)
			}
			if n := swaptest.SQLite3(t, dir, "db.sqlite", "SELECT count(*) FROM pragma_table_info('users') WHERE name = 'email'"); n != "1" {
				t.Fatalf("the approved ALTER did not run: %s", n)
			}
		})
	}
}

// A plan that reads a file it does not declare is refused at approval, prompt included,
// with the way out; nothing can be applied, so the swapped DROP never runs.
func TestApplyReadingAnUndeclaredFileIsRefusedAtApproval(t *testing.T) {
	needSandbox(t)
	swaptest.NeedSQLite3(t)
	ctx := context.Background()
	for _, apply := range []ops.Command{
		{Shell: "sqlite3 -bail db.sqlite < migrate.sql"},
		{Argv: []string{"sqlite3", "-bail", "db.sqlite", ".read migrate.sql"}},
		{Argv: []string{"sh", "-c", "sqlite3 -bail db.sqlite <migrate.sql"}},
		{Shell: "F=migrate.sql; sqlite3 -bail db.sqlite < $F"},
	} {
		svc, dir := migrationService(t)
		pv, err := svc.OpsPlan(ctx, migrationPlan(dir, apply))
		if err != nil {
			t.Fatalf("%v: %v", apply, err)
		}
		if _, err := svc.OpsDiff(ctx, ops.DiffInput{PlanID: pv.ID, Run: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ApprovalPrompt(ctx, pv.ID); err == nil || !strings.Contains(err.Error(), "declare it in inputs") {
			t.Errorf("%v: the approval prompt: %v", apply, err)
		}
		_, err = svc.OpsApprove(ctx, ops.ApproveInput{PlanID: pv.ID, ConfirmHashPrefix: pv.Hash[:8]}, ops.Attestation{By: "alice", Interactive: true})
		if err == nil || !strings.Contains(err.Error(), "declare it in inputs") {
			t.Fatalf("%v: approved a plan whose apply reads an undeclared file: %v", apply, err)
		}
		t.Logf("%v: %v", apply, err)
		if v, _ := svc.Plan(ctx, pv.ID); v.Status != ops.StatusDiffed {
			t.Fatalf("%v: status %s", apply, v.Status)
		}
	}
}
