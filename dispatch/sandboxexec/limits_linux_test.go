package sandboxexec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/dispatchtest"
	"github.com/airlock-app/airlock/internal/testdb"
	"github.com/airlock-app/airlock/sandbox"
)

// TestRunsEndedByTheirLimits: a fork bomb in a scheduled run is contained by the pids
// limit its task sets (the machine goes on) and a memory hog by the memory limit its
// department sets; each run fails saying which limit ended it, in its outcome and its log.
func TestRunsEndedByTheirLimits(t *testing.T) {
	st := sandbox.ProbeStatus(context.Background(), sandbox.BackendAuto)
	if p := st.Probe(sandbox.ProbeLimits); !p.OK {
		t.Skipf("no cgroup to apply limits with here: %s", p.Detail)
	}
	root := dispatchtest.Root(t, "airlock-limits-")
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, "Airlock")
	os.MkdirAll(ws, 0o755)
	db := testdb.Open(t, filepath.Join(root, "a.db"), departments.Migrate, dispatch.Migrate)
	depts, _ := departments.New(db, departments.Options{WorkspaceRoots: []string{ws}, HomeDir: home})
	d, err := dispatch.New(dispatch.Options{DB: db, Departments: depts, Executor: New(Options{Policy: dispatchtest.RecordedPolicy(home), Home: home}),
		Approvals: &allow{}, LogDir: filepath.Join(root, "runs"), Defaults: func(string) dispatch.Policy {
			p := dispatch.DefaultPolicy()
			p.Limits = sandbox.DefaultLimits // as the core's DispatchPolicy gives from [limits]
			return p
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()
	hogDir := filepath.Join(ws, "hog")
	os.MkdirAll(hogDir, 0o755)
	if _, err := depts.Add(ctx, "small", hogDir, api.Defaults{Limits: api.Limits{Memory: "64MiB"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec dispatch.TaskSpec
		want string
	}{
		{dispatch.TaskSpec{Name: "bomb", Cwd: ws, Argv: []string{"bash", "-c", ":(){ :|:& };:; sleep 600"}, Overrides: api.Defaults{Limits: api.Limits{Pids: 64}}},
			"ended: the pids limit (64) was reached"},
		{dispatch.TaskSpec{Name: "hog", Cwd: hogDir, Department: "small", Argv: []string{"bash", "-c", "x=$(head -c 268435456 /dev/zero | tr '\\0' a); echo ${#x}"}},
			"ended: the memory limit (64MiB) was reached"},
	} {
		t.Run(tc.spec.Name, func(t *testing.T) {
			tk, err := d.CreateTask(ctx, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			r, err := d.RunNow(ctx, tk.Name)
			if err != nil {
				t.Fatal(err)
			}
			got := wait(t, d, r.ID, dispatch.StatusFailed, dispatch.StatusSucceeded, dispatch.StatusTimedOut)
			if got.Status != dispatch.StatusFailed || !strings.Contains(got.Reason, tc.want) {
				t.Fatalf("run: %s (%s), want failed: %s", got.Status, got.Reason, tc.want)
			}
			if log, _ := os.ReadFile(got.LogPath); !strings.Contains(string(log), tc.want) {
				t.Fatalf("the run's log does not say %q:\n%s", tc.want, log)
			}
		})
	}
}
