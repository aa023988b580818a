//go:build linux

package sandboxrunner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/ops/internal/swaptest"
)

func TestMain(m *testing.M) {
	swaptest.Main()
	os.Exit(m.Run())
}

// Under the real sandbox, with Airlock's state hidden from it, an attacker renaming
// another migrate.sql over the approved one the moment anything in the working directory
// is opened or read never changes what the apply runs. (A copy bound over the path would
// not do: a rename over a mount point on the host detaches it in the sandbox.)
func TestSandboxedApplyRunsTheApprovedInputWhileItIsSwapped(t *testing.T) {
	needSandbox(t)
	swaptest.NeedSQLite3(t)
	ctx := context.Background()
	commands := []ops.Command{
		{Shell: "sqlite3 -bail db.sqlite < migrate.sql"},
		{Argv: []string{"sqlite3", "-bail", "db.sqlite", ".read migrate.sql"}},
	}
	const rounds = 6
	for _, apply := range commands {
		applied := 0
		for round := range rounds {
			root := workDir(t)
			dir := filepath.Join(root, "shop")
			os.Mkdir(dir, 0o755)
			swaptest.SQLite3(t, dir, "db.sqlite", "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES ('ada');")
			os.WriteFile(filepath.Join(dir, "migrate.sql"), []byte("ALTER TABLE users ADD COLUMN email TEXT;\n"), 0o644)
			evil := filepath.Join(root, "evil.sql")
			os.WriteFile(evil, []byte("DROP TABLE users;\n"), 0o644)

			svc := newService(t, root)
			pv, err := svc.OpsPlan(ctx, ops.PlanInput{OperationPlan: ops.OperationPlan{
				Target: ops.Target{Provider: "sqlite", Device: "db.sqlite"}, Intent: "add an email column", Apply: apply,
				Diff: ops.Command{Argv: []string{"cat", "migrate.sql"}}, Workdir: dir, Inputs: []string{"migrate.sql"},
				Steps:  []ops.Step{{Description: "add email", Effect: "add column", Reversibility: ops.Hard, BlastRadius: ops.BlastLow}},
				Verify: []ops.Assertion{{Command: "sqlite3 -readonly db.sqlite .schema", ExpectText: "email"}},
			}, By: "agent"})
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
			stop := swaptest.Start(t, dir, "migrate.sql", evil, 64)
			res, err := svc.OpsApply(ctx, ops.ApplyInput{PlanID: pv.ID, Token: ar.Token})
			stop()
			if tables := swaptest.SQLite3(t, dir, "db.sqlite", "SELECT name FROM sqlite_master WHERE type = 'table'"); tables != "users" {
				t.Fatalf("%v round %d: the swapped SQL ran (tables %q): %+v %v", apply, round, tables, res, err)
			}
			var de *ops.DriftError
			switch {
			case err == nil && res.Status == ops.StatusApplied:
				applied++
			case errors.As(err, &de) && de.Field == ops.FieldInputs:
			default:
				t.Fatalf("%v round %d: %+v %v", apply, round, res, err)
			}
		}
		if applied == 0 {
			t.Fatalf("%v: no round applied", apply)
		}
	}
}

// The approved copies sit in Airlock's hidden state, which the sandbox cannot read:
// a sandboxed command naming one is refused, and the apply reads it only through the
// read-only file bound into its own /tmp.
func TestStagedCopyIsReadOnlyInTheSandbox(t *testing.T) {
	needSandbox(t)
	root := workDir(t)
	dir := filepath.Join(root, "w")
	os.Mkdir(dir, 0o755)
	state := filepath.Join(root, "state")
	os.MkdirAll(state, 0o700)
	sum := strings.Repeat("ab", 32)
	cp := filepath.Join(state, sum)
	os.WriteFile(cp, []byte("approved\n"), 0o400)
	r := Runner{Policy: workspaceWrite(false), HiddenPaths: []string{state}}
	spec := ops.RunSpec{Command: ops.Command{Shell: "cat in.txt; echo x >> in.txt; cat " + cp}, Dir: dir, Purpose: "apply",
		Inputs: []ops.StagedInput{{Path: "in.txt", SHA256: sum, Copy: cp}}}
	res, err := r.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "approved\n" || res.ExitCode == 0 {
		t.Fatalf("stdout %q stderr %q exit %d", res.Stdout, res.Stderr, res.ExitCode)
	}
	if b, _ := os.ReadFile(cp); string(b) != "approved\n" {
		t.Fatalf("the copy changed: %q", b)
	}
	// An input that is the program the apply runs is run from its copy.
	script := filepath.Join(state, strings.Repeat("cd", 32))
	os.WriteFile(script, []byte("#!/bin/sh\necho approved script\n"), 0o500)
	os.WriteFile(filepath.Join(dir, "deploy.sh"), []byte("#!/bin/sh\necho swapped script\n"), 0o755)
	res, err = r.Run(context.Background(), ops.RunSpec{Command: ops.Command{Argv: []string{"./deploy.sh"}}, Dir: dir, Purpose: "apply",
		Inputs: []ops.StagedInput{{Path: "deploy.sh", SHA256: strings.Repeat("cd", 32), Copy: script}}})
	if err != nil || string(res.Stdout) != "approved script\n" {
		t.Fatalf("script input: %q %q %v", res.Stdout, res.Stderr, err)
	}
}
