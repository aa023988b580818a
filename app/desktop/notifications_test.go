package desktop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

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
