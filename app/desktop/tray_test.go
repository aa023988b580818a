package desktop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/vartmp"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
)

// privateSessionBus starts a real dbus-daemon that activates nothing and points this
// process's session bus at it.
func privateSessionBus(t *testing.T) string {
	t.Helper()
	addr, _ := privateSessionBusDaemon(t)
	return addr
}

// privateSessionBusDaemon is privateSessionBus that also returns the dbus-daemon.
func privateSessionBusDaemon(t *testing.T) (string, *os.Process) {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon is not installed (apt-get install dbus)")
	}
	if _, err := exec.LookPath("gdbus"); err != nil {
		t.Skip("gdbus is not installed (apt-get install libglib2.0-bin)")
	}
	conf, err := filepath.Abs(filepath.Join("..", "..", "test", "dbus-session.conf"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read the bus address: %v", err)
	}
	addr = strings.TrimSpace(addr)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	// dbus.SessionBus is one connection per process, which the tray and the keyring
	// share, bound to the bus of its first use (the test keyring's, when a core read a
	// secret before): dropped here and at the end, so both use this test's bus and the
	// next test does not inherit a dead one.
	dropSharedSessionBus()
	t.Cleanup(dropSharedSessionBus)
	return addr, cmd.Process
}

// menuEntry is one line of the tray's menu as a StatusNotifierHost reads it.
type menuEntry struct {
	ID       int32
	Label    string
	Enabled  bool
	Children []menuEntry
}

// readMenu reads the item's menu over D-Bus with com.canonical.dbusmenu.GetGroupProperties,
// item by item in creation order. (GetLayout, which panels call, starts a goroutine in
// systray v1.12.2 that races with the call itself on the menu revision — a data race in
// the library that -race reports whatever the caller does; see the desktop notes.) Items
// of a submenu directly follow their parent, which has children-display "submenu".
func readMenu(t *testing.T, conn *dbus.Conn, name string) (menuEntry, error) {
	t.Helper()
	ids := make([]int32, 0, 2000)
	for i := int32(1); i <= 2000; i++ {
		ids = append(ids, i)
	}
	var props []struct {
		ID    int32
		Props map[string]dbus.Variant
	}
	call := conn.Object(name, "/StatusNotifierItem/menu").Call("com.canonical.dbusmenu.GetGroupProperties", 0, ids, []string{})
	if call.Err != nil {
		return menuEntry{}, call.Err
	}
	if err := call.Store(&props); err != nil {
		return menuEntry{}, err
	}
	root := menuEntry{}
	var parent *menuEntry
	for _, p := range props {
		e := menuEntry{ID: p.ID, Enabled: true}
		if l, ok := p.Props["label"]; ok {
			e.Label, _ = l.Value().(string)
		}
		if en, ok := p.Props["enabled"]; ok {
			e.Enabled, _ = en.Value().(bool)
		}
		switch {
		case parent != nil && submenuLabel[e.Label]:
			parent.Children = append(parent.Children, e)
			continue
		case p.Props["children-display"].Value() == "submenu":
			root.Children = append(root.Children, e)
			parent = &root.Children[len(root.Children)-1]
			continue
		}
		parent = nil
		root.Children = append(root.Children, e)
	}
	return root, nil
}

// submenuLabel are the lines of a pending P1 request's submenu.
var submenuLabel = map[string]bool{"Allow for this session": true, "Allow once": true, "Deny": true, "Review…": true}

func (e menuEntry) find(prefix string) (menuEntry, bool) {
	if e.Label != "" && strings.HasPrefix(e.Label, prefix) {
		return e, true
	}
	for _, c := range e.Children {
		if f, ok := c.find(prefix); ok {
			return f, true
		}
	}
	return menuEntry{}, false
}

func (e menuEntry) labels() []string {
	var out []string
	for _, c := range e.Children {
		if c.Label != "" {
			out = append(out, c.Label)
		}
	}
	return out
}

// waitMenu reads the menu until ok says it is what the test waits for.
func waitMenu(t *testing.T, conn *dbus.Conn, name, what string, ok func(menuEntry) bool) menuEntry {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var last menuEntry
	var err error
	for time.Now().Before(deadline) {
		// A menu is read whole only once its last line is there (the tray adds lines
		// one by one after a reset).
		if last, err = readMenu(t, conn, name); err == nil && ok(last) {
			if _, complete := last.find("Quit Airlock"); complete {
				return last
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the tray menu never showed %s; last read %v (error %v)", what, last.labels(), err)
	return menuEntry{}
}

// click sends a dbusmenu "clicked" event with gdbus, as a panel would.
func click(t *testing.T, addr, name string, id int32) {
	t.Helper()
	cmd := exec.Command("gdbus", "call", "--session", "-d", name, "-o", "/StatusNotifierItem/menu",
		"-m", "com.canonical.dbusmenu.Event", fmt.Sprint(id), "clicked", "<int32 0>", "0")
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+addr)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gdbus click %d: %v\n%s", id, err, out)
	}
}

// The tray registers on a real session bus, lists the pending requests in its menu,
// allows a P1 from a click, sends a P2 to the window's popup, and follows answers given
// elsewhere.
// startTestTray puts a tray with opts on the test's private bus and returns it with its
// StatusNotifierItem's bus name; it is stopped when the test ends.
func startTestTray(t *testing.T, opts TrayOptions) (*Tray, string) {
	t.Helper()
	tray := NewTray(opts)
	if err := tray.Start(); err != nil {
		t.Fatalf("start the tray: %v", err)
	}
	t.Cleanup(tray.Stop)
	return tray, fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid())
}

// connectTestBus connects to the private bus at addr, like a panel; closed at the end.
func connectTestBus(t *testing.T, addr string) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connect to the test bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestTrayListsAndAnswersPendingRequests(t *testing.T) {
	addr := privateSessionBus(t)
	core, home := openCore(t)

	var mu sync.Mutex
	var reviewed []string
	opened := 0
	_, name := startTestTray(t, TrayOptions{
		Broker: core.Broker, Bus: core.Bus,
		Review: func(id string) { mu.Lock(); reviewed = append(reviewed, id); mu.Unlock() },
		Open:   func() { mu.Lock(); opened++; mu.Unlock() },
	})
	conn := connectTestBus(t, addr)
	waitMenu(t, conn, name, "the empty state", func(m menuEntry) bool {
		_, ok := m.find("Nothing is waiting for you")
		return ok
	})

	cwd := filepath.Join(home, "work")
	p1 := ask(t, core, writeReq("t1", cwd))
	cmd, _ := json.Marshal(map[string]string{"command": "git push --force origin main"})
	p2 := ask(t, core, permission.Request{ID: "t2", Tool: "bash", Params: cmd, Context: permission.Context{Cwd: home}})

	menu := waitMenu(t, conn, name, "both requests", func(m menuEntry) bool {
		p1, a := m.find("P1 write_file")
		_, b := m.find("P2 bash")
		_, c := m.find("Airlock — 2 waiting")
		return a && b && c && len(p1.Children) > 0
	})
	p1Item, _ := menu.find("P1 write_file")
	sub := p1Item.labels()
	if strings.Join(sub, "|") != "Allow once|Deny|Review…" {
		t.Errorf("P1 submenu = %q; want Allow once, Deny, Review…", sub)
	}
	p2Item, _ := menu.find("P2 bash")
	if !strings.HasSuffix(p2Item.Label, "Review…") || len(p2Item.Children) != 0 {
		t.Errorf("P2 item = %+v; want a Review… line without allow", p2Item)
	}
	for _, want := range []string{"Open Airlock", "Quit Airlock"} {
		if _, ok := menu.find(want); !ok {
			t.Errorf("menu has no %q: %v", want, menu.labels())
		}
	}

	allow, _ := p1Item.find("Allow once")
	click(t, addr, name, allow.ID)
	select {
	case d := <-p1:
		if d.Verdict != permission.Allow || d.AnsweredBy != permission.ByTray {
			t.Fatalf("decision = %+v; want allowed by the tray", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("clicking Allow once in the tray answered nothing")
	}
	menu = waitMenu(t, conn, name, "the P1 gone", func(m menuEntry) bool {
		_, a := m.find("P1 write_file")
		_, c := m.find("Airlock — 1 waiting")
		return !a && c
	})

	p2Item, _ = menu.find("P2 bash")
	click(t, addr, name, p2Item.ID)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := strings.Join(reviewed, ",")
		mu.Unlock()
		if got == "t2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reviewed = %q; want the P2 sent to the window's popup", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(core.Broker.Pending()) != 1 {
		t.Fatalf("the P2 was answered by the tray: pending %+v", core.Broker.Pending())
	}

	// Answered elsewhere (the window, the CLI): the tray follows.
	if _, err := core.Broker.Answer(context.Background(), "t2", permission.Answer{By: permission.ByAPI}); err != nil {
		t.Fatal(err)
	}
	if d := <-p2; d.Verdict != permission.Deny {
		t.Fatalf("P2 decision = %+v", d)
	}
	menu = waitMenu(t, conn, name, "nothing waiting", func(m menuEntry) bool {
		_, ok := m.find("Nothing is waiting for you")
		return ok
	})
	open, _ := menu.find("Open Airlock")
	click(t, addr, name, open.ID)
	deadline = time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := opened
		mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Open Airlock did not open the window")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A P1 of a session offers "Allow for this session" first (asked the first
// time, then remembered), with "Allow once" beside it; the session's allow remembers the
// call, and the same call then runs without asking.
func TestTrayAllowsAP1ForTheSession(t *testing.T) {
	addr := privateSessionBus(t)
	core, home := openCore(t)
	_, name := startTestTray(t, TrayOptions{Broker: core.Broker, Bus: core.Bus})
	conn := connectTestBus(t, addr)
	waitMenu(t, conn, name, "the empty state", func(m menuEntry) bool {
		_, ok := m.find("Nothing is waiting for you")
		return ok
	})

	req := writeReq("s1", filepath.Join(home, "work"))
	req.Context.Session = "agent-1"
	decided := ask(t, core, req)
	menu := waitMenu(t, conn, name, "the session's request", func(m menuEntry) bool {
		it, ok := m.find("P1 write_file")
		return ok && len(it.Children) > 0
	})
	item, _ := menu.find("P1 write_file")
	sub := item.labels()
	if strings.Join(sub, "|") != "Allow for this session|Allow once|Deny|Review…" {
		t.Fatalf("P1 submenu = %q; want Allow for this session, Allow once, Deny, Review…", sub)
	}
	allow, _ := item.find("Allow for this session")
	click(t, addr, name, allow.ID)
	select {
	case d := <-decided:
		if d.Verdict != permission.Allow || d.AnsweredBy != permission.ByTray || d.Scope != permission.ScopeSession {
			t.Fatalf("decision = %+v; want allowed for the session by the tray", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("clicking Allow for this session answered nothing")
	}
	again := req
	again.ID = "s1-again"
	if d := core.Broker.Check(context.Background(), again).Decision; d.Verdict != permission.Allow || d.Layer != permission.LayerGrant {
		t.Fatalf("the same call again = %+v; want allowed by the session's grant", d)
	}
}

func TestTrayPausesAndResumesDispatch(t *testing.T) {
	addr := privateSessionBus(t)
	core, _ := openCore(t)
	if core.Dispatch == nil {
		t.Fatal("the core has no dispatcher")
	}
	_, name := startTestTray(t, TrayOptions{Broker: core.Broker, Bus: core.Bus, Dispatch: core.Dispatch})
	conn := connectTestBus(t, addr)

	menu := waitMenu(t, conn, name, "Pause dispatch", func(m menuEntry) bool {
		_, ok := m.find("Pause dispatch")
		return ok
	})
	pause, _ := menu.find("Pause dispatch")
	click(t, addr, name, pause.ID)
	waitMenu(t, conn, name, "Resume dispatch after the click", func(m menuEntry) bool {
		_, ok := m.find("Resume dispatch")
		return ok
	})
	if st := core.Dispatch.State(); !st.Paused || st.PausedBy != "tray" {
		t.Fatalf("dispatch state after Pause = %+v; want paused by the tray", st)
	}

	// Resumed elsewhere (the CLI): the tray follows dispatch.state.
	if _, err := core.Dispatch.SetPaused(context.Background(), false, "cli"); err != nil {
		t.Fatal(err)
	}
	waitMenu(t, conn, name, "Pause dispatch again", func(m menuEntry) bool {
		_, ok := m.find("Pause dispatch")
		return ok
	})
}

// pixmap is one entry of a StatusNotifierItem's IconPixmap: ARGB32 in network byte order.
type pixmap struct {
	W, H int32
	Pix  []byte
}

// at returns the pixel (x, y) of the pixmap.
func (p pixmap) at(x, y int) color.NRGBA {
	i := (y*int(p.W) + x) * 4
	return color.NRGBA{A: p.Pix[i], R: p.Pix[i+1], G: p.Pix[i+2], B: p.Pix[i+3]}
}

// iconPixmap takes the one tray-sized pixmap out of an IconPixmap value.
func iconPixmap(v dbus.Variant) (pixmap, error) {
	var pms []pixmap
	if err := v.Store(&pms); err != nil {
		return pixmap{}, fmt.Errorf("IconPixmap %s: %w", v.Signature(), err)
	}
	if len(pms) != 1 || pms[0].W != trayIconSize || pms[0].H != trayIconSize || len(pms[0].Pix) != trayIconSize*trayIconSize*4 {
		return pixmap{}, fmt.Errorf("IconPixmap has %d pixmaps; want one of %d×%d", len(pms), trayIconSize, trayIconSize)
	}
	return pms[0], nil
}

// iconChanges delivers each IconPixmap the item publishes with PropertiesChanged.
//
// The test reads the icon from the signal rather than with Properties.Get: godbus's
// prop package answers a Get with the property's slice and encodes it after unlocking,
// and the next SetIcon stores into that same slice in place, a data race in the
// libraries that -race reports whatever the caller does (like GetLayout's, see the
// desktop notes). The signal is encoded under the lock, and carries what a Get would
// return at that moment.
func iconChanges(t *testing.T, conn *dbus.Conn) <-chan pixmap {
	t.Helper()
	if err := conn.AddMatchSignal(dbus.WithMatchObjectPath("/StatusNotifierItem"),
		dbus.WithMatchInterface("org.freedesktop.DBus.Properties"), dbus.WithMatchMember("PropertiesChanged")); err != nil {
		t.Fatalf("watch the item's properties: %v", err)
	}
	sigs := make(chan *dbus.Signal, 256)
	conn.Signal(sigs)
	out := make(chan pixmap, 64)
	go func() {
		defer close(out)
		for sig := range sigs {
			if len(sig.Body) < 2 || sig.Body[0] != "org.kde.StatusNotifierItem" {
				continue
			}
			changed, _ := sig.Body[1].(map[string]dbus.Variant)
			v, ok := changed["IconPixmap"]
			if !ok {
				continue
			}
			pm, err := iconPixmap(v)
			if err != nil {
				t.Errorf("published icon: %v", err)
				continue
			}
			out <- pm
		}
	}()
	return out
}

// badgeTop is a pixel of the badge above its digits: the count's colour when something
// waits, the app icon's corner otherwise.
var badgeTop = image.Pt(badgeCX, badgeCY-badgeRadius+3)

// waitIcon waits for a published icon that ok accepts.
func waitIcon(t *testing.T, icons <-chan pixmap, what string, ok func(pixmap) bool) pixmap {
	t.Helper()
	timeout := time.After(15 * time.Second)
	got := "nothing"
	for {
		select {
		case p := <-icons:
			if ok(p) {
				return p
			}
			got = fmt.Sprintf("badge corner %v", p.at(badgeTop.X, badgeTop.Y))
		case <-timeout:
			t.Fatalf("the tray never published %s; last: %s", what, got)
		}
	}
}

// The icon a panel gets over D-Bus carries the pending count: amber for a P1, red once a
// P2 waits, and the plain icon again when everything is answered.
func TestTrayIconFollowsPendingRequests(t *testing.T) {
	addr := privateSessionBus(t)
	core, home := openCore(t)
	conn := connectTestBus(t, addr)
	icons := iconChanges(t, conn)

	tray, name := startTestTray(t, TrayOptions{Broker: core.Broker, Bus: core.Bus, Icon: appIcon(t)})
	waitMenu(t, conn, name, "the empty state", func(m menuEntry) bool {
		_, ok := m.find("Nothing is waiting for you")
		return ok
	})
	plainPNG, err := tray.icons.icon(0, badgeNone)
	if err != nil {
		t.Fatal(err)
	}
	plain := decodeIcon(t, plainPNG)
	isPlain := func(p pixmap) bool {
		for y := 0; y < trayIconSize; y++ {
			for x := 0; x < trayIconSize; x++ {
				if p.at(x, y) != plain.NRGBAAt(x, y) {
					return false
				}
			}
		}
		return true
	}

	p1 := ask(t, core, writeReq("i1", filepath.Join(home, "work")))
	one := waitIcon(t, icons, "an amber badge", func(p pixmap) bool { return near(p.at(badgeTop.X, badgeTop.Y), amberPx) })

	cmd, _ := json.Marshal(map[string]string{"command": "git push --force origin main"})
	p2 := ask(t, core, permission.Request{ID: "i2", Tool: "bash", Params: cmd, Context: permission.Context{Cwd: home}})
	two := waitIcon(t, icons, "a red badge", func(p pixmap) bool { return near(p.at(badgeTop.X, badgeTop.Y), redPx) })
	if bytes.Equal(one.Pix, two.Pix) {
		t.Fatal("the icon for two requests is the icon for one")
	}
	// Only the corner changes: below the badge the icon is the app icon.
	for y := badgeCY + badgeRadius + 1; y < trayIconSize; y++ {
		for x := 0; x < trayIconSize; x++ {
			if two.at(x, y) != plain.NRGBAAt(x, y) {
				t.Fatalf("pixel (%d,%d) away from the badge = %v; the app icon has %v", x, y, two.at(x, y), plain.NRGBAAt(x, y))
			}
		}
	}

	for _, id := range []string{"i2", "i1"} {
		if _, err := core.Broker.Answer(context.Background(), id, permission.Answer{By: permission.ByAPI}); err != nil {
			t.Fatal(err)
		}
	}
	<-p1
	<-p2
	waitIcon(t, icons, "the plain icon again", isPlain)

	// A panel that reads the property now gets the plain icon (no SetIcon follows this Get).
	v, err := conn.Object(name, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem.IconPixmap")
	if err != nil {
		t.Fatalf("read IconPixmap: %v", err)
	}
	pm, err := iconPixmap(v)
	if err != nil {
		t.Fatal(err)
	}
	if !isPlain(pm) {
		t.Errorf("IconPixmap after every answer has badge corner %v; want the plain icon", pm.at(badgeTop.X, badgeTop.Y))
	}
}

// The session bus going away (the desktop session's dbus-daemon restarted) costs the tray
// its item, not Airlock: a request that arrives afterwards is still pending and answerable.
func TestTraySurvivesTheSessionBusGoing(t *testing.T) {
	_, daemon := privateSessionBusDaemon(t)
	core, home := openCore(t)
	tray, _ := startTestTray(t, TrayOptions{Broker: core.Broker, Bus: core.Bus, Icon: appIcon(t)})
	conn, err := dbus.SessionBus() // the connection systray shares
	if err != nil {
		t.Fatal(err)
	}
	if err := daemon.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = daemon.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for conn.Connected() {
		if time.Now().After(deadline) {
			t.Fatal("the session connection never noticed the bus was gone")
		}
		time.Sleep(20 * time.Millisecond)
	}

	p1 := ask(t, core, writeReq("gone1", filepath.Join(home, "work")))
	// The tray redraws for the request (and fails to publish its icon) before the menu
	// remembers it.
	deadline = time.Now().Add(10 * time.Second)
	for {
		tray.mu.Lock()
		shown := tray.shown
		tray.mu.Unlock()
		if strings.Contains(shown, "gone1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tray never redrew for the request")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := core.Broker.Answer(context.Background(), "gone1", permission.Answer{Allow: true, By: permission.ByAPI}); err != nil {
		t.Fatalf("answer after the bus went: %v", err)
	}
	if d := <-p1; d.Verdict != permission.Allow {
		t.Fatalf("decision = %+v; want allowed", d)
	}
}

// A run held outside known places counts in the tray like under Waiting for you, and its
// line opens the window (authorizing a directory is the person's, in the window).
func TestTrayCountsHeldRuns(t *testing.T) {
	addr := privateSessionBus(t)
	core, _ := openCore(t)
	opened := make(chan struct{}, 4)
	_, name := startTestTray(t, TrayOptions{Broker: core.Broker, Bus: core.Bus, Dispatch: core.Dispatch, Open: func() { opened <- struct{}{} }})
	conn := connectTestBus(t, addr)
	waitMenu(t, conn, name, "the empty state", func(m menuEntry) bool {
		_, ok := m.find("Nothing is waiting for you")
		return ok
	})

	dir, err := os.MkdirTemp("/var/tmp", "airlock-tray-held-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ctx := context.Background()
	if _, err := core.Dispatch.CreateTask(ctx, dispatch.TaskSpec{Name: "legacy", Argv: []string{"true"}, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Dispatch.RunNow(ctx, "legacy"); err != nil {
		t.Fatal(err)
	}
	menu := waitMenu(t, conn, name, "the held run", func(m menuEntry) bool {
		_, title := m.find("Airlock — 1 waiting")
		l, line := m.find("1 held run")
		return title && line && strings.HasSuffix(l.Label, "— Open…")
	})
	line, _ := menu.find("1 held run")
	click(t, addr, name, line.ID)
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("the held run's line did not open the window")
	}
}

// Failed runs show in the tray as one line ("2 runs failed — Open…") from real failing
// runs; its click opens the failed runs and takes the line away. A held run is counted
// as waiting, a failure is not.
func TestTrayTellsFailedRuns(t *testing.T) {
	addr := privateSessionBus(t)
	core, f := startedCore(t)
	shown := make(chan string, 4)
	_, name := startTestTray(t, TrayOptions{Broker: core.Broker, Bus: core.Bus, Dispatch: core.Dispatch, Show: func(route string) { shown <- route }})
	conn := connectTestBus(t, addr)
	waitMenu(t, conn, name, "the empty state", func(m menuEntry) bool {
		_, ok := m.find("Nothing is waiting for you")
		return ok
	})

	failingTask(t, f, vartmp.Dir(t, "airlock-tray-failing-"), "flaky")
	runNow(t, f, "flaky", 2, dispatch.StatusFailed)
	menu := waitMenu(t, conn, name, "the failed runs", func(m menuEntry) bool {
		_, ok := m.find("2 runs failed — Open…")
		return ok
	})
	if _, ok := menu.find("Airlock — "); ok {
		t.Fatalf("failures are counted as waiting: %v", menu.labels())
	}
	line, _ := menu.find("2 runs failed")
	click(t, addr, name, line.ID)
	select {
	case route := <-shown:
		if route != routeFailedRuns {
			t.Fatalf("the line opened %q; want %q", route, routeFailedRuns)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the failures line did not open the window")
	}
	waitMenu(t, conn, name, "the failures line gone once opened", func(m menuEntry) bool {
		_, failed := m.find("2 runs failed")
		return !failed
	})
}

// sandboxSpot is a pixel inside the sandbox mark.
var sandboxSpot = image.Pt(sandboxCX, sandboxCY)

// TestTrayIconMarksTheSandbox: under full-access the tray icon carries a red mark and its
// menu says "not sandboxed" (the footer's and `airlock status`'s indicator); back in
// workspace-write the mark goes with the indicator's level.
func TestTrayIconMarksTheSandbox(t *testing.T) {
	addr := privateSessionBus(t)
	base := t.TempDir()
	core, _ := openTestCoreAt(t, base, "sandbox_mode = \"full-access\"\n", nil)
	// Run it: the start-up probes and the config.toml watch are the core's services.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = core.Run(ctx, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
	defer pcancel()
	conn := connectTestBus(t, addr)
	icons := iconChanges(t, conn)
	_, name := startTestTray(t, TrayOptions{Broker: core.Broker, Bus: core.Bus, Icon: appIcon(t), Sandbox: core.SandboxIndicator})

	waitIcon(t, icons, "a red sandbox mark", func(p pixmap) bool { return near(p.at(sandboxSpot.X, sandboxSpot.Y), redPx) })
	waitMenu(t, conn, name, "the red sandbox line", func(m menuEntry) bool {
		_, ok := m.find("⚠ Sandbox: not sandboxed — Open…")
		return ok
	})

	if err := os.WriteFile(filepath.Join(base, "airlock", "config", "config.toml"), []byte("sandbox_mode = \"workspace-write\"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	st, err := core.SandboxStatus(pctx)
	if err != nil {
		t.Fatal(err)
	}
	want := sandboxMark(sandbox.Indicate(st, sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOff}).Level)
	waitMenu(t, conn, name, "the sandbox line without full-access", func(m menuEntry) bool {
		_, red := m.find("⚠ Sandbox: not sandboxed — Open…")
		return !red
	})
	if want == "" {
		waitIcon(t, icons, "no sandbox mark", func(p pixmap) bool { return !near(p.at(sandboxSpot.X, sandboxSpot.Y), redPx) })
	}
}

// TestSandboxMarkIsDrawnOnlyWhenNotGreen: amber and red mark the icon's bottom-left
// corner in the badges' colours; green and an unknown level leave the plain icon.
func TestSandboxMarkIsDrawnOnlyWhenNotGreen(t *testing.T) {
	ti, err := newTrayIcons(appIcon(t))
	if err != nil {
		t.Fatal(err)
	}
	plainPNG, _ := ti.icon(0, badgeNone)
	plain := decodeIcon(t, plainPNG)
	for _, tc := range []struct {
		level string
		want  *color.NRGBA
	}{
		{api.IndicatorRed, &redPx}, {api.IndicatorAmber, &amberPx}, {api.IndicatorGreen, nil}, {"", nil},
	} {
		key := iconKey(0, badgeNone)
		key.sandbox = sandboxMark(tc.level)
		b, err := ti.iconFor(key)
		if err != nil {
			t.Fatal(err)
		}
		got := decodeIcon(t, b)
		px := got.NRGBAAt(sandboxSpot.X, sandboxSpot.Y)
		if tc.want == nil {
			if !bytes.Equal(b, plainPNG) {
				t.Errorf("level %q marks the icon", tc.level)
			}
			continue
		}
		if !near(px, *tc.want) {
			t.Errorf("level %q: the mark is %v, want %v", tc.level, px, *tc.want)
		}
		if got.NRGBAAt(badgeTop.X, badgeTop.Y) != plain.NRGBAAt(badgeTop.X, badgeTop.Y) {
			t.Errorf("level %q draws on the pending badge's corner", tc.level)
		}
	}
}

// dropSharedSessionBus closes the process's shared session bus connection; the next
// dbus.SessionBus connects anew to $DBUS_SESSION_BUS_ADDRESS.
func dropSharedSessionBus() {
	if conn, err := dbus.SessionBus(); err == nil {
		_ = conn.Close()
	}
}
