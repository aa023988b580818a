package brokerapprovals

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/dispatch/sandboxexec"
	"github.com/airlock-app/airlock/internal/dispatchtest"
	"github.com/airlock-app/airlock/internal/testdb"
	"github.com/airlock-app/airlock/permission"
)

func setup(t *testing.T) (*dispatch.Dispatcher, *permission.Broker, string) {
	t.Helper()
	return setupWith(t, permission.Settings{})
}

// setupWith is setup with a user configuration (config.toml's permission settings).
func setupWith(t *testing.T, s permission.Settings) (*dispatch.Dispatcher, *permission.Broker, string) {
	t.Helper()
	eff, err := permission.Resolve(permission.Sources{File: s, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	root := dispatchtest.Root(t, "airlock-brokerapprovals-")
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, "Airlock")
	os.MkdirAll(ws, 0o755)
	db := testdb.Open(t, filepath.Join(root, "a.db"), departments.Migrate, dispatch.Migrate, permission.Migrate)
	ctx := context.Background()
	b, err := permission.NewBroker(ctx, permission.BrokerOptions{DB: db, Settings: eff})
	if err != nil {
		t.Fatal(err)
	}
	depts, _ := departments.New(db, departments.Options{WorkspaceRoots: []string{ws}, HomeDir: home})
	a := New(b)
	d, err := dispatch.New(dispatch.Options{DB: db, Departments: depts, Executor: sandboxexec.New(sandboxexec.Options{Policy: dispatchtest.RecordedPolicy(home), Home: home}),
		Approvals: a, Pending: a, LogDir: filepath.Join(root, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, b, ws
}

func wait(t *testing.T, d *dispatch.Dispatcher, id uint, states ...string) dispatch.Run {
	t.Helper()
	return dispatchtest.WaitRun(t, d, id, 30*time.Second, states...)
}

func TestTaskCommandIsNotAskedAgainAsP1(t *testing.T) {
	d, b, ws := setup(t)
	ctx := context.Background()
	tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "p1", Cwd: ws, Argv: []string{"sh", "-c", "echo hello > out.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		r, _ := d.RunNow(ctx, tk.Name)
		wait(t, d, r.ID, dispatch.StatusSucceeded)
	}
	if p := b.Pending(); len(p) != 0 {
		t.Fatalf("the task's own command asked: %+v", p)
	}
}

func TestDestructiveCommandAsksAtEveryRun(t *testing.T) {
	d, b, ws := setup(t)
	ctx := context.Background()
	tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "push", Cwd: ws, Argv: []string{"git", "push", "--force", "origin", "main"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		r, _ := d.RunNow(ctx, tk.Name)
		held := wait(t, d, r.ID, dispatch.StatusWaitingApproval)
		items, err := d.Inbox(ctx)
		if err != nil || len(items) != 1 || items[0].Kind != dispatch.InboxApprovalKind || len(items[0].Runs) != 1 || items[0].Runs[0] != r.ID {
			t.Fatalf("inbox: %+v %v", items, err)
		}
		// A script cannot allow it; the person in the window can.
		if _, err := b.Answer(ctx, held.ApprovalID, permission.Answer{Allow: true, By: permission.ByAPI}); err == nil {
			t.Fatal("a non-interactive answer allowed a destructive command")
		}
		if _, err := b.Answer(ctx, held.ApprovalID, permission.Answer{Allow: true, By: permission.ByWindow, Interactive: true}); err != nil {
			t.Fatal(err)
		}
		got := wait(t, d, r.ID, dispatch.StatusFailed, dispatch.StatusSucceeded)
		if got.StartedAt == nil {
			t.Fatal("approved run never started")
		}
	}
	// Denied: the run is recorded denied.
	r, _ := d.RunNow(ctx, tk.Name)
	held := wait(t, d, r.ID, dispatch.StatusWaitingApproval)
	if _, err := b.Answer(ctx, held.ApprovalID, permission.Answer{Allow: false, By: permission.ByAPI}); err != nil {
		t.Fatal(err)
	}
	wait(t, d, r.ID, dispatch.StatusDenied)
}
