package desktop

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

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
	Bus    *eventbus.Bus
	Open   func()
	Review func(id string)
}

// Notifier raises a freedesktop notification (esiqveland/notify) for each new pending
// request — with Allow (for this session, or once) and Deny for P1, Review for the rest — and for each new
// group of held runs. An ActionInvoked signal is accepted only from the current owner of
// org.freedesktop.Notifications: any process on the bus can emit one.
type Notifier struct {
	opts NotifierOptions
	conn *dbus.Conn

	mu       sync.Mutex
	notified map[string]bool   // request ids and inbox keys already notified
	byNote   map[uint32]string // notification id → request id or inbox key
	stop     context.CancelFunc
	done     chan struct{}
}

// StartNotifier connects its own session-bus connection (systray owns the shared one)
// and starts following requests and held runs. Requests already pending at start are
// not announced (the window and tray show them).
func StartNotifier(opts NotifierOptions) (*Notifier, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	if err := conn.AddMatchSignal(dbus.WithMatchObjectPath(notificationsPath), dbus.WithMatchInterface(notificationsIface),
		dbus.WithMatchMember("ActionInvoked")); err != nil {
		conn.Close()
		return nil, fmt.Errorf("notifications: listen for actions: %w", err)
	}
	n := &Notifier{opts: opts, conn: conn, notified: map[string]bool{}, byNote: map[uint32]string{}, done: make(chan struct{})}
	for _, p := range opts.Broker.Pending() {
		n.notified[p.ID] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.stop = cancel
	signals := make(chan *dbus.Signal, 32)
	conn.Signal(signals)
	sub := opts.Bus.Subscribe(64, api.TopicPermissionRequested, api.TopicInboxChanged)
	go func() {
		defer close(n.done)
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-sub.C:
				if !ok {
					return
				}
				n.announce(ctx)
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
	for _, it := range items {
		if it.Kind == dispatch.InboxApprovalKind || n.seen(it.Key) {
			continue
		}
		n.send(it.Key, notify.Notification{
			AppName: "Airlock", AppIcon: "dialog-warning",
			Summary: "A run is waiting for you", Body: it.Asked,
			ExpireTimeout: notify.ExpireTimeoutNever,
			Actions:       []notify.Action{notify.NewDefaultAction("Open Airlock")},
		})
	}
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
	if s == nil || s.Name != notificationsIface+".ActionInvoked" || len(s.Body) < 2 {
		return
	}
	var owner string
	if err := n.conn.BusObject().Call("org.freedesktop.DBus.GetNameOwner", 0, notificationsName).Store(&owner); err != nil || owner != s.Sender {
		slog.Warn("notifications: ignored an action not sent by the notification server", "sender", s.Sender, "owner", owner)
		return
	}
	id, _ := s.Body[0].(uint32)
	action, _ := s.Body[1].(string)
	n.mu.Lock()
	key, ok := n.byNote[id]
	n.mu.Unlock()
	if !ok {
		return
	}
	n.act(key, action)
}

// act carries out a notification's action on the request or held group key.
func (n *Notifier) act(key, action string) {
	pending := false
	for _, p := range n.opts.Broker.Pending() {
		pending = pending || p.ID == key
	}
	switch {
	case !pending:
		if n.opts.Open != nil {
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
