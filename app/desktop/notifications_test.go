package desktop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/vartmp"
	"github.com/airlock-app/airlock/permission"
)

// startDunst starts Xvfb and dunst (a real notification server) on the test bus.
func startDunst(t *testing.T, addr string) {
	t.Helper()
	for _, tool := range []string{"Xvfb", "dunst", "dunstctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (apt-get install xvfb dunst)", tool)
		}
	}
	// Xvfb picks a free display itself and writes its number to fd 3.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	xvfb := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "800x600x24", "-nolisten", "tcp")
	xvfb.ExtraFiles = []*os.File{w}
	if err := xvfb.Start(); err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() { _ = xvfb.Process.Kill(); _ = xvfb.Wait() })
	line, err := bufio.NewReader(r).ReadString('\n')
	r.Close()
	if err != nil {
		t.Fatalf("read Xvfb's display: %v", err)
	}
	display := ":" + strings.TrimSpace(line)
	conf := filepath.Join(t.TempDir(), "dunstrc")
	if err := os.WriteFile(conf, []byte("[global]\n    follow = none\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dunst := exec.Command("dunst", "-config", conf)
	dunst.Env = append(os.Environ(), "DISPLAY="+display, "DBUS_SESSION_BUS_ADDRESS="+addr)
	if err := dunst.Start(); err != nil {
		t.Fatalf("start dunst: %v", err)
	}
	t.Cleanup(func() { _ = dunst.Process.Kill(); _ = dunst.Wait() })
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitFor(t, "dunst on the bus", func() bool {
		var owner string
		return conn.BusObject().Call("org.freedesktop.DBus.GetNameOwner", 0, notificationsName).Store(&owner) == nil
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	// Generous: the whole suite runs in parallel with -race while VM tests boot QEMU
	// under TCG on two cores, and a run's start has been seen to take over 15 s then.
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func run(t *testing.T, addr string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+addr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A new request raises a real notification (dunst); a forged ActionInvoked from another
// bus client is ignored; the server's own action reaches the window; Allow from a
// notification works for P1 only.
func TestNotificationsForNewRequests(t *testing.T) {
	addr := privateSessionBus(t)
	startDunst(t, addr)
	core, home := openCore(t)

	var mu sync.Mutex
	var reviewed []string
	n, err := StartNotifier(NotifierOptions{
		Broker: core.Broker, Inbox: core.Dispatch, Bus: core.Bus,
		Review: func(id string) { mu.Lock(); reviewed = append(reviewed, id); mu.Unlock() },
	})
	if err != nil {
		t.Fatalf("start notifications: %v", err)
	}
	t.Cleanup(n.Stop)

	first := ask(t, core, writeReq("n1", filepath.Join(home, "work")))
	waitPending(t, NewFacade(core), "n1")
	var noteID uint32
	waitFor(t, "the notification of n1", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		for id, key := range n.byNote {
			if key == "n1" {
				noteID = id
				return true
			}
		}
		return false
	})
	if got := run(t, addr, "dunstctl", "count", "displayed"); got != "1" {
		t.Fatalf("dunst displays %s notifications; want 1", got)
	}

	// Any process on the bus can emit ActionInvoked: a forged "allow" is ignored.
	run(t, addr, "gdbus", "emit", "--session", "--object-path", notificationsPath,
		"--signal", notificationsIface+".ActionInvoked", fmt.Sprint(noteID), "allow")
	// The server's own default action (a click on the notification) opens the review.
	run(t, addr, "dunstctl", "action", "0")
	waitFor(t, "the review of n1", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(reviewed, ",") == "n1"
	})
	if len(core.Broker.Pending()) != 1 {
		t.Fatalf("the forged action answered the request: pending %+v", core.Broker.Pending())
	}

	// Allow once from the notification: P1 yes (by notification), P2 no (sent to review).
	n.act("n1", actionAllow)
	if d := <-first; d.Verdict != permission.Allow || d.AnsweredBy != permission.ByNotification {
		t.Fatalf("decision = %+v; want allowed by the notification", d)
	}
	cmd, _ := json.Marshal(map[string]string{"command": "git push --force origin main"})
	second := ask(t, core, permission.Request{ID: "n2", Tool: "bash", Params: cmd, Context: permission.Context{Cwd: home}})
	waitPending(t, NewFacade(core), "n2")
	n.act("n2", actionAllow)
	if len(core.Broker.Pending()) != 1 {
		t.Fatal("a P2 was allowed from a notification")
	}
	n.act("n2", actionDeny)
	if d := <-second; d.Verdict != permission.Deny {
		t.Fatalf("P2 decision = %+v; want deny", d)
	}

	// A P1 of a session is allowed for the session from a notification, as its label says.
	sess := writeReq("n3", filepath.Join(home, "work"))
	sess.Context.Session = "agent-1"
	third := ask(t, core, sess)
	waitPending(t, NewFacade(core), "n3")
	for _, p := range core.Broker.Pending() {
		if p.ID == "n3" && allowWords(p) != "Allow for this session" {
			t.Fatalf("the notification of a session's P1 says %q", allowWords(p))
		}
	}
	n.act("n3", actionAllow)
	if d := <-third; d.Verdict != permission.Allow || d.Scope != permission.ScopeSession {
		t.Fatalf("decision = %+v; want allowed for the session", d)
	}
	if allowWords(permission.PendingRequest{Scopes: []permission.Scope{permission.ScopeOnce}}) != "Allow once" {
		t.Fatal("a request without a session is offered more than once")
	}
}

// sentNote is one Notify call the notification server received.
type sentNote struct {
	ReplacesID    uint32
	Summary, Body string
}

// watchNotify records every Notify call made to the notification server on the bus at
// addr (a monitor connection, as dbus-monitor): what reached the server, in order.
func watchNotify(t *testing.T, addr string) func() []sentNote {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	rule := "type='method_call',interface='" + notificationsIface + "',member='Notify'"
	if err := conn.BusObject().Call("org.freedesktop.DBus.Monitoring.BecomeMonitor", 0, []string{rule}, uint32(0)).Err; err != nil {
		t.Fatalf("monitor the notifications: %v", err)
	}
	// After the reply: an eavesdropping connection gets no replies of its own.
	msgs := make(chan *dbus.Message, 1024)
	conn.Eavesdrop(msgs)
	var mu sync.Mutex
	var got []sentNote
	go func() {
		for m := range msgs {
			if len(m.Body) < 5 {
				continue
			}
			replaces, _ := m.Body[1].(uint32)
			summary, _ := m.Body[3].(string)
			body, _ := m.Body[4].(string)
			mu.Lock()
			got = append(got, sentNote{ReplacesID: replaces, Summary: summary, Body: body})
			mu.Unlock()
		}
	}()
	return func() []sentNote {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

func hasSummary(notes []sentNote, summary string) bool {
	return slices.ContainsFunc(notes, func(n sentNote) bool { return n.Summary == summary })
}

// failingTask creates, in a department, a task whose runs fail.
func failingTask(t *testing.T, f *Facade, dir, name string) {
	t.Helper()
	if _, err := f.AddDepartment("d-"+name, dir, api.Defaults{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateTask(TaskForm{Name: name, Argv: []string{"sh", "-c", "echo broken >&2; exit 3"}, Cwd: dir, Department: "d-" + name, Overlap: "allow"}); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// runNow starts count runs of task and waits until each has ended with want.
func runNow(t *testing.T, f *Facade, task string, count int, want string) []uint {
	t.Helper()
	var ids []uint
	for range count {
		r, err := f.RunNow(task)
		if err != nil {
			t.Fatalf("run %s now: %v", task, err)
		}
		ids = append(ids, r.ID)
	}
	for _, id := range ids {
		waitFor(t, fmt.Sprintf("run %d to end %s", id, want), func() bool {
			r, err := f.Run(id)
			return err == nil && r.Status == want
		})
	}
	return ids
}

// What the person hears from unattended runs, on a real notification server (dunst),
// from real failing runs in the real core: the digest of what failed while Airlock was
// closed, once; a burst of failures as one notification replaced in place ("4 runs
// failed", not four); the task that paused itself; nothing for a run that succeeded;
// a new count after the person closed the notification, whose click opens that run.
func TestNotificationsForFailuresAndTheDigest(t *testing.T) {
	addr := privateSessionBus(t)
	startDunst(t, addr)
	sent := watchNotify(t, addr)
	base, dir := t.TempDir(), vartmp.Dir(t, "airlock-failing-")

	// The previous start of Airlock: a run failed, and Airlock was closed.
	before, _ := openTestCoreAt(t, base, "", nil)
	if _, err := before.Dispatch.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	failingTask(t, NewFacade(before), dir, "flaky")
	runNow(t, NewFacade(before), "flaky", 1, dispatch.StatusFailed)
	if err := before.Close(); err != nil {
		t.Fatal(err)
	}

	core, _ := openTestCoreAt(t, base, "", nil)
	if _, err := core.Dispatch.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	f := NewFacade(core)
	var mu sync.Mutex
	var shown []string
	n, err := StartNotifier(NotifierOptions{
		Broker: core.Broker, Inbox: core.Dispatch, Bus: core.Bus,
		Digest: f.Digest,
		Show:   func(route string) { mu.Lock(); shown = append(shown, route); mu.Unlock() },
	})
	if err != nil {
		t.Fatalf("start notifications: %v", err)
	}
	t.Cleanup(n.Stop)
	waitFor(t, "the digest's notification", func() bool { return hasSummary(sent(), "While Airlock was not watching") })
	if notes := sent(); len(notes) != 1 || notes[0].Body != "1 run failed or was interrupted" {
		t.Fatalf("at start the server got %+v; want the one digest telling the failed run", notes)
	}

	// A burst of four failures: the fifth in a row pauses the task.
	runNow(t, f, "flaky", 4, dispatch.StatusFailed)
	waitFor(t, "the failures told as one", func() bool { return hasSummary(sent(), "4 runs failed") })
	waitFor(t, "the paused task", func() bool { return hasSummary(sent(), "Task flaky paused itself") })
	var failures []sentNote
	for _, s := range sent() {
		if strings.Contains(s.Summary, "failed") {
			failures = append(failures, s)
		}
	}
	n.mu.Lock()
	failNote := n.failNote
	n.mu.Unlock()
	for i, s := range failures {
		if (i == 0) != (s.ReplacesID == 0) || (i > 0 && s.ReplacesID != failNote) {
			t.Fatalf("failure notification %d replaces %d (the first is %d): %+v; want one notification updated in place", i, s.ReplacesID, failNote, failures)
		}
	}
	if got := run(t, addr, "dunstctl", "count", "displayed"); got != "3" {
		t.Fatalf("dunst displays %s notifications; want 3 (the digest, the failures, the paused task)", got)
	}

	// A run that succeeds says nothing; the person closes everything; the next failure
	// is a count of its own, and its click opens that run.
	if _, err := f.CreateTask(TaskForm{Name: "fine", Argv: []string{"true"}, Cwd: dir, Department: "d-flaky"}); err != nil {
		t.Fatal(err)
	}
	runNow(t, f, "fine", 1, dispatch.StatusSucceeded)
	run(t, addr, "dunstctl", "close-all")
	waitFor(t, "the failures forgotten once closed", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.failures.count == 0 && n.failNote == 0
	})
	failingTask(t, f, vartmp.Dir(t, "airlock-oops-"), "oops")
	oops := runNow(t, f, "oops", 1, dispatch.StatusFailed)[0]
	want := fmt.Sprintf("Run %d of oops failed", oops)
	waitFor(t, "the new failure", func() bool { return hasSummary(sent(), want) })
	for _, s := range sent() {
		if strings.Contains(s.Summary+s.Body, "fine") {
			t.Fatalf("a run that succeeded was notified: %+v", s)
		}
		if s.Summary == want && s.ReplacesID != 0 {
			t.Fatalf("the failure after the close replaced the closed notification: %+v", s)
		}
	}
	n.act(keyFailures, actionDefault)
	mu.Lock()
	defer mu.Unlock()
	if len(shown) != 1 || shown[0] != routeRun(oops) {
		t.Fatalf("the click opened %q; want %q", shown, routeRun(oops))
	}
}

// A hundred failures at once are one notification on the server, its last update saying
// "100 runs failed": every update after the first replaces it in place.
func TestNotificationsMergeABurstOfFailures(t *testing.T) {
	addr := privateSessionBus(t)
	startDunst(t, addr)
	sent := watchNotify(t, addr)
	core, _ := openCore(t)
	n, err := StartNotifier(NotifierOptions{Broker: core.Broker, Bus: core.Bus})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	for i := range 100 {
		core.Bus.Publish(api.TopicDispatchNotify, api.DispatchNotice{Kind: api.NoticeFailure, RunID: uint(i + 1), Task: "burst", Status: "failed", Message: "exit status 1"})
	}
	waitFor(t, "the burst told as one", func() bool { return hasSummary(sent(), "100 runs failed") })
	notes := sent()
	for i, s := range notes[1:] {
		if s.ReplacesID == 0 {
			t.Fatalf("update %d is a notification of its own: %+v", i+1, notes)
		}
	}
	if last := notes[len(notes)-1]; !strings.Contains(last.Body, "and 97 more") {
		t.Errorf("the last update's body = %q; want the latest three and how many more", last.Body)
	}
	if got := run(t, addr, "dunstctl", "count", "displayed"); got != "1" {
		t.Fatalf("dunst displays %s notifications; want 1", got)
	}
}

// TestNotificationWhenTheOSSandboxIsMissing: a core whose OS sandbox is missing (backend
// "app": the application layer only) says so in a desktop notification at start, with
// the way out, once; a click opens the Sandbox tab.
func TestNotificationWhenTheOSSandboxIsMissing(t *testing.T) {
	addr := privateSessionBus(t)
	startDunst(t, addr)
	sent := watchNotify(t, addr)
	core, _ := openTestCore(t, "", map[string]string{"AIRLOCK_SANDBOX_BACKEND": "app"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = core.Run(ctx, nil) }()
	t.Cleanup(func() { cancel(); <-done })

	n, err := StartNotifier(NotifierOptions{Broker: core.Broker, Bus: core.Bus, Sandbox: core.SandboxIndicator})
	if err != nil {
		t.Fatalf("start notifications: %v", err)
	}
	t.Cleanup(n.Stop)
	const summary = "Airlock: commands are not sandboxed"
	waitFor(t, "the sandbox warning", func() bool { return hasSummary(sent(), summary) })
	for _, s := range sent() {
		if s.Summary == summary && (!strings.Contains(s.Body, "no OS sandbox confines commands") || !strings.Contains(s.Body, `Way out: set backend = "auto"`)) {
			t.Errorf("the warning does not say what is missing and the way out: %q", s.Body)
		}
	}
	// The same warning again (a config.toml change re-publishes it) is not told twice.
	ind, _ := core.SandboxIndicator()
	n.sandboxWarning(ind)
	count := 0
	for _, s := range sent() {
		if s.Summary == summary {
			count++
		}
	}
	if count != 1 {
		t.Errorf("the warning was told %d times", count)
	}
	n.mu.Lock()
	routes := maps.Clone(n.routes)
	n.mu.Unlock()
	found := false
	for k, r := range routes {
		found = found || strings.HasPrefix(k, "sandbox:") && r == routeSandbox
	}
	if !found {
		t.Errorf("a click on the warning opens no Sandbox tab: %v", routes)
	}
}
