package ops

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/deadowner/deadownertest"
)

func TestMain(m *testing.M) {
	swapperMain()
	if os.Getenv("OPS_TEST_CHILD") == "apply" {
		os.Exit(childApply())
	}
	os.Exit(m.Run())
}

// childApply is the re-executed test binary: it applies a plan and is killed mid-way.
func childApply() int {
	key, _ := hex.DecodeString(os.Getenv("OPS_TEST_KEY"))
	now, _ := time.Parse(time.RFC3339Nano, os.Getenv("OPS_TEST_NOW"))
	db := openDB(&childTB{}, os.Getenv("OPS_TEST_DB"))
	svc, err := New(Config{DB: db, Runner: LocalRunner{}, StateDir: filepath.Join(filepath.Dir(os.Getenv("OPS_TEST_DB")), "state"), Keys: memKeys{key: key}, Now: func() time.Time { return now }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err = svc.Apply(context.Background(), os.Getenv("OPS_TEST_PLAN"), os.Getenv("OPS_TEST_TOKEN"), ApplyOptions{By: "child"})
	fmt.Fprintln(os.Stderr, "apply returned:", err)
	return 3 // never reached when the test kills us first
}

// childTB lets openDB run outside a test.
type childTB struct{ testing.TB }

func (*childTB) Helper()               {}
func (*childTB) Fatal(args ...any)     { fmt.Fprintln(os.Stderr, args...); os.Exit(2) }
func (*childTB) Cleanup(func())        {}
func (*childTB) Fatalf(string, ...any) { os.Exit(2) }

func TestKill9DuringApply(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := e.plan()
	in.Apply = Command{Shell: "echo $$ > apply.pid; echo applied >> out.txt; sleep 60; echo applied >> out.txt"}
	v, token := e.approved(t, in)

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "OPS_TEST_CHILD=apply", "OPS_TEST_DB="+filepath.Join(e.dbDir, "airlock.db"),
		"OPS_TEST_KEY="+hex.EncodeToString(e.keys.key), "OPS_TEST_NOW="+e.clock.Now().Format(time.RFC3339Nano),
		"OPS_TEST_PLAN="+v.ID, "OPS_TEST_TOKEN="+token)
	var stderr strings.Builder
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The apply's shell dies with the child (Pdeathsig); its sleep is cleaned up here.
		if b, err := os.ReadFile(filepath.Join(e.dir, "apply.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})
	// Wait until the apply is journaled as started and the command has done its first write.
	deadline := time.Now().Add(60 * time.Second)
	for e.lines(t) < 1 {
		if time.Now().After(deadline) {
			_ = child.Process.Kill()
			t.Fatalf("the child never started the apply; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child did not die of SIGKILL: %v (stderr %s)", err, stderr.String())
	}

	// What the database says right after the crash: started, outcome not recorded.
	if st := e.status(t, v.ID); st != StatusApplying {
		t.Fatalf("after the crash the plan is %s, want applying", st)
	}
	events := e.events(t, v.Project, v.ID)
	if events[len(events)-1] != EventApplyStarted {
		t.Fatalf("journal after the crash: %v", events)
	}
	e.journalOK(t, v.Project)

	// The next start of the app reopens the database and recovers.
	db := openDB(t, filepath.Join(e.dbDir, "airlock.db"))
	svc, err := New(Config{DB: db, Runner: LocalRunner{}, StateDir: e.state, Keys: e.keys, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	n, err := svc.Recover(ctx)
	if err != nil || n != 1 {
		t.Fatalf("recover: %d, %v", n, err)
	}
	pv, _ := svc.Plan(ctx, v.ID)
	if pv.Status != StatusFailed {
		t.Fatalf("recovered plan is %s", pv.Status)
	}
	entries, _ := svc.Journal(ctx, JournalQuery{Project: v.Project, PlanID: v.ID})
	last := entries[len(entries)-1]
	prev := entries[len(entries)-2]
	if prev.Event != EventApplyStarted || last.Event != EventApplyUnknown || !strings.Contains(last.Detail, "outcome unknown: process ended during apply") {
		t.Fatalf("journal after recovery ends %s, %s: %s", prev.Event, last.Event, last.Detail)
	}
	rep, _ := svc.VerifyJournal(ctx, v.Project)
	if !rep.OK {
		t.Fatalf("journal after recovery: %+v", rep.Problems)
	}
	// The token stays spent, and recovering again changes nothing.
	if _, err := svc.Apply(ctx, v.ID, token, ApplyOptions{}); !errors.Is(err, ErrTokenUsed) {
		t.Fatalf("token after the crash: %v", err)
	}
	if n, _ := svc.Recover(ctx); n != 0 {
		t.Fatalf("second recover marked %d plans", n)
	}
	if e.lines(t) != 1 {
		t.Fatalf("lines %d", e.lines(t))
	}
}

func TestRecoverLeavesLiveAppliesAlone(t *testing.T) {
	e := newEnv(t)
	v, _ := e.approved(t, e.plan())
	// Another live process (this test's parent, say) is applying.
	if err := e.db.Model(&PlanRecord{}).Where("id = ?", v.ID).
		Updates(map[string]any{"status": StatusApplying, "applier_pid": os.Getppid()}).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.Recover(context.Background()); err != nil || n != 0 {
		t.Fatalf("recover touched a live apply: %d %v", n, err)
	}
	if e.status(t, v.ID) != StatusApplying {
		t.Fatal("status changed")
	}
}

func TestRecoverSaysNothingRanWhenTheStartWasNotJournaled(t *testing.T) {
	e := newEnv(t)
	v, token := e.approved(t, e.plan())
	// The process redeemed the token and marked the plan, then died before journaling the start.
	if won, err := e.svc.redeem(context.Background(), tokenHash(token), v.ID, v.Hash, e.clock.Now().UnixNano(), "x"); err != nil || !won {
		t.Fatal(won, err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := e.db.Model(&PlanRecord{}).Where("id = ?", v.ID).
		Updates(map[string]any{"status": StatusApplying, "applier_pid": dead.Process.Pid}).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.Recover(context.Background()); err != nil || n != 1 {
		t.Fatalf("recover: %d %v", n, err)
	}
	entries, _ := e.svc.Journal(context.Background(), JournalQuery{Project: v.Project, Event: EventApplyUnknown})
	if len(entries) != 1 || !strings.Contains(entries[0].Detail, "nothing ran") {
		t.Fatalf("journal: %+v", entries)
	}
	if e.lines(t) != 0 {
		t.Fatal("ran")
	}
}

// With the database held exclusively (the core's lock), an apply this service does not
// run is dead whatever its recorded pid is now: a live unrelated process that reused it,
// or a zombie. Recover ends it with the evidence, and the plan can then be re-diffed and
// approved again, or rejected.
func TestRecoverEndsForeignAppliesWhenExclusive(t *testing.T) {
	live, zombie := deadownertest.StandIns(t)
	tests := []struct {
		name string
		pid  int
		want string
	}{
		{"a live process reused the pid", live, "another process (sleep)"},
		{"the pid is a zombie", zombie, "zombie"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			v, token := e.approved(t, e.plan())
			if won, err := e.svc.redeem(ctx, tokenHash(token), v.ID, v.Hash, e.clock.Now().UnixNano(), "x"); err != nil || !won {
				t.Fatal(won, err)
			}
			if err := e.db.Model(&PlanRecord{}).Where("id = ?", v.ID).
				Updates(map[string]any{"status": StatusApplying, "applier_pid": tt.pid}).Error; err != nil {
				t.Fatal(err)
			}
			svc, err := New(Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: e.keys, Now: e.clock.Now, Exclusive: true})
			if err != nil {
				t.Fatal(err)
			}
			if n, err := svc.Recover(ctx); err != nil || n != 1 {
				t.Fatalf("recover: %d %v", n, err)
			}
			if st := e.status(t, v.ID); st != StatusFailed {
				t.Fatalf("plan after recovery: %s, want failed", st)
			}
			entries, _ := svc.Journal(ctx, JournalQuery{Project: v.Project, Event: EventApplyUnknown})
			if len(entries) != 1 || !strings.Contains(entries[0].Detail, tt.want) || !strings.Contains(entries[0].Detail, "exclusive lock") ||
				!strings.Contains(entries[0].Detail, "airlock ops diff "+v.ID) {
				t.Fatalf("journal: %+v", entries)
			}
			// Each way out the hint offers exists: a fresh diff and a new approval ...
			if _, err := svc.AttachDiff(ctx, DiffInput{PlanID: v.ID, Run: true}); err != nil {
				t.Fatalf("a fresh diff after recovery: %v", err)
			}
			if _, err := svc.Approve(ctx, v.ID, ApproveOptions{ConfirmedHashPrefix: v.Hash[:8], By: "alice", Interactive: true}); err != nil {
				t.Fatalf("approve again after recovery: %v", err)
			}
			// ... or a rejection.
			if _, err := svc.Reject(ctx, v.ID, "gave up", "alice"); err != nil {
				t.Fatalf("reject after recovery: %v", err)
			}
		})
	}
}
