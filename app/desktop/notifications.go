package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/esiqveland/notify"
	"github.com/godbus/dbus/v5"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/eventbus"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/permission"
)

// The freedesktop notification service.
const (
	notificationsName  = "org.freedesktop.Notifications"
	notificationsPath  = "/org/freedesktop/Notifications"
	notificationsIface = "org.freedesktop.Notifications"
)

// Notification action keys.
const (
	actionDefault = "default" // a click on the notification: open the window (the popup for a request)
	actionAllow   = "allow"   // P1 only: allow, for the session when the request has one
	actionDeny    = "deny"
)

// inboxReader is what the notifier needs of dispatch: the held runs.
type inboxReader interface {
	Inbox(ctx context.Context) ([]dispatch.InboxItem, error)
}

// NotifierOptions configure desktop notifications.
type NotifierOptions struct {
	Broker trayBroker
	Inbox  inboxReader // nil: no notifications for held runs
	// Digest reads the latest digest (app.Core.Digest); nil: no digest notification.
	Digest func() api.DigestCard
	Bus    *eventbus.Bus
	Open   func()
	// Show opens the window on a route ("#/dispatch/runs/12"); nil: Open.
	Show   func(route string)
	Review func(id string)
	// Sandbox reads the sandbox indicator now (false while the probes run); nil: no
	// notification when the sandbox is not green.
	Sandbox func() (api.SandboxIndicator, bool)
}

// Keys of the notifications that are not one request or one held group.
const (
	keyFailures = "failures" // the merged failures
	keyHeld     = "held"     // several held groups at once
)

// failureEvery is the least time between two updates of the failures notification: a
// burst of failures is told once, then once more with the final count.
const failureEvery = 2 * time.Second

// Notifier raises a freedesktop notification (esiqveland/notify) for each new pending
// request — with Allow (for this session, or once) and Deny for P1, Review for the rest —,
// for what waits for the person (held runs, paused runs and tasks; several at once as
// one), for failed runs (a burst as one notification, "100 runs failed", replaced in
// place while the person has not closed it) and for each digest. A successful run says
// nothing. An ActionInvoked signal is accepted only from the current owner of
// org.freedesktop.Notifications: any process on the bus can emit one.
type Notifier struct {
	opts NotifierOptions
	conn *dbus.Conn

	mu       sync.Mutex
	notified map[string]bool   // request ids, inbox keys and digests already notified
	byNote   map[uint32]string // notification id → request id, inbox key or one of the keys above
	routes   map[string]string // key → the window's route a click opens
	failures failureLog        // the failures the failures notification tells
	failNote uint32            // that notification's id while it shows, 0 none
	failSent time.Time         // when it was last sent
	stop     context.CancelFunc
	done     chan struct{}
}

// StartNotifier connects its own session-bus connection (systray owns the shared one)
// and starts following requests, held runs, failures and digests. Requests and held runs
// already waiting at start are not announced (the window, the tray and the digest show
// them); the latest digest is, once.
func StartNotifier(opts NotifierOptions) (*Notifier, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	for _, member := range []string{"ActionInvoked", "NotificationClosed"} {
		if err := conn.AddMatchSignal(dbus.WithMatchObjectPath(notificationsPath), dbus.WithMatchInterface(notificationsIface),
			dbus.WithMatchMember(member)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("notifications: listen for %s: %w", member, err)
		}
	}
	n := &Notifier{opts: opts, conn: conn, notified: map[string]bool{}, byNote: map[uint32]string{}, routes: map[string]string{}, done: make(chan struct{})}
	for _, p := range opts.Broker.Pending() {
		n.notified[p.ID] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.stop = cancel
	if opts.Inbox != nil {
		ictx, icancel := context.WithTimeout(ctx, statusTimeout)
		if items, err := opts.Inbox.Inbox(ictx); err == nil {
			for _, it := range items {
				n.notified[it.Key] = true
			}
		}
		icancel()
	}
	signals := make(chan *dbus.Signal, 32)
	conn.Signal(signals)
	// Subscribed before the digest is read: one published in between is read either way.
	sub := opts.Bus.Subscribe(256, api.TopicPermissionRequested, api.TopicInboxChanged, api.TopicDispatchNotify, api.TopicDispatchDigest, api.TopicSandboxStatus)
	n.digest()
	if opts.Sandbox != nil {
		if ind, ok := opts.Sandbox(); ok {
			n.sandboxWarning(ind)
		}
	}
	go func() {
		defer close(n.done)
		defer sub.Close()
		flush := time.NewTimer(time.Hour)
		flush.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.C:
				if !ok {
					return
				}
				// A burst (a hundred runs failing at once) is handled as one.
				evs, open := sub.Burst(ev)
				if !open {
					return
				}
				if wait := n.handle(ctx, evs); wait > 0 {
					flush.Reset(wait)
				}
			case <-flush.C:
				if wait := n.flushFailures(); wait > 0 {
					flush.Reset(wait)
				}
			case s, ok := <-signals:
				if !ok {
					return
				}
				n.onSignal(s)
			}
		}
	}()
	return n, nil
}

// handle acts on a burst of events; it returns how long until the failures
// notification may be updated, when it waits for that.
func (n *Notifier) handle(ctx context.Context, evs []eventbus.Event) time.Duration {
	announce, digest, failed := false, false, false
	for _, ev := range evs {
		switch ev.Topic {
		case api.TopicDispatchDigest:
			digest = true
		case api.TopicSandboxStatus:
			var st api.SandboxStatusChanged
			if err := json.Unmarshal(ev.Payload, &st); err == nil && n.opts.Sandbox != nil {
				n.sandboxWarning(st.Indicator)
			}
		case api.TopicDispatchNotify:
			var notice api.DispatchNotice
			if err := json.Unmarshal(ev.Payload, &notice); err != nil {
				slog.Warn("notifications: a dispatch notice does not decode", "error", err)
				continue
			}
			if notice.Kind == api.NoticeFailure {
				n.mu.Lock()
				n.failures.add(notice)
				n.mu.Unlock()
				failed = true
				continue
			}
			// Needs you, task paused: what waits shows in the inbox, announced once per group.
			announce = true
		default:
			announce = true
		}
	}
	if announce {
		n.announce(ctx)
	}
	if digest {
		n.digest()
	}
	if failed {
		return n.flushFailures()
	}
	return 0
}

// flushFailures shows the failures notification, replacing the one showing, unless it
// was updated less than failureEvery ago: then it returns how long to wait.
func (n *Notifier) flushFailures() time.Duration {
	n.mu.Lock()
	if n.failures.count == 0 {
		n.mu.Unlock()
		return 0
	}
	if wait := failureEvery - time.Since(n.failSent); !n.failSent.IsZero() && wait > 0 {
		n.mu.Unlock()
		return wait
	}
	f, replaces := n.failures, n.failNote
	n.failSent = time.Now()
	n.routes[keyFailures] = f.route()
	n.mu.Unlock()
	note := notify.Notification{
		AppName: "Airlock", AppIcon: "dialog-error", ReplacesID: replaces,
		Summary: f.summary(), Body: f.body(),
		ExpireTimeout: notify.ExpireTimeoutNever,
		Actions:       []notify.Action{notify.NewDefaultAction("Open")},
	}
	id, err := notify.SendNotification(n.conn, note)
	if err != nil {
		slog.Warn("notifications: send", "error", err)
		return 0
	}
	n.mu.Lock()
	n.failNote = id
	n.byNote[id] = keyFailures
	n.mu.Unlock()
	return 0
}

// digest notifies the latest digest, once.
func (n *Notifier) digest() {
	if n.opts.Digest == nil {
		return
	}
	dg := n.opts.Digest()
	key := fmt.Sprintf("digest:%d", dg.ID)
	if dg.ID == 0 || n.seen(key) {
		return
	}
	n.mu.Lock()
	n.routes[key] = routeWaiting
	n.mu.Unlock()
	n.send(key, notify.Notification{
		AppName: "Airlock", AppIcon: "dialog-information",
		Summary:       "While Airlock was not watching",
		Body:          digestWords(dg),
		ExpireTimeout: notify.ExpireTimeoutNever,
		Actions:       []notify.Action{notify.NewDefaultAction("Open Airlock")},
	})
}

// routeSandbox is the window's Sandbox tab (its probes and their ways out).
const routeSandbox = "#/settings/sandbox"

// sandboxWarning notifies, once per distinct warning, that the sandbox is not green: the
// OS sandbox missing or degraded, or commands not sandboxed at all, with the way out.
func (n *Notifier) sandboxWarning(ind api.SandboxIndicator) {
	if ind.Level != api.IndicatorRed && ind.Level != api.IndicatorAmber {
		return
	}
	key := "sandbox:" + ind.Level + ":" + ind.Words + ":" + strings.Join(ind.Reasons, "|")
	if n.seen(key) {
		return
	}
	summary, icon := "Airlock: the sandbox is degraded ("+ind.Words+")", "dialog-warning"
	if ind.Level == api.IndicatorRed {
		summary, icon = "Airlock: commands are not sandboxed", "dialog-error"
		if ind.Words != "not sandboxed" {
			summary = "Airlock: " + ind.Words
		}
	}
	body := strings.Join(ind.Reasons, "\n")
	if ind.Fix != "" {
		body += "\nWay out: " + ind.Fix
	}
	n.mu.Lock()
	n.routes[key] = routeSandbox
	n.mu.Unlock()
	n.send(key, notify.Notification{
		AppName: "Airlock", AppIcon: icon, Summary: summary, Body: body,
		ExpireTimeout: notify.ExpireTimeoutNever,
		Actions:       []notify.Action{notify.NewDefaultAction("Open the Sandbox settings")},
	})
}

// Stop ends the notifier and closes its connection.
func (n *Notifier) Stop() {
	n.stop()
	<-n.done
	n.conn.Close()
}

// allowWords labels a notification's allow: what the broker's default scope grants.
func allowWords(p permission.PendingRequest) string {
	if slices.Contains(p.Scopes, permission.ScopeSession) {
		return "Allow for this session"
	}
	return "Allow once"
}

// announce notifies what is new: pending requests, then held directories.
func (n *Notifier) announce(ctx context.Context) {
	for _, p := range n.opts.Broker.Pending() {
		if n.seen(p.ID) {
			continue
		}
		note := notify.Notification{
			AppName: "Airlock", AppIcon: "dialog-question",
			Summary:       fmt.Sprintf("%s %s asks: %s", p.Tier, p.Request.Tool, askWords(p)),
			Body:          p.Summary,
			ExpireTimeout: notify.ExpireTimeoutNever,
			Actions:       []notify.Action{notify.NewDefaultAction("Review")},
		}
		if trayAnswers(p) {
			note.Actions = append(note.Actions, notify.Action{Key: actionAllow, Label: allowWords(p)}, notify.Action{Key: actionDeny, Label: "Deny"})
		} else {
			note.Actions = append(note.Actions, notify.Action{Key: actionDeny, Label: "Deny"})
			note.SetUrgency(notify.UrgencyCritical)
		}
		n.send(p.ID, note)
	}
	if n.opts.Inbox == nil {
		return
	}
	items, err := n.opts.Inbox.Inbox(ctx)
	if err != nil {
		slog.Warn("notifications: read the inbox", "error", err)
		return
	}
	var fresh []dispatch.InboxItem
	for _, it := range items {
		if it.Kind == dispatch.InboxApprovalKind || n.seen(it.Key) {
			continue
		}
		fresh = append(fresh, it)
	}
	n.mu.Lock()
	for _, it := range fresh {
		n.routes[it.Key] = routeWaiting
	}
	n.routes[keyHeld] = routeWaiting
	n.mu.Unlock()
	switch len(fresh) {
	case 0:
	case 1:
		n.send(fresh[0].Key, notify.Notification{
			AppName: "Airlock", AppIcon: "dialog-warning",
			Summary: heldSummary(fresh[0]), Body: fresh[0].Asked,
			ExpireTimeout: notify.ExpireTimeoutNever,
			Actions:       []notify.Action{notify.NewDefaultAction("Open Airlock")},
		})
	default:
		lines := make([]string, 0, failureRecent+1)
		for i, it := range fresh {
			if i == failureRecent {
				lines = append(lines, fmt.Sprintf("and %d more", len(fresh)-failureRecent))
				break
			}
			lines = append(lines, cutLabel(it.Asked, 100))
		}
		n.send(keyHeld, notify.Notification{
			AppName: "Airlock", AppIcon: "dialog-warning",
			Summary: fmt.Sprintf("%d things are waiting for you", len(fresh)), Body: strings.Join(lines, "\n"),
			ExpireTimeout: notify.ExpireTimeoutNever,
			Actions:       []notify.Action{notify.NewDefaultAction("Open Airlock")},
		})
	}
}

// heldSummary is the title of one held group's notification.
func heldSummary(it dispatch.InboxItem) string {
	switch it.Kind {
	case dispatch.InboxPausedTask:
		if len(it.Tasks) == 1 {
			return fmt.Sprintf("Task %s paused itself", it.Tasks[0])
		}
		return "A task paused itself"
	case dispatch.InboxPausedRun:
		return "A run is paused: it needs you"
	}
	return "A run is waiting for you"
}

// askWords says what the person can do about p from the notification.
func askWords(p permission.PendingRequest) string {
	if p.InteractiveOnly || p.Tier == permission.P2 {
		return "review it in Airlock"
	}
	return "allow or deny"
}

// seen marks key notified and reports whether it was already.
func (n *Notifier) seen(key string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.notified[key] {
		return true
	}
	n.notified[key] = true
	return false
}

func (n *Notifier) send(key string, note notify.Notification) {
	id, err := notify.SendNotification(n.conn, note)
	if err != nil {
		slog.Warn("notifications: send", "error", err)
		return
	}
	n.mu.Lock()
	n.byNote[id] = key
	n.mu.Unlock()
}

// onSignal handles ActionInvoked, only from the notification server itself.
func (n *Notifier) onSignal(s *dbus.Signal) {
	if s == nil || len(s.Body) < 2 || (s.Name != notificationsIface+".ActionInvoked" && s.Name != notificationsIface+".NotificationClosed") {
		return
	}
	var owner string
	if err := n.conn.BusObject().Call("org.freedesktop.DBus.GetNameOwner", 0, notificationsName).Store(&owner); err != nil || owner != s.Sender {
		slog.Warn("notifications: ignored an action not sent by the notification server", "sender", s.Sender, "owner", owner)
		return
	}
	id, _ := s.Body[0].(uint32)
	if s.Name == notificationsIface+".NotificationClosed" {
		n.closed(id)
		return
	}
	action, _ := s.Body[1].(string)
	n.mu.Lock()
	key, ok := n.byNote[id]
	n.mu.Unlock()
	if !ok {
		return
	}
	n.act(key, action)
}

// closed forgets a notification the server closed (the person dismissed it, or clicked
// it): the next failure starts a new count.
func (n *Notifier) closed(id uint32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if id == n.failNote && id != 0 {
		n.failures.reset()
		n.failNote = 0
	}
}

// act carries out a notification's action on the request or held group key.
func (n *Notifier) act(key, action string) {
	pending := false
	for _, p := range n.opts.Broker.Pending() {
		pending = pending || p.ID == key
	}
	switch {
	case !pending:
		n.mu.Lock()
		route := n.routes[key]
		if key == keyFailures {
			n.failures.reset()
			n.failNote = 0
		}
		n.mu.Unlock()
		switch {
		case route != "" && n.opts.Show != nil:
			n.opts.Show(route)
		case n.opts.Open != nil:
			n.opts.Open()
		}
	case action == actionAllow || action == actionDeny:
		ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
		defer cancel()
		// Not interactive: the broker allows only P1 from a notification. No scope: the
		// broker's default, for the session when the request has one (as allowWords says).
		if _, err := n.opts.Broker.Answer(ctx, key, permission.Answer{Allow: action == actionAllow, By: permission.ByNotification}); err != nil {
			slog.Warn("notifications: answer refused", "request", key, "error", err)
			if n.opts.Review != nil {
				n.opts.Review(key)
			}
		}
	default:
		if n.opts.Review != nil {
			n.opts.Review(key)
		}
	}
}
