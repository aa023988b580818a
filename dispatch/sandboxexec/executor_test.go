package sandboxexec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/dispatchtest"
	"github.com/airlock-app/airlock/internal/testdb"
	"gorm.io/gorm"
)

type allow struct {
	mu   sync.Mutex
	reqs []dispatch.ApprovalRequest
}

func (a *allow) Await(_ context.Context, req dispatch.ApprovalRequest) (dispatch.ApprovalDecision, error) {
	a.mu.Lock()
	a.reqs = append(a.reqs, req)
	a.mu.Unlock()
	// As the broker's allow of an escalation does, the decision carries its grant.
	return dispatch.ApprovalDecision{Allow: true, RequestID: req.ID, AnsweredBy: "test", Grant: req.Grant}, nil
}

func setup(t testing.TB, approval string) (*dispatch.Dispatcher, *gorm.DB, string, string, *allow) {
	t.Helper()
	return setupWith(t, approval, func(string, *allow, *Options) {})
}

// setupWith is setup with the executor's options adjusted (opts.Home is the test's home).
func setupWith(t testing.TB, approval string, adjust func(home string, a *allow, o *Options)) (*dispatch.Dispatcher, *gorm.DB, string, string, *allow) {
	t.Helper()
	root := dispatchtest.Root(t, "airlock-sandboxexec-")
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, "Airlock")
	outside := filepath.Join(home, "outside")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(outside, 0o755)
	db := testdb.Open(t, filepath.Join(root, "a.db"), departments.Migrate, dispatch.Migrate)
	depts, _ := departments.New(db, departments.Options{WorkspaceRoots: []string{ws}, HomeDir: home})
	pol := dispatch.DefaultPolicy()
	pol.ApprovalPolicy = approval
	a := &allow{}
	eo := Options{Policy: dispatchtest.RecordedPolicy(home), Home: home}
	adjust(home, a, &eo)
	d, err := dispatch.New(dispatch.Options{DB: db, Departments: depts, Executor: New(eo), Approvals: a,
		LogDir: filepath.Join(root, "runs"), Defaults: func(string) dispatch.Policy { return pol }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, db, ws, outside, a
}

func wait(t testing.TB, d *dispatch.Dispatcher, id uint, states ...string) dispatch.Run {
	t.Helper()
	return dispatchtest.WaitRun(t, d, id, 30*time.Second, states...)
}

func TestRunsThroughTheSandbox(t *testing.T) {
	d, _, ws, outside, _ := setup(t, "on-request")
	ctx := context.Background()
	// Writes in its working directory, cannot write next to it (the OS layer: a script
	// the application layer cannot see into).
	script := filepath.Join(ws, "job.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho ok > inside.txt\necho bad > "+outside+"/x.txt\n"), 0o755)
	tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "job", Cwd: ws, Argv: []string{script}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := d.RunNow(ctx, tk.Name)
	got := wait(t, d, r.ID, dispatch.StatusFailed, dispatch.StatusSucceeded)
	if got.Status != dispatch.StatusFailed || !strings.Contains(got.Reason, "sandbox denied") {
		t.Fatalf("run: %s (%s)", got.Status, got.Reason)
	}
	if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
		t.Fatal("could not write its working directory")
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Fatal("wrote outside its working directory")
	}
}

func TestOnFailureEscalatesAnApplicationLayerDenial(t *testing.T) {
	d, db, ws, outside, a := setup(t, "on-failure")
	ctx := context.Background()
	tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "w", Cwd: ws, Argv: []string{"sh", "-c", "echo hi > " + outside + "/y.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := d.RunNow(ctx, tk.Name)
	got := wait(t, d, r.ID, dispatch.StatusFailed, dispatch.StatusSucceeded)
	if got.Status != dispatch.StatusFailed || !strings.Contains(got.Reason, "sandbox denied write") {
		t.Fatalf("run: %s (%s)", got.Status, got.Reason)
	}
	var esc dispatch.Run
	if err := db.Where("parent_run_id = ?", r.ID).Take(&esc).Error; err != nil {
		t.Fatal("no escalation run")
	}
	// The test broker allows it: the re-run gets exactly that directory writable (never
	// full access) and writes.
	esc = wait(t, d, esc.ID, dispatch.StatusSucceeded)
	if b, _ := os.ReadFile(filepath.Join(outside, "y.txt")); string(b) != "hi\n" {
		t.Fatal("escalated run did not write")
	}
	if esc.Policy.SandboxMode != "workspace-write" || esc.Grant == nil || len(esc.Grant.Writable) != 1 || esc.Grant.Writable[0] != outside || esc.Grant.Network {
		t.Fatalf("escalated run: policy %+v grant %+v, want workspace-write plus %s writable", esc.Policy, esc.Grant, outside)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	found := false
	for _, q := range a.reqs {
		found = found || q.Kind == dispatch.ApprovalEscalation
	}
	if !found {
		t.Fatal("no isolation_escalation request")
	}
}

func TestTimeoutKillsTheSandboxedTree(t *testing.T) {
	d, _, ws, _, _ := setup(t, "on-request")
	ctx := context.Background()
	tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "tree", Cwd: ws, Timeout: 500 * time.Millisecond,
		Argv: []string{"sh", "-c", "sleep 1000 & sleep 1000"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := d.RunNow(ctx, tk.Name)
	got := wait(t, d, r.ID, dispatch.StatusTimedOut)
	if !strings.Contains(got.Reason, "timeout") {
		t.Fatalf("reason: %s", got.Reason)
	}
}

func TestRefusesADirectorySwappedAfterTheGate(t *testing.T) {
	tmp, err := os.MkdirTemp("/var/tmp", "airlock-swap-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	root, _ := filepath.EvalSymlinks(tmp)
	dir := filepath.Join(root, "proj")
	other := filepath.Join(root, "elsewhere")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(other, 0o755)
	// The gate resolved dir; then it is replaced by a symlink to elsewhere.
	os.RemoveAll(dir)
	if err := os.Symlink(other, dir); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	_, err = New(Options{Policy: dispatchtest.RecordedPolicy("")}).Exec(context.Background(), dispatch.ExecSpec{
		Argv: []string{"true"}, Dir: dir, Policy: dispatch.DefaultPolicy(), Stdout: &out, Stderr: &out,
	})
	if err == nil || !strings.Contains(err.Error(), "changed after the start gate") {
		t.Fatalf("ran in a swapped directory: %v", err)
	}
}

// TestWeakerConfinementIsSaidInTheRunLog: a run confined less than the OS sandbox would
// (isolation backend "app": only the application layer) says so in its log.
func TestWeakerConfinementIsSaidInTheRunLog(t *testing.T) {
	ws, err := os.MkdirTemp("/var/tmp", "airlock-weaker-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	pol := dispatch.DefaultPolicy()
	pol.Backend = "app"
	var out, log strings.Builder
	res, err := New(Options{Policy: dispatchtest.RecordedPolicy(ws), Home: ws}).Exec(context.Background(), dispatch.ExecSpec{
		RunID: 1, Argv: []string{"sh", "-c", "echo ran"}, Dir: ws, Policy: pol, Stdout: &out, Stderr: &log})
	if err != nil || res.ExitCode != 0 || out.String() != "ran\n" {
		t.Fatalf("exec: %+v %v %q", res, err, out.String())
	}
	if !strings.Contains(log.String(), "airlock: warning:") || !strings.Contains(log.String(), "application layer") {
		t.Errorf("the run's log does not say the OS does not confine it: %q", log.String())
	}
}
