package sandboxrunner

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/testdb"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/sandbox"
)

// workspaceWrite resolves the default policy (workspace-write, network off) for dir.
func workspaceWrite(network bool) func(context.Context, string) (sandbox.Policy, error) {
	return func(_ context.Context, dir string) (sandbox.Policy, error) {
		mode := "workspace-write"
		n := api.NetworkFromBool(network)
		return sandbox.Resolve(sandbox.Inputs{Flags: sandbox.Layer{Mode: &mode, Network: &n},
			Env: func(string) string { return "" }, Cwd: dir})
	}
}

// workDir is a fresh directory outside /tmp: the sandbox mounts a private tmpfs on /tmp,
// so a working directory under /tmp does not exist inside a read-only sandbox.
func workDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "ops-sandboxrunner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func needSandbox(t *testing.T) {
	t.Helper()
	dir := workDir(t)
	r := Runner{Policy: workspaceWrite(false)}
	res, err := r.Run(context.Background(), ops.RunSpec{Command: ops.Command{Argv: []string{"true"}}, Dir: dir, Timeout: 30 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Skipf("no OS sandbox here: %v %+v", err, res)
	}
}

func TestReadOnlyRunsCannotWrite(t *testing.T) {
	needSandbox(t)
	dir := workDir(t)
	r := Runner{Policy: workspaceWrite(false)}
	ctx := context.Background()
	write := ops.Command{Shell: "echo ran; echo x > written.txt"}
	res, err := r.Run(ctx, ops.RunSpec{Command: write, Dir: dir, ReadOnly: true, Timeout: 30 * time.Second, Purpose: "verify"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "ran\n" || res.ExitCode == 0 {
		t.Fatalf("a read-only run: %+v %q %q", res, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "written.txt")); err == nil {
		t.Fatal("a read-only run created a file")
	}
	// The same command as an apply (write allowed in the working directory).
	res, err = r.Run(ctx, ops.RunSpec{Command: write, Dir: dir, Timeout: 30 * time.Second, Purpose: "apply"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("apply: %+v %v", res, err)
	}
	if res.Duration <= 0 {
		t.Fatalf("apply duration = %v; want how long it ran", res.Duration)
	}
	if _, err := os.Stat(filepath.Join(dir, "written.txt")); err != nil {
		t.Fatal("the apply did not write")
	}
	// An apply still cannot write outside its working directory.
	outside := workDir(t)
	res, _ = r.Run(ctx, ops.RunSpec{Command: ops.Command{Argv: []string{"touch", filepath.Join(outside, "x")}}, Dir: dir, Timeout: 30 * time.Second})
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil || res.ExitCode == 0 {
		t.Fatal("an apply wrote outside its working directory")
	}
}

func TestPolicyForNeverWidens(t *testing.T) {
	inForce := sandbox.Policy{Mode: sandbox.ModeFullAccess, Network: sandbox.NetworkOn, Backend: sandbox.BackendApp, WritableRoots: []string{"/"}}
	ro := PolicyFor(inForce, ops.RunSpec{Dir: "/srv", ReadOnly: true, Network: false})
	if ro.Mode != sandbox.ModeReadOnly || ro.Network.On() || len(ro.WritableRoots) != 0 || ro.Backend == sandbox.BackendApp {
		t.Fatalf("read-only run: %+v", ro)
	}
	off := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOff}
	if p := PolicyFor(off, ops.RunSpec{Dir: "/srv", Network: true}); p.Network.On() {
		t.Fatal("a plan turned the network on against the posture")
	}
}

func TestOutputCapAndTimeout(t *testing.T) {
	needSandbox(t)
	dir := workDir(t)
	r := Runner{Policy: workspaceWrite(false)}
	res, err := r.Run(context.Background(), ops.RunSpec{Command: ops.Command{Shell: "head -c 100000 /dev/zero"}, Dir: dir, ReadOnly: true,
		OutputCap: 1000, Timeout: 30 * time.Second})
	if err != nil || len(res.Stdout) != 1000 || !res.Truncated || res.ExitCode != 0 {
		t.Fatalf("cap: %d bytes %+v %v", len(res.Stdout), res.Truncated, err)
	}
	res, err = r.Run(context.Background(), ops.RunSpec{Command: ops.Command{Argv: []string{"sleep", "30"}}, Dir: dir, Timeout: 300 * time.Millisecond})
	if err != nil || !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("timeout: %+v %v", res, err)
	}
}

// newService is an ops service on a fresh database in root whose commands this Runner
// runs under workspace-write, with the service's state directory (root/state) hidden from
// them as the core hides its data directory.
func newService(t *testing.T, root string) *ops.Service {
	t.Helper()
	db := testdb.Open(t, filepath.Join(root, "airlock.db"), ops.Migrate)
	key := make(memKeys, 32)
	rand.Read(key)
	state := filepath.Join(root, "state")
	svc, err := ops.New(ops.Config{DB: db, Runner: Runner{Policy: workspaceWrite(false), HiddenPaths: []string{state}}, Keys: key, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

type memKeys []byte

func (k memKeys) JournalKey(context.Context) ([]byte, error) { return k, nil }

// TestWorkedExampleUnderTheSandbox runs the README's SQLite migration through the ops
// flow with every command confined by the real sandbox.
func TestWorkedExampleUnderTheSandbox(t *testing.T) {
	needSandbox(t)
	for _, tool := range []string{"sqlite3", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	root := workDir(t)
	dir := filepath.Join(root, "shop")
	os.Mkdir(dir, 0o755)
	for _, f := range []string{"plan.json", "migrate.sql", "seed.sql"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "sqlite-migration", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	seed := exec.Command("sqlite3", "db.sqlite", ".read seed.sql")
	seed.Dir = dir
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	svc := newService(t, root)
	ctx := context.Background()
	b, _ := os.ReadFile(filepath.Join(dir, "plan.json"))
	in, err := ops.DecodePlanInput(b, dir)
	if err != nil {
		t.Fatal(err)
	}
	pv, err := svc.OpsPlan(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	d, err := svc.OpsDiff(ctx, ops.DiffInput{PlanID: pv.ID, Run: true})
	if err != nil || !strings.Contains(d.Diff.Content, "+CREATE UNIQUE INDEX users_email ON users(email);") {
		t.Fatalf("diff under the sandbox: %+v %v", d, err)
	}
	ar, err := svc.OpsApprove(ctx, ops.ApproveInput{PlanID: pv.ID, ConfirmHashPrefix: pv.Hash[:8]}, ops.Attestation{By: "alice", Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.OpsApply(ctx, ops.ApplyInput{PlanID: pv.ID, Token: ar.Token})
	if err != nil || res.Status != ops.StatusApplied || !strings.Contains(res.SnapshotAfter.Content, "email TEXT") {
		t.Fatalf("apply under the sandbox: %+v %v", res, err)
	}
	vr, err := svc.OpsVerify(ctx, ops.VerifyInput{PlanID: pv.ID})
	if err != nil || vr.Status != ops.StatusVerified {
		t.Fatalf("verify under the sandbox: %+v %v", vr, err)
	}
	if _, err := svc.OpsApply(ctx, ops.ApplyInput{PlanID: pv.ID, Token: ar.Token}); !errors.Is(err, ops.ErrTokenUsed) {
		t.Fatalf("replay: %v", err)
	}
	rep, err := svc.VerifyJournal(ctx, pv.Project)
	if err != nil || !rep.OK {
		t.Fatalf("journal: %+v %v", rep, err)
	}
}
