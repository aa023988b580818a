package dispatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/departments"
)

// fakeRouter stands in for sandboxexec's Router: a command mentioning `pip install` is
// high-risk and goes to the micro-VM when it is ready; otherwise the person is asked.
type fakeRouter struct {
	mu     sync.Mutex
	ready  bool
	routed int // Route calls for high-risk commands
	notRun []string
}

func (f *fakeRouter) Route(_ context.Context, q RouteQuery) RoutePlan {
	if q.Policy.ExecutionMode != "auto" {
		return RoutePlan{}
	}
	if !strings.Contains(strings.Join(q.Argv, " "), "pip install") {
		return RoutePlan{Where: RouteHost, Reason: "auto: low-risk"}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routed++
	if f.ready {
		return RoutePlan{Where: RouteMicroVM, Reason: "auto: package install `pip install requests`"}
	}
	return RoutePlan{Where: RouteAsk, Reason: "auto: package install `pip install requests`; the micro-VM is not ready",
		Question: "auto: package install `pip install requests` is high-risk and the micro-VM is not installed — allow it on the host, or install the micro-VM"}
}

func (f *fakeRouter) NotRun(q RouteQuery, plan RoutePlan, why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notRun = append(f.notRun, fmt.Sprintf("run %d: %s", q.RunID, why))
}

func (f *fakeRouter) setReady(ready bool) {
	f.mu.Lock()
	f.ready = ready
	f.mu.Unlock()
}

func (f *fakeRouter) routes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.routed
}

// routedExecutor records the route each run's command got. A micro-VM route does not run
// the command (these tests have no VM); a host route runs it for real.
type routedExecutor struct {
	procExecutor
	mu     sync.Mutex
	routes map[uint]RoutePlan
}

func (e *routedExecutor) Exec(ctx context.Context, spec ExecSpec) (ExecResult, error) {
	e.mu.Lock()
	if e.routes == nil {
		e.routes = map[uint]RoutePlan{}
	}
	if spec.Route != nil {
		e.routes[spec.RunID] = *spec.Route
	}
	e.mu.Unlock()
	if spec.Route != nil && spec.Route.Where == RouteMicroVM {
		fmt.Fprintf(spec.Stderr, "fake micro-VM: %s\n", spec.Route.Reason)
		return ExecResult{}, nil
	}
	return e.procExecutor.Exec(ctx, spec)
}

func (e *routedExecutor) route(id uint) (RoutePlan, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.routes[id]
	return p, ok
}

// installArgv is the auto task's command: high-risk for the fake Router, harmless to run.
var installArgv = []string{"sh", "-c", "echo ran > host.txt; true || pip install requests"}

// routeHarness is a dispatcher (Concurrency 1) with the fake Router and the recording
// executor, an auto task whose command is high-risk, and a blocker task that can hold the
// only slot.
func routeHarness(t *testing.T) (*harness, *fakeRouter, *routedExecutor) {
	t.Helper()
	fr, ex := &fakeRouter{}, &routedExecutor{}
	h := newHarness(t, withOptions(func(o *Options) { o.Router, o.Executor, o.Concurrency = fr, ex, 1 }))
	h.start()
	h.task(TaskSpec{Name: "install", Cwd: h.ws, Overrides: departments.Defaults{ExecutionMode: "auto"}, Argv: installArgv})
	h.task(TaskSpec{Name: "blocker", Cwd: h.ws, Argv: []string{"sleep", "60"}})
	return h, fr, ex
}

// restart stops the dispatcher and opens a new one over the same database; before is
// called in between (the new dispatcher exists but has not started).
func (h *harness) restart(before func()) {
	h.t.Helper()
	h.closeAll()
	h.open()
	if before != nil {
		before()
	}
	h.start()
}

// TestHostAnswerAcrossARestart: the person's answer to "may it run on the host?" is
// recorded on the run. Allowed, then a restart before the run starts: it is not asked
// again and runs on the host, saying who allowed it. The allow is bound to the command:
// a task edited meanwhile is asked again. An unanswered question is asked again after the
// restart; a denied run stays denied.
func TestHostAnswerAcrossARestart(t *testing.T) {
	edited := []string{"sh", "-c", "echo edited > host.txt; true || pip install evil"}
	cases := []struct {
		name   string
		answer string // "allow", "deny" or "" (unanswered at the restart)
		edit   bool   // the task's command is edited before the resumed run starts
		// after the restart
		wantAskedAgain bool
		answerAgain    bool // the answer to the second question
		wantStatus     string
		wantHostFile   string // "" = the command did not run
		wantAnsweredBy string
	}{
		{name: "allowed then restarted", answer: "allow", wantStatus: StatusSucceeded, wantHostFile: "ran", wantAnsweredBy: "window"},
		{name: "allowed then task edited", answer: "allow", edit: true, wantAskedAgain: true, answerAgain: false, wantStatus: StatusDenied},
		{name: "unanswered", answer: "", wantAskedAgain: true, answerAgain: true, wantStatus: StatusSucceeded, wantHostFile: "ran", wantAnsweredBy: "window"},
		{name: "denied", answer: "deny", wantStatus: StatusDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, _, ex := routeHarness(t)
			ctx := context.Background()
			hostQ := func(id uint) string { return fmt.Sprintf("run-%d-host", id) }
			// The blocker holds the only slot, so an allowed run cannot start before the restart.
			b := h.runNow("blocker")
			h.wait(b.ID, StatusRunning)
			r := h.runNow("install")
			if got := h.wait(r.ID, StatusWaitingApproval); got.ApprovalID != hostQ(r.ID) {
				t.Fatalf("waiting on %q, want the host question", got.ApprovalID)
			}
			switch tc.answer {
			case "allow":
				h.appr.answer(hostQ(r.ID), true)
				deadline := time.Now().Add(10 * time.Second)
				for got := h.wait(r.ID, StatusQueued); !strings.Contains(got.Reason, "concurrency slot"); got = h.wait(r.ID, StatusQueued) {
					if time.Now().After(deadline) {
						t.Fatalf("allowed run: %s (%s)", got.Status, got.Reason)
					}
					time.Sleep(5 * time.Millisecond)
				}
				got, _ := h.d.Run(ctx, r.ID)
				if a := got.HostAllowed; a == nil || a.By != "window" || !slices.Equal(a.Argv, installArgv) || a.Dir != h.ws {
					t.Fatalf("allow not recorded on the run: %+v", a)
				}
			case "deny":
				h.appr.answer(hostQ(r.ID), false)
				h.wait(r.ID, StatusDenied)
			}
			h.restart(func() {
				if tc.edit {
					if _, err := h.d.EditTask(ctx, "install", TaskPatch{Argv: edited}); err != nil {
						t.Fatal(err)
					}
				}
			})
			if tc.wantAskedAgain {
				deadline := time.Now().Add(10 * time.Second)
				for len(h.appr.asked(hostQ(r.ID))) < 2 {
					if time.Now().After(deadline) {
						got, _ := h.d.Run(ctx, r.ID)
						t.Fatalf("not asked again after the restart; run %s (%s)", got.Status, got.Reason)
					}
					time.Sleep(5 * time.Millisecond)
				}
				second := h.appr.asked(hostQ(r.ID))[1]
				if tc.edit && !slices.Equal(second.Argv, edited) {
					t.Errorf("second question about %q, want the edited command", second.Argv)
				}
				h.wait(r.ID, StatusWaitingApproval)
				h.appr.answer(hostQ(r.ID), tc.answerAgain)
			}
			got := h.wait(r.ID, StatusSucceeded, StatusFailed, StatusDenied, StatusCancelled, StatusExpired)
			if got.Status != tc.wantStatus {
				t.Fatalf("run #%d: %s (%s), want %s", r.ID, got.Status, got.Reason, tc.wantStatus)
			}
			want := 1
			if tc.wantAskedAgain {
				want = 2
			}
			if n := len(h.appr.asked(hostQ(r.ID))); n != want {
				t.Errorf("asked %d times whether it may run on the host, want %d", n, want)
			}
			b2, err := os.ReadFile(filepath.Join(h.ws, "host.txt"))
			if strings.TrimSpace(string(b2)) != tc.wantHostFile || (tc.wantHostFile == "") != os.IsNotExist(err) {
				t.Errorf("host.txt = %q (%v), want %q", b2, err, tc.wantHostFile)
			}
			if tc.wantStatus == StatusSucceeded {
				plan, ok := ex.route(r.ID)
				if !ok || plan.Where != RouteHost || !plan.Asked || plan.AnsweredBy != tc.wantAnsweredBy {
					t.Errorf("executed with route %+v, want the host, asked, answered by %s", plan, tc.wantAnsweredBy)
				}
			}
		})
	}
}

// TestHostQuestionWithdrawnWhenTheMicroVMIsReady: while an auto run waits on the host
// question, the micro-VM becoming ready withdraws the question and the run goes to the
// micro-VM, without a restart. A reroute that still finds no micro-VM leaves the question
// where it is.
func TestHostQuestionWithdrawnWhenTheMicroVMIsReady(t *testing.T) {
	h, fr, ex := routeHarness(t)
	r := h.runNow("install")
	hostQ := fmt.Sprintf("run-%d-host", r.ID)
	if got := h.wait(r.ID, StatusWaitingApproval); got.ApprovalID != hostQ {
		t.Fatalf("waiting on %q, want %s", got.ApprovalID, hostQ)
	}

	// Not ready yet: routed again, still asked, the question untouched.
	before := fr.routes()
	h.d.RerouteWaiting()
	deadline := time.Now().Add(10 * time.Second)
	for fr.routes() == before {
		if time.Now().After(deadline) {
			t.Fatal("RerouteWaiting did not route the waiting run again")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if h.appr.wasWithdrawn(hostQ) {
		t.Fatal("the question was withdrawn though the micro-VM is still not ready")
	}
	if got, _ := h.d.Run(context.Background(), r.ID); got.Status != StatusWaitingApproval {
		t.Fatalf("run #%d: %s (%s), want still waiting", r.ID, got.Status, got.Reason)
	}

	// Ready: the question is withdrawn and the run goes to the micro-VM.
	fr.setReady(true)
	h.d.RerouteWaiting()
	got := h.wait(r.ID, StatusSucceeded, StatusFailed, StatusDenied, StatusCancelled, StatusExpired)
	if got.Status != StatusSucceeded {
		t.Fatalf("run #%d: %s (%s)", r.ID, got.Status, got.Reason)
	}
	if !h.appr.wasWithdrawn(hostQ) {
		t.Error("the host question was not withdrawn")
	}
	if n := len(h.appr.asked(hostQ)); n != 1 {
		t.Errorf("asked %d times", n)
	}
	plan, ok := ex.route(r.ID)
	if !ok || plan.Where != RouteMicroVM || plan.Asked || plan.Reason != "auto: package install `pip install requests`" {
		t.Errorf("executed with route %+v, want the micro-VM, not asked", plan)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "host.txt")); err == nil {
		t.Error("the command ran on the host")
	}
	if log := readFile(t, got.LogPath); !strings.Contains(log, "fake micro-VM: auto: package install") {
		t.Errorf("log:\n%s", log)
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if len(fr.notRun) != 0 {
		t.Errorf("a refusal was audited: %v", fr.notRun)
	}
}
