package brokerapprovals

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
)

// A run on the host that writes outside its workspace is held for the person (an
// isolation escalation): nothing is relaxed for local execution.
func TestLocalRunWritingOutsideIsHeld(t *testing.T) {
	e := newAutoEnv(t)
	ctx := context.Background()
	if _, err := e.d.CreateTask(ctx, dispatch.TaskSpec{Name: "outside", Cwd: e.ws,
		Argv: []string{"sh", "-c", "echo x > /root/airlock-vmroute-x"}}); err != nil {
		t.Fatal(err)
	}
	r, err := e.d.RunNow(ctx, "outside")
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, e.d, r.ID, dispatch.StatusWaitingApproval, dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusDenied)
	if got.Status != dispatch.StatusWaitingApproval {
		t.Fatalf("a host run writing /root: %s (%s), want held", got.Status, got.Reason)
	}
	found := false
	for _, p := range e.b.Pending() {
		if p.ID == got.ApprovalID {
			found = true
			if p.Kind != "isolation_escalation" || !p.InteractiveOnly {
				t.Fatalf("pending %+v, want an interactive-only isolation_escalation", p)
			}
		}
	}
	if !found {
		t.Fatalf("%s is not pending: %+v", got.ApprovalID, e.b.Pending())
	}
}

// TestMicroVMRunsAreJudgedByTheVM boots the real micro-VM (skips, saying so, without an
// image): a sandbox-mode run and an auto run routed to the VM that write outside the
// workspace are not held by the broker, run in the VM, and leave the host untouched.
func TestMicroVMRunsAreJudgedByTheVM(t *testing.T) {
	base, reason := vm.FindImage(filepath.Join("..", "..", "build", "sandbox-image"))
	if reason != "" {
		t.Skip(reason)
	}
	pool := vm.NewPool(base, time.Minute, nil, nil)
	defer pool.Close()
	e := newAutoEnv(t, func(e *autoEnv) {
		e.microVM = func(id uint) (sandbox.MicroVM, func(), error) {
			s := pool.Session(fmt.Sprint("run-", id))
			return s.SandboxExec, s.End, nil
		}
		e.ready = func() error { return nil }
	})
	ctx := context.Background()
	host, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	marker := "/root/airlock-vmroute-" + fmt.Sprint(time.Now().UnixNano())
	cases := []struct{ name, mode, script string }{
		{"sandbox", "sandbox", "echo x > " + marker + " && echo wrote-outside; uname -r > kernel-sandbox.txt"},
		{"auto", "auto", "apt-get install -y --no-download cowsay >/dev/null 2>&1; echo x > " + marker + " && echo wrote-outside; uname -r > kernel-auto.txt"},
	}
	for _, c := range cases {
		if _, err := e.d.CreateTask(ctx, dispatch.TaskSpec{Name: c.name, Cwd: e.ws, Timeout: 3 * time.Minute,
			Overrides: departments.Defaults{ExecutionMode: c.mode}, Argv: []string{"bash", "-c", c.script}}); err != nil {
			t.Fatal(err)
		}
		r, err := e.d.RunNow(ctx, c.name)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Minute)
		var got dispatch.Run
		for time.Now().Before(deadline) {
			got, _ = e.d.Run(ctx, r.ID)
			if got.Status == dispatch.StatusWaitingApproval || dispatch.Finished(got.Status) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		logPath, _ := e.d.LogPath(ctx, r.ID)
		log, _ := os.ReadFile(logPath)
		if got.Status != dispatch.StatusSucceeded {
			t.Fatalf("%s-mode run writing %s: %s (%s), want it run in the VM unheld\n%s", c.mode, marker, got.Status, got.Reason, log)
		}
		k, _ := os.ReadFile(filepath.Join(e.ws, "kernel-"+c.name+".txt"))
		if kk := strings.TrimSpace(string(k)); kk == "" || kk == strings.TrimSpace(string(host)) {
			t.Fatalf("%s: uname -r = %q (host %q): not in the VM\n%s", c.name, kk, host, log)
		}
		if !strings.Contains(string(log), "airlock: running in the micro-VM") || !strings.Contains(string(log), "wrote-outside") {
			t.Errorf("%s: log:\n%s", c.name, log)
		}
		if _, err := os.Stat(marker); err == nil {
			os.Remove(marker)
			t.Fatalf("%s: the guest's write to %s landed on the host", c.name, marker)
		}
	}
}

// Without booting anything: a sandbox-mode run writing outside its workspace passes the
// broker (it would only touch the throwaway VM) and then fails for want of the micro-VM,
// instead of being held as an isolation escalation; its network still follows the policy.
func TestSandboxRunPassesTheBrokerForWritesOutside(t *testing.T) {
	e := newAutoEnv(t)
	ctx := context.Background()
	vmMode := departments.Defaults{ExecutionMode: "sandbox"}
	for _, tc := range []struct{ name, script, want string }{
		{"write-root", "echo x > /root/airlock-vmroute-x", dispatch.StatusFailed},
		{"apt", "apt-get install -y jq", dispatch.StatusFailed},
		{"curl", "curl https://example.com", dispatch.StatusWaitingApproval}, // network off: still an escalation
	} {
		if _, err := e.d.CreateTask(ctx, dispatch.TaskSpec{Name: tc.name, Cwd: e.ws, Overrides: vmMode, Argv: []string{"sh", "-c", tc.script}}); err != nil {
			t.Fatal(err)
		}
		r, err := e.d.RunNow(ctx, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		got := wait(t, e.d, r.ID, dispatch.StatusWaitingApproval, dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusDenied)
		if got.Status != tc.want {
			t.Fatalf("%s in sandbox mode: %s (%s), want %s", tc.script, got.Status, got.Reason, tc.want)
		}
		if tc.want == dispatch.StatusFailed && !strings.Contains(got.Reason, "needs the micro-VM") {
			t.Fatalf("%s: reason %q, want the micro-VM's absence", tc.script, got.Reason)
		}
	}
}
