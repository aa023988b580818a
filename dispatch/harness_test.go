package dispatch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/internal/testdb"
	"gorm.io/gorm"

	"github.com/airlock-app/airlock/sandbox"
)

// procExecutor is a real executor for tests: the command runs in its own process group,
// and the whole group is killed on cancel, on timeout and when the leader exits (so
// nothing the run started survives it). With bwrap set, it runs the command under
// bubblewrap (read-only root, the working directory writable, network per policy) and
// reports a write refused by the read-only root as a sandbox denial.
type procExecutor struct {
	bwrap bool
	mu    sync.Mutex
	cur   int
	peak  int
}

func (p *procExecutor) Exec(ctx context.Context, spec ExecSpec) (ExecResult, error) {
	argv := spec.Argv
	if p.bwrap && spec.Policy.SandboxMode != "full-access" {
		b := []string{"/usr/bin/bwrap", "--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid", "--cap-drop", "ALL",
			"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
		if spec.Policy.SandboxMode == "workspace-write" {
			b = append(b, "--bind", spec.Dir, spec.Dir)
		}
		if spec.Grant != nil {
			for _, w := range spec.Grant.Writable {
				b = append(b, "--bind", w, w)
			}
		}
		if !spec.Policy.Network.On() {
			b = append(b, "--unshare-net")
		}
		b = append(b, "--chdir", spec.Dir, "--")
		argv = append(b, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = spec.Dir, spec.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	outR, outW, err := os.Pipe()
	if err != nil {
		return ExecResult{}, err
	}
	var tail tailBuffer
	cmd.Stdout, cmd.Stderr = outW, outW
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		return ExecResult{}, err
	}
	outW.Close()
	pid := cmd.Process.Pid
	p.mu.Lock()
	p.cur++
	p.peak = max(p.peak, p.cur)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.cur--
		p.mu.Unlock()
	}()
	if spec.OnStart != nil {
		spec.OnStart(pid)
	}
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.MultiWriter(spec.Stdout, &tail), outR)
		outR.Close()
		close(copied)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var timeout <-chan time.Time
	if spec.Timeout > 0 {
		tm := time.NewTimer(spec.Timeout)
		defer tm.Stop()
		timeout = tm.C
	}
	var res ExecResult
	select {
	case <-waited:
	case <-ctx.Done():
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-waited
	case <-timeout:
		res.TimedOut = true
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-waited
	}
	// The leader is gone; kill whatever it left behind in its group.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-copied
	st := cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
		res.ExitCode = -1
	} else {
		res.ExitCode = st.ExitCode()
	}
	if p.bwrap && res.ExitCode != 0 && strings.Contains(tail.String(), "Read-only file system") {
		res.SandboxDenied = true
		res.Denial = "write outside the writable root: " + strings.TrimSpace(tail.last())
		// sh: 1: cannot create /x/out.txt: Read-only file system → /x writable.
		for _, f := range strings.Fields(tail.last()) {
			if p := strings.TrimSuffix(f, ":"); strings.HasPrefix(p, "/") {
				res.Grant = &sandbox.Grant{Writable: []string{filepath.Dir(p)}}
				break
			}
		}
	}
	return res, nil
}

// tailBuffer keeps the last 4 KiB written.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	t.mu.Unlock()
	return len(p), nil
}
func (t *tailBuffer) String() string { t.mu.Lock(); defer t.mu.Unlock(); return string(t.b) }
func (t *tailBuffer) last() string {
	lines := strings.Split(strings.TrimSpace(t.String()), "\n")
	return lines[len(lines)-1]
}

// approvals stands in for the permission broker: a command whose argv[0] is in ask waits
// for Answer (calling OnPending first, as the broker does); everything else is allowed at
// once, as the task's creation approved it.
type approvals struct {
	mu       sync.Mutex
	ask      map[string]bool
	answers  map[string]chan bool
	requests []ApprovalRequest
	// withdrawn lists the requests whose caller stopped waiting before an answer (the
	// broker drops them from its pending list).
	withdrawn []string
}

func newApprovals(ask ...string) *approvals {
	a := &approvals{ask: map[string]bool{}, answers: map[string]chan bool{}}
	for _, s := range ask {
		a.ask[s] = true
	}
	return a
}

func (a *approvals) Await(ctx context.Context, req ApprovalRequest) (ApprovalDecision, error) {
	a.mu.Lock()
	a.requests = append(a.requests, req)
	needs := req.Kind == ApprovalEscalation || a.ask[filepath.Base(req.Argv[0])]
	var ch chan bool
	if needs {
		ch = a.answers[req.ID]
		if ch == nil {
			ch = make(chan bool, 1)
			a.answers[req.ID] = ch
		}
	}
	a.mu.Unlock()
	if !needs {
		return ApprovalDecision{Allow: true, RequestID: req.ID, Tier: "P1", AnsweredBy: "task"}, nil
	}
	if req.Policy.ApprovalPolicy == "never" {
		return ApprovalDecision{Allow: false, RequestID: req.ID, Reasons: []string{"P2 under never"}, AnsweredBy: "policy"}, nil
	}
	req.OnPending(req.ID)
	select {
	case ok := <-ch:
		d := ApprovalDecision{Allow: ok, RequestID: req.ID, Tier: "P2", AnsweredBy: "window", Reasons: []string{"answered in test"}}
		if ok {
			d.Grant = req.Grant // what the broker's allow carries
		}
		return d, nil
	case <-ctx.Done():
		a.mu.Lock()
		a.withdrawn = append(a.withdrawn, req.ID)
		a.mu.Unlock()
		return ApprovalDecision{}, ctx.Err()
	}
}

// asked returns the requests made with id, in order.
func (a *approvals) asked(id string) []ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []ApprovalRequest
	for _, r := range a.requests {
		if r.ID == id {
			out = append(out, r)
		}
	}
	return out
}

func (a *approvals) wasWithdrawn(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Contains(a.withdrawn, id)
}

func (a *approvals) answer(id string, allow bool) {
	a.mu.Lock()
	ch := a.answers[id]
	if ch == nil {
		ch = make(chan bool, 1)
		a.answers[id] = ch
	}
	a.mu.Unlock()
	ch <- allow
}

// events records every published event as JSON.
type events struct {
	mu  sync.Mutex
	all []string
}

func (e *events) Publish(topic string, payload any) {
	b, _ := json.Marshal(payload)
	e.mu.Lock()
	e.all = append(e.all, topic+" "+string(b))
	e.mu.Unlock()
}

func (e *events) text() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.all, "\n")
}

type secretMap map[string]string

func (s secretMap) Get(_ context.Context, name string) (string, error) {
	v, ok := s[name]
	if !ok {
		return "", errors.New("not in the keyring")
	}
	return v, nil
}

// fakeClock is an injectable clock; its timers never fire (tests call FireDue). Time that
// passes moves the wall, monotonic and boot clocks alike; Jump moves the wall clock only
// (a clock set forward), Sleep the wall and boot clocks (a suspended machine).
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
	// wallOnly is how far the wall clock moved without the monotonic one; asleep how
	// long the machine was suspended.
	wallOnly, asleep time.Duration
	origin           time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Jump sets the wall clock forward by d.
func (c *fakeClock) Jump(d time.Duration) {
	c.mu.Lock()
	c.t, c.wallOnly = c.t.Add(d), c.wallOnly+d
	c.mu.Unlock()
}

// Sleep suspends the machine for d.
func (c *fakeClock) Sleep(d time.Duration) {
	c.mu.Lock()
	c.t, c.wallOnly, c.asleep = c.t.Add(d), c.wallOnly+d, c.asleep+d
	c.mu.Unlock()
}

func (c *fakeClock) Read() ClockReading {
	c.mu.Lock()
	defer c.mu.Unlock()
	mono := c.t.Sub(c.origin) - c.wallOnly
	return ClockReading{Wall: c.t, Monotonic: mono, Boot: mono + c.asleep}
}

type idleTimer struct{ c chan time.Time }

func (t idleTimer) C() <-chan time.Time { return t.c }
func (t idleTimer) Stop() bool          { return true }

func newIdleTimer(time.Duration) Timer { return idleTimer{make(chan time.Time)} }

// harness is a dispatcher over a real SQLite file with real departments.
type harness struct {
	t      testing.TB
	root   string // resolved temp root
	home   string
	ws     string // workspace root
	dbPath string
	db     *gorm.DB
	depts  *departments.Service
	d      *Dispatcher
	ev     *events
	appr   *approvals
	exec   *procExecutor
	clock  *fakeClock
	policy Policy
	logDir string
	opts   Options
}

type harnessOpt func(*harness)

func withClock(t time.Time) harnessOpt {
	return func(h *harness) { h.clock = &fakeClock{t: t, origin: t.Add(-time.Hour)} } // booted an hour before
}

func withPolicy(p Policy) harnessOpt { return func(h *harness) { h.policy = p } }

func withOptions(f func(*Options)) harnessOpt {
	return func(h *harness) { f(&h.opts) }
}

func openTestDB(t testing.TB, path string) *gorm.DB {
	t.Helper()
	return testdb.Open(t, path, departments.Migrate, Migrate)
}

func newHarness(t testing.TB, opts ...harnessOpt) *harness {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: root, home: filepath.Join(root, "home"), policy: DefaultPolicy(), ev: &events{}, appr: newApprovals("needs-person"), exec: &procExecutor{}}
	h.ws = filepath.Join(h.home, "Airlock")
	h.dbPath = filepath.Join(root, "airlock.db")
	h.logDir = filepath.Join(root, "runs")
	for _, d := range []string{h.ws, filepath.Join(h.home, "outside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range opts {
		o(h)
	}
	h.open()
	return h
}

// open opens the database and a new dispatcher (not started).
func (h *harness) open() {
	h.t.Helper()
	h.db = openTestDB(h.t, h.dbPath)
	var err error
	h.depts, err = departments.New(h.db, departments.Options{WorkspaceRoots: []string{"~/Airlock"}, HomeDir: h.home, Publisher: h.ev})
	if err != nil {
		h.t.Fatal(err)
	}
	o := h.opts
	o.DB, o.Departments, o.Approvals, o.Publisher = h.db, h.depts, h.appr, h.ev
	if o.Executor == nil {
		o.Executor = h.exec
	}
	o.LogDir = h.logDir
	pol := h.policy
	if o.Defaults == nil {
		o.Defaults = func(string) Policy { return pol }
	}
	if h.clock != nil {
		o.Now, o.NewTimer, o.ReadClock = h.clock.Now, newIdleTimer, h.clock.Read
	}
	if o.SleepBus == "" {
		o.SleepBus = SleepBusOff // not the host's logind
	}
	if o.Secrets == nil {
		o.Secrets = secretMap{}
	}
	h.d, err = New(o)
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) start() Digest {
	h.t.Helper()
	dg, err := h.d.Start(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { h.d.Close() })
	return dg
}

// closeAll stops the dispatcher and closes the database.
func (h *harness) closeAll() {
	h.d.Close()
	if s, err := h.db.DB(); err == nil {
		s.Close()
	}
}

func (h *harness) mkdir(rel string) string {
	h.t.Helper()
	p := filepath.Join(h.root, rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) task(spec TaskSpec) Task {
	h.t.Helper()
	if spec.Name == "" {
		spec.Name = fmt.Sprintf("t%d", time.Now().UnixNano())
	}
	if spec.Argv == nil {
		spec.Argv = []string{"true"}
	}
	t, err := h.d.CreateTask(context.Background(), spec)
	if err != nil {
		h.t.Fatal(err)
	}
	return t
}

func (h *harness) runNow(name string) Run {
	h.t.Helper()
	r, err := h.d.RunNow(context.Background(), name)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// wait polls until run id reaches one of the states, and returns it.
func (h *harness) wait(id uint, states ...string) Run {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var r Run
	for time.Now().Before(deadline) {
		if err := h.db.Take(&r, id).Error; err != nil {
			h.t.Fatal(err)
		}
		for _, s := range states {
			if r.Status == s {
				return r
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("run #%d is %s (%s), want one of %v", id, r.Status, r.Reason, states)
	return r
}

func (h *harness) runsOf(taskID uint) []Run {
	h.t.Helper()
	var rs []Run
	if err := h.db.Where("task_id = ?", taskID).Order("scheduled_at, id").Find(&rs).Error; err != nil {
		h.t.Fatal(err)
	}
	return rs
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// processGone reports whether pid no longer runs (a zombie counts as gone).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString(')')
	_ = line
	rest, _ := io.ReadAll(f)
	fields := strings.Fields(string(rest))
	return len(fields) > 0 && fields[0] == "Z"
}
