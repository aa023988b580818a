package brokerapprovals

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/dispatch/sandboxexec"
	"github.com/airlock-app/airlock/internal/dispatchtest"
	"github.com/airlock-app/airlock/internal/testdb"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
	"gorm.io/gorm"
)

// autoEnv is a real broker, a real dispatcher (Concurrency 1) and the real executor with
// no micro-VM installed, over one SQLite file, restartable.
type autoEnv struct {
	t      *testing.T
	db     *gorm.DB
	home   string
	ws     string
	logDir string
	b      *permission.Broker
	d      *dispatch.Dispatcher

	// microVM and ready stand for the core's micro-VM (default: not installed).
	microVM func(uint) (sandbox.MicroVM, func(), error)
	ready   func() error
	// settings is the broker's configuration (default: DefaultEffective).
	settings permission.Effective

	mu     sync.Mutex
	routes []sandboxexec.Route
}

func newAutoEnv(t *testing.T, with ...func(*autoEnv)) *autoEnv {
	t.Helper()
	root := dispatchtest.Root(t, "airlock-autoroute-")
	e := &autoEnv{t: t, home: filepath.Join(root, "home"), logDir: filepath.Join(root, "runs")}
	e.ws = filepath.Join(e.home, "Airlock")
	e.microVM = func(uint) (sandbox.MicroVM, func(), error) { return nil, nil, vm.ErrNotReady }
	e.ready = func() error { return vm.ErrNotReady }
	for _, f := range with {
		f(e)
	}
	os.MkdirAll(e.ws, 0o755)
	e.db = testdb.Open(t, filepath.Join(root, "a.db"), departments.Migrate, dispatch.Migrate, permission.Migrate)
	e.open()
	t.Cleanup(e.close)
	return e
}

func (e *autoEnv) open() {
	ctx := context.Background()
	// The isolation layer as the core wires it: the request's recorded mode and network.
	iso := permission.SandboxIsolation{PolicyFor: func(_ context.Context, req permission.Request) (sandbox.Policy, error) {
		var flags sandbox.Layer
		if m := req.Context.Policy.Mode; m != "" {
			n := req.Context.Policy.Network
			flags.Mode, flags.Network = &m, &n
		}
		return sandbox.Resolve(sandbox.Inputs{Flags: flags, Cwd: req.Context.Cwd, Home: e.home, Env: func(string) string { return "" }})
	}}
	b, err := permission.NewBroker(ctx, permission.BrokerOptions{DB: e.db, RecoveryGrace: time.Minute, Isolation: iso, Settings: e.settings})
	if err != nil {
		e.t.Fatal(err)
	}
	depts, _ := departments.New(e.db, departments.Options{WorkspaceRoots: []string{e.ws}, HomeDir: e.home})
	a := New(b)
	exec := sandboxexec.New(sandboxexec.Options{
		Policy:       dispatchtest.RecordedPolicy(e.home),
		Home:         e.home,
		MicroVM:      e.microVM,
		MicroVMReady: e.ready,
		OnRoute: func(rt sandboxexec.Route) {
			e.mu.Lock()
			e.routes = append(e.routes, rt)
			e.mu.Unlock()
		},
	})
	d, err := dispatch.New(dispatch.Options{DB: e.db, Departments: depts, Executor: exec, Router: exec,
		Approvals: a, Pending: a, LogDir: e.logDir, Concurrency: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := d.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	e.b, e.d = b, d
}

func (e *autoEnv) close() {
	if e.d != nil {
		e.d.Close()
		e.b.Close()
		e.d, e.b = nil, nil
	}
}

func (e *autoEnv) lastRoute() sandboxexec.Route {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.routes) == 0 {
		return sandboxexec.Route{}
	}
	return e.routes[len(e.routes)-1]
}

func (e *autoEnv) answer(id string, allow bool) {
	e.t.Helper()
	if _, err := e.b.Answer(context.Background(), id, permission.Answer{Allow: allow, By: permission.ByWindow, Interactive: true}); err != nil {
		e.t.Fatalf("answer %s: %v", id, err)
	}
}

// TestAutoAsksBeforeTheRunStarts: under execution_mode auto, a high-risk command with no
// micro-VM is a waiting_approval run (the question as its reason) that holds no slot, is
// in the inbox and the waiting list, survives a restart, runs on the host when allowed
// and ends denied when denied.
func TestAutoAsksBeforeTheRunStarts(t *testing.T) {
	e := newAutoEnv(t)
	ctx := context.Background()
	auto := departments.Defaults{ExecutionMode: "auto"}
	_, err := e.d.CreateTask(ctx, dispatch.TaskSpec{Name: "install", Cwd: e.ws, Overrides: auto,
		Argv: []string{"sh", "-c", "echo ran > host.txt; true || pip install requests"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.d.CreateTask(ctx, dispatch.TaskSpec{Name: "other", Cwd: e.ws, Argv: []string{"sh", "-c", "echo other > other.txt"}}); err != nil {
		t.Fatal(err)
	}
	r, err := e.d.RunNow(ctx, "install")
	if err != nil {
		t.Fatal(err)
	}
	held := wait(t, e.d, r.ID, dispatch.StatusWaitingApproval, dispatch.StatusRunning, dispatch.StatusSucceeded, dispatch.StatusFailed)
	if held.Status != dispatch.StatusWaitingApproval || held.ApprovalID != "run-"+itoa(r.ID)+"-host" {
		t.Fatalf("run is %s (approval %q, %s), want waiting_approval on run-%d-host", held.Status, held.ApprovalID, held.Reason, r.ID)
	}
	for _, w := range []string{"auto: package install `pip install requests`", "is high-risk and the micro-VM is not", "allow it on the host, or install the micro-VM"} {
		if !strings.Contains(held.Reason, w) {
			t.Errorf("reason %q does not say %q", held.Reason, w)
		}
	}
	// No slot held: with Concurrency 1 another task's run starts and finishes meanwhile.
	o, err := e.d.RunNow(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if got := wait(t, e.d, o.ID, dispatch.StatusSucceeded, dispatch.StatusFailed); got.Status != dispatch.StatusSucceeded {
		t.Fatalf("the other run: %s (%s)", got.Status, got.Reason)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "host.txt")); err == nil {
		t.Fatal("the held command ran before it was allowed")
	}
	// In the inbox (with the question) and in `airlock runs list --waiting`.
	inboxHas := func() bool {
		items, err := e.d.Inbox(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.Key == held.ApprovalID && strings.Contains(it.Asked, "is high-risk and the micro-VM is not") {
				return true
			}
		}
		t.Logf("inbox: %+v", items)
		return false
	}
	if !inboxHas() {
		t.Fatal("the held run is not in the inbox with its question")
	}
	waiting, err := e.d.Runs(ctx, dispatch.RunFilter{Waiting: true})
	if err != nil || len(waiting) != 1 || waiting[0].ID != r.ID {
		t.Fatalf("runs --waiting = %+v, %v", waiting, err)
	}

	// A restart of the dispatcher and the broker: still waiting, the same question pending.
	e.close()
	e.open()
	if got := wait(t, e.d, r.ID, dispatch.StatusWaitingApproval, dispatch.StatusQueued, dispatch.StatusRunning, dispatch.StatusSucceeded); got.Status != dispatch.StatusWaitingApproval {
		t.Fatalf("after a restart the run is %s (%s)", got.Status, got.Reason)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !e.isPending(held.ApprovalID) {
		if time.Now().After(deadline) {
			t.Fatalf("after a restart %s is not pending: %+v", held.ApprovalID, e.b.Pending())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !inboxHas() {
		t.Fatal("after a restart the held run is not in the inbox")
	}

	// Allow: it runs on the host, and the log and the audit say so.
	e.answer(held.ApprovalID, true)
	got := wait(t, e.d, r.ID, dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusDenied)
	if got.Status != dispatch.StatusSucceeded {
		t.Fatalf("allowed run: %s (%s)", got.Status, got.Reason)
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "host.txt")); err != nil || strings.TrimSpace(string(b)) != "ran" {
		t.Fatalf("the allowed command did not run on the host: %q %v", b, err)
	}
	logPath, err := e.d.LogPath(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "airlock: running on the host (auto: package install `pip install requests`; the micro-VM is not ready, allowed on the host by window)") {
		t.Fatalf("log does not say where it ran and who allowed it:\n%s", log)
	}
	if rt := e.lastRoute(); rt.RunID != r.ID || rt.Where != sandboxexec.WhereHost || !rt.Asked || rt.AnsweredBy != "window" {
		t.Errorf("route told to the audit: %+v", rt)
	}

	// Deny: the next run ends denied without running, and the audit hears of it.
	os.Remove(filepath.Join(e.ws, "host.txt"))
	r2, err := e.d.RunNow(ctx, "install")
	if err != nil {
		t.Fatal(err)
	}
	h2 := wait(t, e.d, r2.ID, dispatch.StatusWaitingApproval, dispatch.StatusSucceeded, dispatch.StatusFailed)
	if h2.Status != dispatch.StatusWaitingApproval {
		t.Fatalf("second run: %s (%s)", h2.Status, h2.Reason)
	}
	e.answer(h2.ApprovalID, false)
	d2 := wait(t, e.d, r2.ID, dispatch.StatusDenied, dispatch.StatusSucceeded, dispatch.StatusFailed)
	if d2.Status != dispatch.StatusDenied || !strings.Contains(d2.Reason, "running it on the host was denied by window") || !strings.Contains(d2.Reason, "install the micro-VM") {
		t.Fatalf("denied run: %s (%s)", d2.Status, d2.Reason)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "host.txt")); err == nil {
		t.Fatal("a denied command ran")
	}
	if rt := e.lastRoute(); rt.RunID != r2.ID || rt.Where != "" || !rt.Asked || !strings.Contains(rt.Reason, "denied by window") {
		t.Errorf("refusal told to the audit: %+v", rt)
	}

	// Cancelled while it waits: cancelled without running, and the audit hears of it.
	r3, err := e.d.RunNow(ctx, "install")
	if err != nil {
		t.Fatal(err)
	}
	if h3 := wait(t, e.d, r3.ID, dispatch.StatusWaitingApproval, dispatch.StatusSucceeded, dispatch.StatusFailed); h3.Status != dispatch.StatusWaitingApproval {
		t.Fatalf("third run: %s (%s)", h3.Status, h3.Reason)
	}
	if err := e.d.Cancel(ctx, r3.ID, "test"); err != nil {
		t.Fatal(err)
	}
	if c3 := wait(t, e.d, r3.ID, dispatch.StatusCancelled, dispatch.StatusSucceeded, dispatch.StatusFailed); c3.Status != dispatch.StatusCancelled {
		t.Fatalf("cancelled run: %s (%s)", c3.Status, c3.Reason)
	}
	deadline = time.Now().Add(10 * time.Second)
	for rt := e.lastRoute(); rt.RunID != r3.ID || !strings.Contains(rt.Reason, "cancelled"); rt = e.lastRoute() {
		if time.Now().After(deadline) {
			t.Fatalf("cancellation not told to the audit: %+v", rt)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "host.txt")); err == nil {
		t.Fatal("a cancelled command ran")
	}
}

func (e *autoEnv) isPending(id string) bool {
	for _, p := range e.b.Pending() {
		if p.ID == id {
			return true
		}
	}
	return false
}

func itoa(n uint) string { return strconv.FormatUint(uint64(n), 10) }

// TestAutoHostAllowSurvivesARestart (real broker, real executor): allowed on the host, then
// a restart before the run starts (the only slot is taken). The broker has delivered its
// answer, so only the run's record keeps it: the run is not asked again and runs on the
// host, its log and the audit saying who allowed it.
func TestAutoHostAllowSurvivesARestart(t *testing.T) {
	e := newAutoEnv(t)
	ctx := context.Background()
	if _, err := e.d.CreateTask(ctx, dispatch.TaskSpec{Name: "install", Cwd: e.ws, Overrides: departments.Defaults{ExecutionMode: "auto"},
		Argv: []string{"sh", "-c", "echo ran > host.txt; true || pip install requests"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.d.CreateTask(ctx, dispatch.TaskSpec{Name: "blocker", Cwd: e.ws, Argv: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	b, _ := e.d.RunNow(ctx, "blocker")
	wait(t, e.d, b.ID, dispatch.StatusRunning)
	r, _ := e.d.RunNow(ctx, "install")
	held := wait(t, e.d, r.ID, dispatch.StatusWaitingApproval)
	e.answer(held.ApprovalID, true)
	wait(t, e.d, r.ID, dispatch.StatusQueued)

	e.close()
	e.open()
	got := wait(t, e.d, r.ID, dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusDenied, dispatch.StatusWaitingApproval)
	if got.Status != dispatch.StatusSucceeded {
		t.Fatalf("after the restart the run is %s (%s), pending %+v", got.Status, got.Reason, e.b.Pending())
	}
	logPath, _ := e.d.LogPath(ctx, r.ID)
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "airlock: running on the host (auto: package install `pip install requests`; the micro-VM is not ready, allowed on the host by window)") {
		t.Errorf("log does not say who allowed it:\n%s", log)
	}
	if rt := e.lastRoute(); rt.RunID != r.ID || rt.Where != sandboxexec.WhereHost || !rt.Asked || rt.AnsweredBy != "window" {
		t.Errorf("route told to the audit: %+v", rt)
	}
}

// TestAutoHostQuestionWithdrawnWhenTheMicroVMIsReady (real broker, real executor): the
// micro-VM becoming ready while an auto run waits on the host question removes the
// question from the broker's pending list and the run goes to the micro-VM.
func TestAutoHostQuestionWithdrawnWhenTheMicroVMIsReady(t *testing.T) {
	var ready atomic.Bool
	var ranInVM atomic.Bool
	e := newAutoEnv(t, func(e *autoEnv) {
		e.ready = func() error {
			if ready.Load() {
				return nil
			}
			return vm.ErrNotReady
		}
		e.microVM = func(uint) (sandbox.MicroVM, func(), error) {
			if !ready.Load() {
				return nil, nil, vm.ErrNotReady
			}
			return func(_ context.Context, req sandbox.ExecRequest) (sandbox.Result, error) {
				ranInVM.Store(true)
				fmt.Fprintln(req.Stdout, "in the fake micro-VM")
				return sandbox.Result{Backend: sandbox.BackendNameMicroVM}, nil
			}, func() {}, nil
		}
	})
	ctx := context.Background()
	if _, err := e.d.CreateTask(ctx, dispatch.TaskSpec{Name: "install", Cwd: e.ws, Overrides: departments.Defaults{ExecutionMode: "auto"},
		Argv: []string{"sh", "-c", "echo ran > host.txt; true || pip install requests"}}); err != nil {
		t.Fatal(err)
	}
	r, _ := e.d.RunNow(ctx, "install")
	held := wait(t, e.d, r.ID, dispatch.StatusWaitingApproval)
	deadline := time.Now().Add(30 * time.Second)
	for !e.isPending(held.ApprovalID) {
		if time.Now().After(deadline) {
			t.Fatalf("%s is not pending", held.ApprovalID)
		}
		time.Sleep(5 * time.Millisecond)
	}

	ready.Store(true)
	e.d.RerouteWaiting()
	got := wait(t, e.d, r.ID, dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusDenied)
	if got.Status != dispatch.StatusSucceeded || !ranInVM.Load() {
		t.Fatalf("run: %s (%s), ran in the VM: %v", got.Status, got.Reason, ranInVM.Load())
	}
	if e.isPending(held.ApprovalID) {
		t.Error("the host question is still pending")
	}
	if _, err := os.Stat(filepath.Join(e.ws, "host.txt")); err == nil {
		t.Error("the command ran on the host")
	}
	logPath, _ := e.d.LogPath(ctx, r.ID)
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "airlock: running in the micro-VM (auto: package install `pip install requests`)") {
		t.Errorf("log does not say the micro-VM:\n%s", log)
	}
	if rt := e.lastRoute(); rt.RunID != r.ID || rt.Where != sandboxexec.WhereMicroVM || rt.Asked {
		t.Errorf("route told to the audit: %+v", rt)
	}
}
