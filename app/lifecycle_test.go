package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/deadowner/deadownertest"
	"github.com/airlock-app/airlock/internal/vartmp"
	"github.com/airlock-app/airlock/ops"
)

// lifeCore opens and runs a core with its files under base (HOME, XDG_RUNTIME_DIR and
// AIRLOCK_HOME, with a workspace ~/Airlock/work), waits until its API answers, and
// returns it with a stop that ends it as a quit does (the next lifeCore on base is the
// next start).
func lifeCore(t testing.TB, base string) (*Core, func()) {
	t.Helper()
	return lifeCoreEnv(t, base, nil)
}

// lifeCoreEnv is lifeCore with extra variables in the core's environment.
func lifeCoreEnv(t testing.TB, base string, extra map[string]string) (*Core, func()) {
	t.Helper()
	env := map[string]string{"HOME": filepath.Join(base, "home"), "XDG_RUNTIME_DIR": filepath.Join(base, "run"), "AIRLOCK_HOME": filepath.Join(base, "airlock")}
	for k, v := range extra {
		env[k] = v
	}
	for _, d := range []string{env["HOME"], env["XDG_RUNTIME_DIR"], filepath.Join(env["HOME"], "Airlock", "work")} {
		os.MkdirAll(d, 0o700)
	}
	c, err := Open(context.Background(), Options{Kind: KindDaemon, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx, nil) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
			c.Close()
		}
	}
	t.Cleanup(stop)
	hc := coreClient(c)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if resp, err := hc.Get("http://airlock/v1/sandbox/vm"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the core's API never answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c, stop
}

// waitRun polls run id until it reaches one of states.
func waitRun(t *testing.T, c *Core, id uint, states ...string) dispatch.Run {
	t.Helper()
	var r dispatch.Run
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if r, err = c.Dispatch.Run(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		for _, s := range states {
			if r.Status == s {
				return r
			}
		}
	}
	t.Fatalf("run #%d is %s (%s), want one of %v", id, r.Status, r.Reason, states)
	return r
}

// A core that died left a run recorded as running under its pid, and that pid is now a
// live unrelated process (a reboot) or a zombie: the next core, which holds the
// database's lock, ends the run at start with the evidence, and the task runs again.
func TestCoreStartEndsRunsOfADeadCore(t *testing.T) {
	live, zombie := deadownertest.StandIns(t)
	host, _ := os.Hostname()
	for _, tt := range []struct {
		name string
		pid  int
		want string
	}{
		{"a live process reused the pid", live, "another process (sleep)"},
		{"the pid is a zombie", zombie, "zombie"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := vartmp.Dir(t, "airlock-owner-")
			ctx := context.Background()
			c, stop := lifeCore(t, base)
			dir := filepath.Join(c.getenv("HOME"), "Airlock", "work")
			task := createTask(t, c, dispatch.TaskSpec{Name: "again", Cwd: dir, Argv: []string{"echo", "ran again"}})
			started := time.Now().UTC()
			stuck := dispatch.Run{TaskID: task.ID, TaskName: task.Name, ScheduledAt: started, Trigger: dispatch.TriggerManual,
				Status: dispatch.StatusRunning, Owner: fmt.Sprintf("%s/%d", host, tt.pid), StartedAt: &started, Cwd: dir}
			if err := c.DB.Create(&stuck).Error; err != nil {
				t.Fatal(err)
			}
			stop()

			c, _ = lifeCore(t, base)
			r := waitRun(t, c, stuck.ID, dispatch.StatusInterrupted)
			if !strings.Contains(r.Reason, tt.want) || !strings.Contains(r.Reason, "exclusive lock") {
				t.Errorf("reason %q: want the evidence (%q, the lock)", r.Reason, tt.want)
			}
			next, err := c.Dispatch.RunNow(ctx, task.Name)
			if err != nil {
				t.Fatalf("run the task again: %v", err)
			}
			waitRun(t, c, next.ID, dispatch.StatusSucceeded)
		})
	}
}

// A damaged database (truncated, or its header overwritten) stops the core with an
// error that says so and gives the commands that move it aside; running them exactly
// as given lets the next start create a new database.
func TestDamagedDatabaseGivesAWayOutThatWorks(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"truncated", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"its header overwritten", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte(strings.Repeat("garbage!", 16)), 0); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := vartmp.Dir(t, "airlock-damaged-")
			c, stop := lifeCore(t, base)
			dbPath := c.Paths.Database
			// With a keyring, an ops journal (anchored outside the database) too: the new
			// database's journal of the same project must verify.
			work := filepath.Join(base, "work")
			os.MkdirAll(work, 0o755)
			journaled := journalPlan(t, c, work)
			stop()
			tt.damage(t, dbPath)

			env := map[string]string{"HOME": filepath.Join(base, "home"), "XDG_RUNTIME_DIR": filepath.Join(base, "run"), "AIRLOCK_HOME": filepath.Join(base, "airlock")}
			_, err := Open(context.Background(), Options{Kind: KindDaemon, Getenv: func(k string) string { return env[k] }})
			if err == nil {
				t.Fatal("a damaged database opened")
			}
			msg := err.Error()
			if !strings.Contains(msg, "is damaged") || !strings.Contains(msg, "start Airlock again") {
				t.Fatalf("error %q: want it to say the database is damaged and the way out", msg)
			}
			_, rest, ok := strings.Cut(msg, "`")
			cmd, _, ok2 := strings.Cut(rest, "`")
			if !ok || !ok2 || !strings.HasPrefix(cmd, "mv ") {
				t.Fatalf("error %q gives no command to move the file aside", msg)
			}
			if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
				t.Fatalf("the way out %q failed: %v: %s", cmd, err, out)
			}
			c, _ = lifeCore(t, base)
			if _, err := c.Dispatch.Runs(context.Background(), dispatch.RunFilter{}); err != nil {
				t.Fatalf("the new database after the way out: %v", err)
			}
			if journaled {
				journalPlan(t, c, work)
				p, _ := c.Ops.List(context.Background(), ops.PlanFilter{})
				if len(p) != 1 {
					t.Fatalf("plans in the new database: %+v", p)
				}
				rep, err := c.Ops.VerifyJournal(context.Background(), p[0].Project)
				if err != nil || !rep.OK {
					t.Fatalf("the new database's journal after the way out: %+v, %v", rep, err)
				}
			}
		})
	}
}

// journalPlan opens a plan in work (a journal entry) when a keyring holds the journal's
// key, and says whether it did.
func journalPlan(t *testing.T, c *Core, work string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" || c.Secrets.Check(ctx) != nil {
		return false
	}
	if _, err := localapi.Call(ctx, localapi.NewClient(c.Paths.Socket), api.OpsCreatePlan, api.PlanSubmission{Data: appendPlan, BaseDir: work, By: "test"}); err != nil {
		t.Fatal(err)
	}
	return true
}

// A full disk (a 4 MiB tmpfs holds Airlock's files) when a run ends: the run, the list
// and cancel, as the CLI reads them, say it finished and why its end is not recorded
// yet, with the way out; freeing space lets the end land; with the core stopped before
// that, the next start records the run's real outcome, not interrupted.
func TestCoreRecordsARunsEndOnAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs (the full-disk case); run the test as root")
	}
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			base := vartmp.Dir(t, "airlock-full-")
			data := filepath.Join(base, "airlock")
			os.MkdirAll(data, 0o700)
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", data).CombinedOutput(); err != nil {
				t.Skipf("cannot mount a tmpfs here (%v: %s)", err, out)
			}
			t.Cleanup(func() { exec.Command("umount", "-l", data).Run() })
			ctx := context.Background()
			c, stop := lifeCore(t, base)
			cl := localapi.NewClient(c.Paths.Socket)
			dir := filepath.Join(c.getenv("HOME"), "Airlock", "work")
			gate := filepath.Join(dir, "go")
			task, err := c.Dispatch.CreateTask(ctx, dispatch.TaskSpec{Name: "full", Cwd: dir,
				Argv: []string{"sh", "-c", "echo started; while [ ! -e go ]; do sleep 0.05; done; echo finished-well"}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Dispatch.RunNow(ctx, task.Name)
			if err != nil {
				t.Fatal(err)
			}
			waitRun(t, c, r.ID, dispatch.StatusRunning)
			filler := filepath.Join(data, "filler")
			f, err := os.Create(filler)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, zeroReader{}); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			f.Close()
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			id := strconv.FormatUint(uint64(r.ID), 10)
			var page api.RunPage
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if page, err = localapi.Call(ctx, cl, api.ListRuns, api.RunQuery{}); err == nil && len(page.Runs) > 0 &&
					strings.Contains(page.Runs[0].Reason, "recording its end failed") {
					break
				}
			}
			if len(page.Runs) == 0 || !strings.Contains(page.Runs[0].Reason, "finished (succeeded); recording its end failed: disk full") ||
				!strings.Contains(page.Runs[0].Reason, "free space") {
				t.Fatalf("runs list while the disk is full: %+v", page.Runs)
			}
			_, err = localapi.Call(ctx, cl, api.CancelRun, api.None{}, id)
			if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "free space") {
				t.Fatalf("runs cancel while the disk is full: %v", err)
			}
			if restart {
				stop()
				os.Remove(filler)
				c, _ = lifeCore(t, base)
			} else {
				os.Remove(filler)
			}
			done := waitRun(t, c, r.ID, dispatch.StatusSucceeded, dispatch.StatusInterrupted)
			if done.Status != dispatch.StatusSucceeded {
				t.Fatalf("run #%d once space is free: %s (%s)", r.ID, done.Status, done.Reason)
			}
		})
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A core died mid-apply and its pid now belongs to an unrelated live process: the next
// core, holding the database's lock, ends the apply (failed, outcome unknown) with the
// evidence in the journal, and the plan can then be rejected (or diffed again).
func TestCoreStartEndsAppliesOfADeadCore(t *testing.T) {
	live, _ := deadownertest.StandIns(t)
	base := vartmp.Dir(t, "airlock-apply-owner-")
	c, stop := lifeCore(t, base)
	needJournalKey(t, c)
	ctx := context.Background()
	work := filepath.Join(base, "work")
	os.MkdirAll(work, 0o755)
	cl := localapi.NewClient(c.Paths.Socket)
	p, err := localapi.Call(ctx, cl, api.OpsCreatePlan, api.PlanSubmission{Data: appendPlan, BaseDir: work, By: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := localapi.Call(ctx, cl, api.OpsDiff, api.DiffInput{Run: true, By: "test"}, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ops.Approve(ctx, p.ID, ops.ApproveOptions{ConfirmedHashPrefix: p.Hash[:8], By: "alice", Interactive: true}); err != nil {
		t.Fatal(err)
	}
	// As a core that redeemed the token and died mid-apply leaves it.
	if err := c.DB.Model(&ops.PlanRecord{}).Where("id = ?", p.ID).
		Updates(map[string]any{"status": ops.StatusApplying, "applier_pid": live}).Error; err != nil {
		t.Fatal(err)
	}
	stop()

	c, _ = lifeCore(t, base)
	cl = localapi.NewClient(c.Paths.Socket)
	got, err := c.Ops.Plan(ctx, p.ID)
	if err != nil || got.Status != ops.StatusFailed {
		t.Fatalf("plan after the restart: %+v, %v; want failed", got, err)
	}
	entries, err := c.Ops.Journal(ctx, ops.JournalQuery{Project: p.Project, PlanID: p.ID, Event: ops.EventApplyUnknown})
	if err != nil || len(entries) != 1 || !strings.Contains(entries[0].Detail, "another process (sleep)") || !strings.Contains(entries[0].Detail, "exclusive lock") {
		t.Fatalf("journal: %+v, %v", entries, err)
	}
	if _, err := localapi.Call(ctx, cl, api.OpsReject, api.RejectBody{Reason: "outcome unknown"}, p.ID); err != nil {
		t.Fatalf("reject after the restart: %v", err)
	}
}

// appendPlan is an ops plan whose apply appends a line to out.txt in its directory.
const appendPlan = `{"target":{"provider":"file","device":"out.txt"},"intent":"append","workdir":".",
	"apply":{"shell":"echo applied >> out.txt"},"diff":{"argv":["echo","+applied"]},
	"steps":[{"description":"append","effect":"file grows","reversibility":"reversible","blast_radius":"low"}],
	"verify":[{"command":"cat out.txt","expect_text":"applied"}]}`
