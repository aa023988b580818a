package ops

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editSpec rewrites the stored plan as an attacker with write access to the database
// would; rehash also rewrites the plan's hash column to match.
func editSpec(t *testing.T, e *env, id string, rehash bool, edit func(*OperationPlan)) {
	t.Helper()
	mustExec(t, e.db, "DROP TRIGGER IF EXISTS ops_plans_immutable")
	var rec PlanRecord
	if err := e.db.First(&rec, "id = ?", id).Error; err != nil {
		t.Fatal(err)
	}
	var p OperationPlan
	if err := json.Unmarshal([]byte(rec.Spec), &p); err != nil {
		t.Fatal(err)
	}
	edit(&p)
	b, _ := json.Marshal(p)
	upd := map[string]any{"spec": string(b)}
	if rehash {
		upd["hash"] = PlanHash(&p)
	}
	if err := e.db.Model(&PlanRecord{}).Where("id = ?", id).Updates(upd).Error; err != nil {
		t.Fatal(err)
	}
}

func TestDriftIsRefusedBeforeAnythingRuns(t *testing.T) {
	other := t.TempDir()
	cases := []struct {
		name  string
		field string
		// edit the database (rehash: also the hash column), or present other values
		edit   func(*OperationPlan)
		rehash bool
		opts   func(e *env) ApplyOptions
		fs     func(t *testing.T, e *env)
	}{
		{name: "apply command edited in the database", field: FieldApplyCommand,
			edit: func(p *OperationPlan) { p.Apply = Command{Shell: "echo applied >> out.txt; echo applied >> out.txt"} }},
		{name: "apply command edited, hash column rewritten too", field: FieldApplyCommand, rehash: true,
			edit: func(p *OperationPlan) { p.Apply = Command{Argv: []string{"sh", "-c", "echo applied >> out.txt"}} }},
		{name: "snapshot command edited", field: FieldSnapshotCommand, rehash: true,
			edit: func(p *OperationPlan) { p.Snapshot = Command{Shell: "echo applied >> out.txt"} }},
		{name: "snapshot command removed", field: FieldSnapshotCommand,
			edit: func(p *OperationPlan) { p.Snapshot = Command{} }},
		{name: "working directory edited", field: FieldWorkdir, rehash: true,
			edit: func(p *OperationPlan) { p.Workdir = other }},
		{name: "another field edited", field: FieldPlan,
			edit: func(p *OperationPlan) { p.Steps[0].BlastRadius = BlastHigh }},
		{name: "another field edited, hash rewritten", field: FieldPlan, rehash: true,
			edit: func(p *OperationPlan) { p.Intent = "something else" }},
		{name: "other command presented", field: FieldApplyCommand,
			opts: func(e *env) ApplyOptions {
				return ApplyOptions{ApplyCommand: &Command{Shell: "echo applied >> out.txt "}}
			}},
		{name: "argv presented for a shell command", field: FieldApplyCommand,
			opts: func(e *env) ApplyOptions {
				return ApplyOptions{ApplyCommand: &Command{Argv: []string{"echo applied >> out.txt"}}}
			}},
		{name: "other snapshot presented", field: FieldSnapshotCommand,
			opts: func(e *env) ApplyOptions { return ApplyOptions{SnapshotCommand: &Command{Argv: []string{"ls"}}} }},
		{name: "other working directory presented", field: FieldWorkdir,
			opts: func(e *env) ApplyOptions { return ApplyOptions{Workdir: other} }},
		{name: "working directory swapped for a symlink", field: FieldWorkdir,
			fs: func(t *testing.T, e *env) {
				if err := os.Rename(e.dir, e.dir+".moved"); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(other, e.dir); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "working directory removed", field: FieldWorkdir,
			fs: func(t *testing.T, e *env) {
				if err := os.Rename(e.dir, e.dir+".moved"); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			v, token := e.approved(t, e.plan())
			if tc.edit != nil {
				editSpec(t, e, v.ID, tc.rehash, tc.edit)
			}
			var opts ApplyOptions
			if tc.opts != nil {
				opts = tc.opts(e)
			}
			if tc.fs != nil {
				tc.fs(t, e)
			}
			_, err := e.svc.Apply(context.Background(), v.ID, token, opts)
			var de *DriftError
			if !errors.As(err, &de) || de.Field != tc.field {
				t.Fatalf("got %v, want drift in %s", err, tc.field)
			}
			for _, d := range []string{e.dir, e.dir + ".moved", other} {
				if _, err := os.Stat(filepath.Join(d, "out.txt")); err == nil {
					t.Fatalf("something ran: %s/out.txt exists", d)
				}
			}
			if e.tokenUsed(t, token) {
				t.Fatal("a refused apply spent the token")
			}
			if e.status(t, v.ID) != StatusApproved {
				t.Fatalf("plan is %s", e.status(t, v.ID))
			}
		})
	}
}

func TestEditedPlanCannotBeApproved(t *testing.T) {
	e := newEnv(t)
	v := e.create(t, e.plan())
	e.diff(t, v.ID)
	editSpec(t, e, v.ID, false, func(p *OperationPlan) { p.Apply = Command{Shell: "rm -rf ."} })
	_, err := e.svc.Approve(context.Background(), v.ID, ApproveOptions{ConfirmedHashPrefix: v.Hash[:8], Interactive: true})
	var de *DriftError
	if !errors.As(err, &de) || de.Field != FieldPlan {
		t.Fatalf("approve an edited plan: %v", err)
	}
	pv, _ := e.svc.Plan(context.Background(), v.ID)
	if pv.Intact {
		t.Fatal("the edited plan is shown as intact")
	}
}

func TestInputFilesArePinned(t *testing.T) {
	ctx := context.Background()
	withInput := func(e *env) PlanInput {
		if err := os.WriteFile(filepath.Join(e.dir, "lines.txt"), []byte("applied\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		in := e.plan()
		in.Apply = Command{Shell: "cat lines.txt >> out.txt"}
		in.Inputs = []string{"lines.txt"}
		return in
	}

	t.Run("changed after approval", func(t *testing.T) {
		e := newEnv(t)
		v, token := e.approved(t, withInput(e))
		os.WriteFile(filepath.Join(e.dir, "lines.txt"), []byte("applied\napplied\napplied\n"), 0o644)
		_, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{})
		var de *DriftError
		if !errors.As(err, &de) || de.Field != FieldInputs || !strings.Contains(de.Detail, "lines.txt changed since the plan was approved") {
			t.Fatalf("apply after the input changed: %v", err)
		}
		if e.lines(t) != 0 || e.tokenUsed(t, token) {
			t.Fatal("ran, or spent the token")
		}
		// Restoring the approved content makes the token usable again.
		os.WriteFile(filepath.Join(e.dir, "lines.txt"), []byte("applied\n"), 0o644)
		if _, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{}); err != nil || e.lines(t) != 1 {
			t.Fatalf("apply with the approved input: %v, %d lines", err, e.lines(t))
		}
	})

	t.Run("removed after approval", func(t *testing.T) {
		e := newEnv(t)
		v, token := e.approved(t, withInput(e))
		os.Remove(filepath.Join(e.dir, "lines.txt"))
		var de *DriftError
		if _, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{}); !errors.As(err, &de) || de.Field != FieldInputs {
			t.Fatalf("apply without the input: %v", err)
		}
	})

	t.Run("changed between diff and approval", func(t *testing.T) {
		e := newEnv(t)
		v := e.create(t, withInput(e))
		e.diff(t, v.ID)
		os.WriteFile(filepath.Join(e.dir, "lines.txt"), []byte("something else\n"), 0o644)
		var de *DriftError
		if _, err := e.svc.ApprovalPrompt(ctx, v.ID); !errors.As(err, &de) || de.Field != FieldInputs {
			t.Fatalf("prompt: %v", err)
		}
		_, err := e.svc.Approve(ctx, v.ID, ApproveOptions{ConfirmedHashPrefix: v.Hash[:8], Interactive: true})
		if !errors.As(err, &de) || de.Field != FieldInputs || !strings.Contains(de.Detail, "attach a fresh diff") {
			t.Fatalf("approve: %v", err)
		}
		e.diff(t, v.ID) // a fresh diff sees the new content and may then be approved
		e.approve(t, v)
	})
}
