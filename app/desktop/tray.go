package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"fyne.io/systray"
	"github.com/godbus/dbus/v5"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/eventbus"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/permission"
)

// trayBroker is what the tray needs of the permission broker.
type trayBroker interface {
	Pending() []permission.PendingRequest
	Answer(ctx context.Context, id string, a permission.Answer) (permission.Decision, error)
}

// trayDispatch is what the tray needs of the dispatcher: pause and resume, and the runs
// held for the person (counted and listed like the window's "Waiting for you").
type trayDispatch interface {
	State() dispatch.State
	SetPaused(ctx context.Context, paused bool, by string) (dispatch.State, error)
	Inbox(ctx context.Context) ([]dispatch.InboxItem, error)
}

// TrayOptions configure the tray.
type TrayOptions struct {
	Broker trayBroker
	// Dispatch, when set, gives the menu its Pause dispatch / Resume dispatch line.
	Dispatch trayDispatch
	Bus      *eventbus.Bus
	// Sandbox, when set, reads the sandbox indicator at start (false while the probes
	// run); sandbox.status events keep it current. Amber and red mark the icon.
	Sandbox func() (api.SandboxIndicator, bool)
	// Icon is the app icon (PNG); the tray shows it scaled, with the pending count on it.
	Icon []byte
	// Open shows the window; Review shows it with the popup on one request; Show shows
	// it on a route (the failed runs; nil: Open); Quit ends the app.
	Open   func()
	Review func(id string)
	Show   func(route string)
	Quit   func()
}

// Tray is Airlock's StatusNotifierItem (fyne.io/systray over D-Bus): the pending count on
// its icon (a badge, red when a request needs the window, amber for P1 only) and in its
// title, each pending request — P1 with Allow for this session (when it has one), Allow
// once and Deny, P2 and interactive-only
// with "Review…", which opens the window's popup (the broker refuses a P2 allow from the
// tray) —, what waits besides (held runs, paused runs and tasks), the runs that failed
// since the person last opened them ("3 runs failed — Open…"), Open Airlock,
// Pause/Resume dispatch and Quit. The menu follows permission.requested/decided,
// inbox.changed, dispatch.notify and dispatch.state.
type Tray struct {
	opts TrayOptions

	mu         sync.Mutex
	cancelMenu context.CancelFunc
	stopWatch  context.CancelFunc
	end        func()
	started    bool
	shown      string // the pending set the menu shows (menuKey)
	failures   failureLog

	icons     *trayIcons
	iconShown trayIconKey // the icon on the bus, when iconSet
	iconSet   bool
	sandbox   api.SandboxIndicator // the latest sandbox indicator (zero: not known)
}

// NewTray returns a tray that is not yet on the bus. An Icon that is not an image is
// logged and left out: the tray then shows the badge alone.
func NewTray(opts TrayOptions) *Tray {
	icons, err := newTrayIcons(opts.Icon)
	if err != nil {
		slog.Warn("tray: the app icon is left out", "error", err)
		icons, _ = newTrayIcons(nil)
	}
	return &Tray{opts: opts, icons: icons}
}

// errNoSessionBus says the tray was left out: without a session bus systray's end()
// dereferences a nil connection (RECIPES.md).
var errNoSessionBus = errors.New("no D-Bus session bus")

// Start puts the item on the session bus and keeps its menu current. It returns an
// error, and starts nothing, when there is no session bus.
func (t *Tray) Start() error {
	if _, err := dbus.SessionBus(); err != nil {
		return fmt.Errorf("tray: %w: %v", errNoSessionBus, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.mu.Lock()
	t.stopWatch = cancel
	t.started = true
	t.mu.Unlock()
	start, end := systray.RunWithExternalLoop(func() {
		// Subscribe before the first build: a request raised in between would
		// otherwise wait for the next event to show.
		var sub *eventbus.Subscription
		if t.opts.Bus != nil {
			sub = t.opts.Bus.Subscribe(256, api.TopicPermissionRequested, api.TopicPermissionDecided, api.TopicDispatchState, api.TopicInboxChanged,
				api.TopicDispatchNotify, api.TopicSandboxStatus)
		}
		if t.opts.Sandbox != nil {
			if ind, ok := t.opts.Sandbox(); ok {
				t.mu.Lock()
				t.sandbox = ind
				t.mu.Unlock()
			}
		}
		t.rebuild()
		if sub != nil {
			go t.watch(ctx, sub)
		}
	}, nil)
	t.mu.Lock()
	t.end = end
	t.mu.Unlock()
	start()
	// systray runs onReady while start exports the item: an icon set in between can
	// miss the export, or go to a previous start's item. Put it on this one now.
	t.mu.Lock()
	t.iconSet = false
	t.mu.Unlock()
	t.rebuild()
	return nil
}

// Stop takes the item off the bus (systray closes the shared session connection).
func (t *Tray) Stop() {
	t.mu.Lock()
	end, stop, cancelMenu := t.end, t.stopWatch, t.cancelMenu
	t.end, t.started, t.iconSet = nil, false, false
	t.mu.Unlock()
	if stop != nil {
		stop()
	}
	if cancelMenu != nil {
		cancelMenu()
	}
	if end != nil {
		end()
	}
}

func (t *Tray) watch(ctx context.Context, sub *eventbus.Subscription) {
	defer sub.Close()
	for {
		ev, ok := sub.Next(ctx)
		if !ok {
			return
		}
		// A burst (several requests at once) needs one rebuild.
		evs, open := sub.Burst(ev)
		if !open {
			return
		}
		for _, ev := range evs {
			t.note(ev)
		}
		t.rebuild()
	}
}

// note counts a failure the menu tells, and keeps the sandbox indicator.
func (t *Tray) note(ev eventbus.Event) {
	if ev.Topic == api.TopicSandboxStatus {
		var st api.SandboxStatusChanged
		if err := json.Unmarshal(ev.Payload, &st); err == nil {
			t.mu.Lock()
			t.sandbox = st.Indicator
			t.mu.Unlock()
		}
		return
	}
	if ev.Topic != api.TopicDispatchNotify {
		return
	}
	var n api.DispatchNotice
	if err := json.Unmarshal(ev.Payload, &n); err != nil || n.Kind != api.NoticeFailure {
		return
	}
	t.mu.Lock()
	t.failures.add(n)
	t.mu.Unlock()
}

// openFailures opens what the failures line tells and forgets it.
func (t *Tray) openFailures() {
	t.mu.Lock()
	route := t.failures.route()
	t.failures.reset()
	t.mu.Unlock()
	if t.opts.Show != nil {
		t.opts.Show(route)
	} else {
		t.open()
	}
	t.rebuild()
}

// traySandboxLine is the menu's sandbox line and its tooltip: the indicator's words,
// "" while it is not known. A click opens the Sandbox tab.
func traySandboxLine(ind api.SandboxIndicator) (line, tip string) {
	if ind.Level == "" {
		return "", ""
	}
	line = "Sandbox: " + ind.Words
	switch ind.Level {
	case api.IndicatorRed:
		line = "⚠ " + line
	case api.IndicatorAmber:
		line = "! " + line
	}
	tip = strings.Join(ind.Reasons, "; ")
	if ind.Fix != "" {
		tip += " — way out: " + ind.Fix
	}
	return line + " — Open…", tip
}

// show opens the window on route (Open when the tray has no Show).
func (t *Tray) show(route string) {
	if t.opts.Show != nil {
		t.opts.Show(route)
		return
	}
	t.open()
}

// trayTitle is the item's title and the menu's first line.
func trayTitle(n int) string {
	switch n {
	case 0:
		return "Airlock"
	default:
		return fmt.Sprintf("Airlock — %d waiting", n)
	}
}

// trayLabel names a pending request in a menu line: tier, tool, what (cut short).
func trayLabel(p permission.PendingRequest) string {
	what := p.Summary
	if len(what) > len(p.Request.Tool)+1 && what[:len(p.Request.Tool)+1] == p.Request.Tool+" " {
		what = what[len(p.Request.Tool)+1:]
	}
	return fmt.Sprintf("%s %s %s", p.Tier, p.Request.Tool, cutLabel(what, 40))
}

// cutLabel shortens s to max characters, ending with "…" when it cut.
func cutLabel(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// trayAnswers reports whether the tray may answer p in place: P1 requests that are not
// interactive-only. Everything else is reviewed in the window's popup.
func trayAnswers(p permission.PendingRequest) bool {
	return p.Tier == permission.P1 && !p.InteractiveOnly
}

// rebuild draws the menu again from the broker's pending list.
func (t *Tray) rebuild() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return
	}
	pending := t.opts.Broker.Pending()
	held := t.held()
	t.updateIcon(pending, len(held))
	paused := t.opts.Dispatch != nil && t.opts.Dispatch.State().Paused
	// Redraw only when the list changed: a redraw gives every line a new id, and a click
	// on a line of the menu a panel still shows would then do nothing.
	failures := ""
	if t.failures.count > 0 {
		failures = t.failures.summary()
	}
	key := fmt.Sprintf("paused=%t\nfailed=%s\nsandbox=%s %s\n%s%s", paused, failures, t.sandbox.Level, t.sandbox.Words, menuKey(pending), heldKey(held))
	if t.cancelMenu != nil && key == t.shown {
		return
	}
	t.shown = key
	if t.cancelMenu != nil {
		t.cancelMenu()
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.cancelMenu = cancel

	systray.ResetMenu()
	title := trayTitle(len(pending) + len(held))
	systray.SetTitle(title)
	systray.SetTooltip(title)
	head := systray.AddMenuItem(title, "")
	head.Disable()
	if line, tip := traySandboxLine(t.sandbox); line != "" {
		item := systray.AddMenuItem(line, tip)
		onClick(ctx, item, func() { t.show("#/settings/sandbox") })
	}
	systray.AddSeparator()
	if len(pending)+len(held) == 0 {
		none := systray.AddMenuItem("Nothing is waiting for you", "")
		none.Disable()
	}
	for _, p := range pending {
		id := p.ID
		if trayAnswers(p) {
			item := systray.AddMenuItem(trayLabel(p), p.Summary)
			onClick(ctx, item, func() { t.review(id) })
			// A P1 is remembered for its session by default (it asks the first time only);
			// once is the exception, beside it.
			if slices.Contains(p.Scopes, permission.ScopeSession) {
				onClick(ctx, item.AddSubMenuItem("Allow for this session", "Allow it, and the same call for the rest of this session"),
					func() { t.answer(id, true, permission.ScopeSession) })
			}
			onClick(ctx, item.AddSubMenuItem("Allow once", "Allow this request once"), func() { t.answer(id, true, permission.ScopeOnce) })
			onClick(ctx, item.AddSubMenuItem("Deny", "Deny this request"), func() { t.answer(id, false, "") })
			onClick(ctx, item.AddSubMenuItem("Review…", "Open the request in Airlock's window"), func() { t.review(id) })
			continue
		}
		item := systray.AddMenuItem(trayLabel(p)+" — Review…", "Only Airlock's window can allow this request")
		onClick(ctx, item, func() { t.review(id) })
	}
	for _, h := range held {
		item := systray.AddMenuItem(heldLabel(h)+" — Open…", h.Asked)
		onClick(ctx, item, t.open)
	}
	if failures != "" {
		// Not counted as waiting: a failure asks nothing, it is told until opened.
		item := systray.AddMenuItem(cutLabel(failures, 48)+" — Open…", t.failures.body())
		onClick(ctx, item, t.openFailures)
	}
	systray.AddSeparator()
	onClick(ctx, systray.AddMenuItem("Open Airlock", ""), t.open)
	if t.opts.Dispatch != nil {
		if paused {
			onClick(ctx, systray.AddMenuItem("Resume dispatch", "Scheduled runs start on their own again"), func() { t.setPaused(false) })
		} else {
			onClick(ctx, systray.AddMenuItem("Pause dispatch", "Scheduled runs are skipped until you resume; running runs go on"), func() { t.setPaused(true) })
		}
	}
	onClick(ctx, systray.AddMenuItem("Quit Airlock", "Stop Airlock: scheduled runs wait until it starts again"), t.quit)
}

// updateIcon puts the icon for pending on the bus when it differs from the one there.
// t.mu is held.
func (t *Tray) updateIcon(pending []permission.PendingRequest, held int) {
	n, tone := trayBadge(pending)
	if held > 0 {
		// Held runs are answered in the window (authorizing a directory is the person's).
		n, tone = n+held, badgeRed
	}
	key := iconKey(n, tone)
	key.sandbox = sandboxMark(t.sandbox.Level)
	if t.iconSet && key == t.iconShown {
		return
	}
	png, err := t.icons.iconFor(key)
	if err != nil {
		slog.Error("tray: render the icon", "pending", n, "error", err)
		return
	}
	if err := setIcon(png); err != nil {
		slog.Error("tray: show the icon", "pending", n, "error", err)
		return
	}
	t.iconShown, t.iconSet = key, true
}

// setIcon is systray.SetIcon, which panics (prop.SetMust) when the item's D-Bus
// connection is gone — the session bus restarted, or the tray was stopped. The tray then
// keeps running with the icon it had and tries again at the next change.
func setIcon(png []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("systray SetIcon: %v", r)
		}
	}()
	systray.SetIcon(png)
	return nil
}

// held lists what waits for the person besides pending requests: runs held for a
// directory or a department, paused runs and tasks (the window's held groups). t.mu is held.
func (t *Tray) held() []dispatch.InboxItem {
	if t.opts.Dispatch == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	items, err := t.opts.Dispatch.Inbox(ctx)
	if err != nil {
		slog.Warn("tray: read what waits", "error", err)
		return nil
	}
	out := items[:0:0]
	for _, it := range items {
		if it.Kind != dispatch.InboxApprovalKind {
			out = append(out, it)
		}
	}
	return out
}

// heldLabel names a held group in a menu line (cut short).
func heldLabel(it dispatch.InboxItem) string { return cutLabel(it.Asked, 48) }

// heldKey identifies what the menu shows of the held groups.
func heldKey(held []dispatch.InboxItem) string {
	var b strings.Builder
	for _, it := range held {
		fmt.Fprintf(&b, "held\x00%s\x00%s\n", it.Key, it.Asked)
	}
	return b.String()
}

// menuKey identifies what the menu shows of the pending list.
func menuKey(pending []permission.PendingRequest) string {
	var b strings.Builder
	for _, p := range pending {
		fmt.Fprintf(&b, "%s\x00%s\x00%t\x00%s\n", p.ID, p.Tier, p.InteractiveOnly, p.Summary)
	}
	return b.String()
}

// onClick runs f for each click on item until ctx ends or the item is removed. A
// receiver always waits: systray drops a click nobody receives.
func onClick(ctx context.Context, item *systray.MenuItem, f func()) {
	ch := item.ClickedCh
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-ch:
				if !ok {
					return
				}
				f()
			}
		}
	}()
}

// answer answers from the tray: not interactive (a D-Bus call can come from any
// process of the person), so the broker accepts only P1 allows from here, remembered
// for the session or once.
func (t *Tray) answer(id string, allow bool, scope permission.Scope) {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	_, err := t.opts.Broker.Answer(ctx, id, permission.Answer{Allow: allow, Scope: scope, By: permission.ByTray})
	if err != nil {
		slog.Warn("tray answer refused", "request", id, "allow", allow, "error", err)
		t.review(id)
	}
}

// setPaused pauses or resumes dispatch; dispatch.state brings the new menu line.
func (t *Tray) setPaused(paused bool) {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	if _, err := t.opts.Dispatch.SetPaused(ctx, paused, "tray"); err != nil {
		slog.Error("tray: pause/resume dispatch", "paused", paused, "error", err)
	}
}

func (t *Tray) review(id string) {
	if t.opts.Review != nil {
		t.opts.Review(id)
	}
}

func (t *Tray) open() {
	if t.opts.Open != nil {
		t.opts.Open()
	}
}

func (t *Tray) quit() {
	if t.opts.Quit != nil {
		t.opts.Quit()
	}
}
