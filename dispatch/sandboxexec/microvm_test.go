package sandboxexec

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/dispatchtest"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
)

func hostKernel(t *testing.T) string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func runTask(t *testing.T, d *dispatch.Dispatcher, spec dispatch.TaskSpec, states ...string) (dispatch.Run, string) {
	t.Helper()
	ctx := context.Background()
	if _, err := d.CreateTask(ctx, spec); err != nil {
		t.Fatal(err)
	}
	r, err := d.RunNow(ctx, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	got := waitLong(t, d, r.ID, 3*time.Minute, states...)
	path, _ := d.LogPath(ctx, r.ID)
	b, _ := os.ReadFile(path)
	return got, string(b)
}

func waitLong(t *testing.T, d *dispatch.Dispatcher, id uint, limit time.Duration, states ...string) dispatch.Run {
	t.Helper()
	return dispatchtest.WaitRun(t, d, id, limit, states...)
}

// routes records OnRoute's decisions.
type routes struct {
	mu  sync.Mutex
	all []Route
}

func (r *routes) add(rt Route) { r.mu.Lock(); r.all = append(r.all, rt); r.mu.Unlock() }
func (r *routes) last() Route {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.all) == 0 {
		return Route{}
	}
	return r.all[len(r.all)-1]
}

// TestSandboxModeWithoutTheMicroVM: no runtime/image → the run fails, saying how to get
// out (no VM image needed).
func TestSandboxModeWithoutTheMicroVM(t *testing.T) {
	notReady := fmt.Errorf("%w (image ready false)", vm.ErrNotReady)
	rec := &routes{}
	d, _, ws, _, _ := setupWith(t, "on-request", func(_ string, _ *allow, o *Options) {
		o.MicroVM = func(uint) (sandbox.MicroVM, func(), error) { return nil, nil, notReady }
		o.OnRoute = rec.add
	})
	got, log := runTask(t, d, dispatch.TaskSpec{Name: "vm", Cwd: ws, Argv: []string{"uname", "-r"},
		Overrides: overrides("sandbox")}, dispatch.StatusFailed, dispatch.StatusSucceeded)
	if got.Status != dispatch.StatusFailed {
		t.Fatalf("ran without the micro-VM: %s %s", got.Status, log)
	}
	if strings.Count(got.Reason, "airlock sandbox install") != 1 {
		t.Errorf("reason names the install %d times: %s", strings.Count(got.Reason, "airlock sandbox install"), got.Reason)
	}
	for _, w := range []string{"airlock sandbox install", `execution_mode = "local"`, "not installed"} {
		if !strings.Contains(got.Reason, w) {
			t.Errorf("reason %q does not say %q", got.Reason, w)
		}
	}
	if !strings.Contains(log, "airlock: not running (execution_mode sandbox, but the micro-VM is not ready)") {
		t.Errorf("log does not say why:\n%s", log)
	}
	if rec.last().Mode != "sandbox" || rec.last().Where != "" {
		t.Errorf("route: %+v", rec.last())
	}
}

// TestAutoWithoutTheMicroVMAsks: a high-risk command with no micro-VM asks the person
// (the test's broker allows) and then runs on the host; ls runs on the host unasked.
func TestAutoWithoutTheMicroVMAsks(t *testing.T) {
	rec := &routes{}
	d, _, ws, _, a := setupWith(t, "on-request", func(_ string, a *allow, o *Options) {
		o.MicroVM = func(uint) (sandbox.MicroVM, func(), error) { return nil, nil, vm.ErrNotReady }
		o.OnRoute = rec.add
	})
	got, log := runTask(t, d, dispatch.TaskSpec{Name: "ls", Cwd: ws, Argv: []string{"ls"}, Overrides: overrides("auto")}, dispatch.StatusSucceeded, dispatch.StatusFailed)
	if got.Status != dispatch.StatusSucceeded || !strings.Contains(log, "airlock: running on the host (auto: low-risk `ls`)") {
		t.Fatalf("ls: %s %s\n%s", got.Status, got.Reason, log)
	}
	a.mu.Lock()
	n := len(a.reqs)
	a.mu.Unlock()
	got, log = runTask(t, d, dispatch.TaskSpec{Name: "pip", Cwd: ws, Argv: []string{"sh", "-c", "true || apt-get install -y nothing"}, Overrides: overrides("auto")},
		dispatch.StatusSucceeded, dispatch.StatusFailed)
	a.mu.Lock()
	asked := a.reqs[n:]
	a.mu.Unlock()
	var host *dispatch.ApprovalRequest
	for i := range asked {
		if strings.HasSuffix(asked[i].ID, "-host") {
			host = &asked[i]
		}
	}
	if host == nil || host.Kind != dispatch.ApprovalEscalation || !strings.Contains(host.Denial, "package install") || host.Policy.ExecutionMode != "local" {
		t.Fatalf("auto did not ask before running a package install on the host: %+v", asked)
	}
	if got.Status != dispatch.StatusSucceeded || !strings.Contains(log, "airlock: running on the host (auto: package install `apt-get install -y nothing`; the micro-VM is not ready, allowed on the host by test)") {
		t.Fatalf("pip: %s %s\n%s", got.Status, got.Reason, log)
	}
	if rt := rec.last(); !rt.Asked || rt.Where != WhereHost || rt.AnsweredBy != "test" {
		t.Errorf("route: %+v", rt)
	}
}

func overrides(mode string) (d departments.Defaults) {
	d.ExecutionMode = mode
	return d
}

// TestMicroVMModes boots the real micro-VM (skips, saying so, without an image): the
// sandbox mode runs the run's command in the VM with the workspace shared, writes
// elsewhere gone with the VM, no network, the timeout killing it; auto sends a
// destructive command to the VM and ls to the host.
func TestMicroVMModes(t *testing.T) {
	base, reason := vm.FindImage(filepath.Join("..", "..", "build", "sandbox-image"))
	if reason != "" {
		t.Skip(reason)
	}
	pool := vm.NewPool(base, time.Minute, nil, nil)
	defer pool.Close()
	rec := &routes{}
	var warm atomic.Pointer[vm.Session] // a pre-booted session for the next run, when set
	d, _, ws, _, _ := setupWith(t, "on-request", func(_ string, a *allow, o *Options) {
		// As the core does: each run gets its own VM, ended with the run.
		o.MicroVM = func(id uint) (sandbox.MicroVM, func(), error) {
			s := warm.Swap(nil)
			if s == nil {
				s = pool.Session(fmt.Sprint("run-", id))
			}
			return s.SandboxExec, s.End, nil
		}
		o.OnRoute = rec.add
	})
	// A host port the guest must not reach with the network off.
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	script := fmt.Sprintf(`uname -r > kernel.txt; mkdir -p sub && echo kept > sub/kept.txt
echo secret > /root/outside.txt && echo wrote-outside
apt-get install -y --no-download cowsay >/dev/null 2>&1; echo > /etc/airlock-was-here
if (echo > /dev/tcp/10.0.2.2/%d) 2>/dev/null; then echo net-reachable; else echo net-unreachable; fi`, port)
	got, log := runTask(t, d, dispatch.TaskSpec{Name: "in-vm", Cwd: ws, Argv: []string{"bash", "-c", script}, Overrides: overrides("sandbox"), Timeout: 2 * time.Minute},
		dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusTimedOut)
	if got.Status != dispatch.StatusSucceeded {
		t.Fatalf("sandbox run: %s (%s)\n%s", got.Status, got.Reason, log)
	}
	t.Logf("run log of the sandbox-mode run:\n%s", log)
	kernel, _ := os.ReadFile(filepath.Join(ws, "kernel.txt"))
	if k := strings.TrimSpace(string(kernel)); k == "" || k == hostKernel(t) {
		t.Fatalf("uname -r in the run = %q, host %q: not in the VM\n%s", k, hostKernel(t), log)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "sub", "kept.txt")); string(b) != "kept\n" {
		t.Errorf("a file written in the workspace is not on the host: %q", b)
	}
	for _, w := range []string{"airlock: running in the micro-VM (execution_mode sandbox)", "vanish when the run ends", "wrote-outside", "net-unreachable"} {
		if !strings.Contains(log, w) {
			t.Errorf("log lacks %q:\n%s", w, log)
		}
	}
	if _, err := os.Stat("/root/outside.txt"); err == nil && os.Geteuid() == 0 {
		if b, _ := os.ReadFile("/root/outside.txt"); string(b) == "secret\n" {
			t.Error("the guest's /root/outside.txt landed on the host")
		}
	}

	// Timeout: the VM kills the command. The run's timeout counts from the start of the
	// run, boot included (tens of seconds under TCG on a loaded machine), so the run gets a
	// VM booted beforehand.
	s := pool.Session("warm")
	if _, err := s.Exec(context.Background(), ws, false, vm.ExecRequest{Argv: []string{"true"}, Cwd: vm.GuestWorkspace}); err != nil {
		t.Fatal(err)
	}
	warm.Store(s)
	got, log = runTask(t, d, dispatch.TaskSpec{Name: "slow", Cwd: ws, Argv: []string{"sh", "-c", "echo started; sleep 1000"}, Overrides: overrides("sandbox"), Timeout: 3 * time.Second},
		dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusTimedOut)
	if got.Status != dispatch.StatusTimedOut || !strings.Contains(log, "started") {
		t.Fatalf("timeout: %s (%s)\n%s", got.Status, got.Reason, log)
	}

	// Cancel: the person's cancel kills the command in the VM (again on a pre-booted VM).
	s = pool.Session("warm-2")
	if _, err := s.Exec(context.Background(), ws, false, vm.ExecRequest{Argv: []string{"true"}, Cwd: vm.GuestWorkspace}); err != nil {
		t.Fatal(err)
	}
	warm.Store(s)
	if _, err := d.CreateTask(context.Background(), dispatch.TaskSpec{Name: "cancel-me", Cwd: ws, Argv: []string{"sh", "-c", "echo started; sleep 1000"}, Overrides: overrides("sandbox")}); err != nil {
		t.Fatal(err)
	}
	cr, err := d.RunNow(context.Background(), "cancel-me")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		path, _ := d.LogPath(context.Background(), cr.ID)
		if b, _ := os.ReadFile(path); strings.Contains(string(b), "started") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command to cancel never started")
		}
	}
	if err := d.Cancel(context.Background(), cr.ID, "test"); err != nil {
		t.Fatal(err)
	}
	if got := waitLong(t, d, cr.ID, time.Minute, dispatch.StatusCancelled, dispatch.StatusFailed, dispatch.StatusSucceeded); got.Status != dispatch.StatusCancelled {
		t.Fatalf("cancel: %s (%s)", got.Status, got.Reason)
	}

	// auto: a destructive command goes to the VM (where rm -rf ~ only empties the guest's
	// throwaway /root), ls stays on the host.
	got, log = runTask(t, d, dispatch.TaskSpec{Name: "destroy", Cwd: ws, Argv: []string{"sh", "-c", "rm -rf ~/something; uname -r > auto-kernel.txt"}, Overrides: overrides("auto")},
		dispatch.StatusSucceeded, dispatch.StatusFailed)
	if got.Status != dispatch.StatusSucceeded || !strings.Contains(log, "airlock: running in the micro-VM (auto: preflight:") {
		t.Fatalf("auto destructive: %s (%s)\n%s", got.Status, got.Reason, log)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "auto-kernel.txt")); strings.TrimSpace(string(b)) == hostKernel(t) {
		t.Error("auto ran rm -rf ~/something on the host")
	}
	got, log = runTask(t, d, dispatch.TaskSpec{Name: "list", Cwd: ws, Argv: []string{"sh", "-c", "ls; uname -r"}, Overrides: overrides("auto")},
		dispatch.StatusSucceeded, dispatch.StatusFailed)
	if got.Status != dispatch.StatusSucceeded || !strings.Contains(log, "airlock: running on the host (auto: low-risk `ls; uname -r`)") || !strings.Contains(log, hostKernel(t)) {
		t.Fatalf("auto ls: %s (%s)\n%s", got.Status, got.Reason, log)
	}

	// The next run's VM has none of the first run's writes outside the workspace, while
	// the workspace file is still there.
	got, log = runTask(t, d, dispatch.TaskSpec{Name: "after", Cwd: ws, Overrides: overrides("sandbox"),
		Argv: []string{"sh", "-c", "test -e /root/outside.txt && echo outside-present || echo outside-gone; test -e /etc/airlock-was-here && echo etc-present || echo etc-gone; cat sub/kept.txt"}},
		dispatch.StatusSucceeded, dispatch.StatusFailed)
	if got.Status != dispatch.StatusSucceeded {
		t.Fatalf("after: %s (%s)\n%s", got.Status, got.Reason, log)
	}
	for _, w := range []string{"outside-gone", "etc-gone", "kept"} {
		if !strings.Contains(log, w) {
			t.Errorf("after a new VM, log lacks %q:\n%s", w, log)
		}
	}
}
