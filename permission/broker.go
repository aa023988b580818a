package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/permission/preflight"
	"github.com/airlock-app/airlock/redact"
)

// Publisher receives the broker's events; the app's event bus implements it.
type Publisher interface {
	Publish(topic string, payload any)
}

// Event topics: api's, with payloads api.PermissionRequested and api.PermissionDecided.
const (
	TopicRequested = api.TopicPermissionRequested
	TopicDecided   = api.TopicPermissionDecided
)

// Errors of Answer and Await.
var (
	ErrNotPending      = errors.New("no such pending request")
	ErrInteractiveOnly = errors.New("interactive-only request")
	ErrBadAnswer       = errors.New("answer not accepted")
	ErrClosed          = errors.New("permission broker closed")
	ErrRequestMismatch = errors.New("request id reused for a different request")
	// ErrNeedsPerson: the answer needs a person (a P2 allow, an always grant) and came
	// through a surface that is not one.
	ErrNeedsPerson = errors.New("this answer needs a person")
)

// BrokerOptions configure NewBroker.
type BrokerOptions struct {
	DB        *gorm.DB  // required; Migrate must have run
	Settings  Effective // from Resolve; the zero value means DefaultEffective()
	Publisher Publisher // may be nil
	Isolation Isolation // may be nil until the sandbox adapter exists
	// SettingsFor, when set, is the configuration of one request: the trusted settings
	// with the project policy files around its working directory layered on (from the
	// core's one resolution). key names that combination (the project files and their
	// contents), so the compiled form is reused; "" means Settings itself. An error
	// (an unreadable project file) refuses the request: a tightening is never dropped.
	SettingsFor func(ctx context.Context, req Request) (e Effective, key string, err error)
	Preflight   preflight.Options
	// RecoveryGrace is how long a request recovered at start-up waits for its caller
	// to re-attach (Await with the same ID) before it is marked expired. Default 2m.
	RecoveryGrace time.Duration
	// Attended reports whether anything can answer a person's question now (a window,
	// the tray, notifications, a terminal watching the approvals). nil: always. A request
	// with AnswerUnattended is answered at once when it reports false.
	Attended func() bool
	// MaxPendingPerCaller caps the requests one caller (WithCaller) has waiting for the
	// person; beyond it Await refuses with ErrTooManyPending. 0: the default
	// (DefaultMaxPendingPerCaller); negative: no cap.
	MaxPendingPerCaller int
	Logger              *slog.Logger
}

// Broker decides every tool call and waits for the person when the decision is ask.
type Broker struct {
	db     *gorm.DB
	pub    Publisher
	iso    atomic.Pointer[Isolation]
	grants *Grants
	cfg    atomic.Pointer[compiled]
	// settingsFor and perRequest: see BrokerOptions.SettingsFor; perRequest maps a key
	// to its compiled configuration and is emptied by Reload.
	settingsFor func(ctx context.Context, req Request) (Effective, string, error)
	cfgMu       sync.Mutex
	perRequest  map[string]*compiled
	preflight   preflight.Options
	log         *slog.Logger
	audit       *auditWriter
	grace       time.Duration
	attended    func() bool
	// writeMu serialises this broker's writes: SQLite has one writer, and many
	// connections racing for it spin on the busy timeout.
	writeMu *sync.Mutex

	mu      sync.Mutex
	pending map[string]*pendingEntry
	quota   quota
	closed  bool
	stop    chan struct{}
}

type pendingEntry struct {
	req Request // as decided: with the params a before_tool_use hook rewrote it to
	// asked are the params as the caller asked them, when a hook rewrote them (nil
	// otherwise): a caller re-attaching after a restart asks with these.
	asked     json.RawMessage
	ask       Decision
	created   time.Time
	deadline  time.Time
	waiters   int
	recovered bool
	claimed   bool
	// place is where an always grant of it applies (alwaysPlace); "" offers none
	// unless the request names a department.
	place string
	// caller holds one of its caller's places (quota) while it waits (none: the zero asker).
	caller asker
	done   chan struct{}
	final  Decision
}

// PendingRequest is a request waiting for a person, as surfaces show it.
type PendingRequest = api.PendingRequest

// NewBroker loads the grants, recovers the requests that were pending when the app
// stopped (marking expired those whose caller is gone) and starts the audit writer.
func NewBroker(ctx context.Context, o BrokerOptions) (*Broker, error) {
	if o.DB == nil {
		return nil, errors.New("new permission broker: no database")
	}
	if o.Settings.ApprovalPolicy == "" {
		o.Settings = DefaultEffective()
	}
	cfg, err := compile(o.Settings)
	if err != nil {
		return nil, fmt.Errorf("new permission broker: %w", err)
	}
	grants, err := OpenGrants(ctx, o.DB)
	if err != nil {
		return nil, fmt.Errorf("new permission broker: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	b := &Broker{
		db: o.DB, pub: o.Publisher, grants: grants, preflight: o.Preflight, settingsFor: o.SettingsFor,
		log: log, grace: o.RecoveryGrace, attended: o.Attended, pending: map[string]*pendingEntry{}, stop: make(chan struct{}),
		writeMu: &sync.Mutex{},
	}
	if b.grace <= 0 {
		b.grace = 2 * time.Minute
	}
	b.quota = quota{max: o.MaxPendingPerCaller, waiting: map[string]int{}, processes: map[string]int{}, refused: map[string]int{}}
	if b.quota.max == 0 {
		b.quota.max = DefaultMaxPendingPerCaller
	}
	b.cfg.Store(cfg)
	b.SetIsolation(o.Isolation)
	b.audit = newAuditWriter(o.DB, log, b.writeMu)
	if err := b.recover(ctx); err != nil {
		b.audit.close()
		return nil, fmt.Errorf("new permission broker: %w", err)
	}
	return b, nil
}

// Reload swaps in a new configuration (config.toml changed); requests already waiting
// keep the decision they were asked with.
func (b *Broker) Reload(e Effective) error {
	cfg, err := compile(e)
	if err != nil {
		return fmt.Errorf("reload permission settings: %w", err)
	}
	b.cfg.Store(cfg)
	b.cfgMu.Lock()
	b.perRequest = nil
	b.cfgMu.Unlock()
	return nil
}

// configFor is the compiled configuration of one request (BrokerOptions.SettingsFor).
func (b *Broker) configFor(ctx context.Context, req *Request) (*compiled, error) {
	base := b.cfg.Load()
	if b.settingsFor == nil {
		return base, nil
	}
	eff, key, err := b.settingsFor(ctx, *req)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return base, nil
	}
	b.cfgMu.Lock()
	defer b.cfgMu.Unlock()
	if c, ok := b.perRequest[key]; ok {
		return c, nil
	}
	c, err := compile(eff)
	if err != nil {
		return nil, err
	}
	if b.perRequest == nil || len(b.perRequest) > 256 {
		b.perRequest = map[string]*compiled{}
	}
	b.perRequest[key] = c
	return c, nil
}

// Settings returns the effective configuration in use.
func (b *Broker) Settings() Effective { return b.cfg.Load().eff }

// Grants returns the grant store (list, revoke).
func (b *Broker) Grants() *Grants { return b.grants }

// SetIsolation installs the sandbox's isolation verdict (nil removes it).
func (b *Broker) SetIsolation(iso Isolation) {
	if iso == nil {
		b.iso.Store(nil)
		return
	}
	b.iso.Store(&iso)
}

// Check runs the pipeline without hooks, the reviewer or waiting, for `airlock check`:
// the verdict the request would get under the effective policy, and why.
func (b *Broker) Check(ctx context.Context, req Request) Evaluation {
	req.CleanLabels()
	leave, err := enterGate(ctx)
	if err != nil {
		ev := Evaluation{Decision: Decision{Verdict: Deny, Layer: LayerPolicy, Reasons: []string{"the caller stopped waiting"}}}
		return ev
	}
	defer leave()
	return b.evaluate(ctx, &req, evalMode{})
}

// Await decides a request and, when it asks, blocks until the person or the policy
// answers, its timeout passes, or ctx ends (then the request is cancelled, unless the
// broker is shutting down, in which case it stays pending for the next start). Passing
// the ID of a request that is still pending re-attaches to it; the ID of one answered
// while its caller was away returns that answer.
func (b *Broker) Await(ctx context.Context, req Request) (Decision, error) {
	if req.Tool == "" {
		return Decision{}, errors.New("permission request without a tool")
	}
	req.CleanLabels()
	if req.ID == "" {
		req.ID = newID("req")
	} else if d, ok, err := b.attach(ctx, req); ok || err != nil {
		return d, err
	}
	asked := req.Params
	leave, err := enterGate(ctx)
	if err != nil {
		return Decision{}, err
	}
	ev := b.evaluate(ctx, &req, evalMode{hooks: true, reviewer: true})
	leave()
	d := ev.Decision
	d.RequestID = req.ID
	if d.Verdict != Ask {
		b.record(req, d)
		return d, nil
	}
	if req.AnswerUnattended && b.attended != nil && !b.attended() {
		// Nothing would show the question: the caller answers now rather than wait.
		d = nobodyAnswers(d, req, api.AnsweredUnattended, "nothing can answer in Airlock now: no window, tray, notification "+
			"or terminal (`airlock approvals watch`) is following its approvals")
		b.record(req, d)
		return d, nil
	}
	caller := callerFrom(ctx)
	if d, err := b.reserveFor(caller, req, d); err != nil {
		return d, err
	}
	e := &pendingEntry{req: req, ask: d, created: time.Now().UTC(), waiters: 1, done: make(chan struct{}),
		place: alwaysPlace(req.Context, b.preflight.Home), caller: caller}
	if !jsonEqual(asked, req.Params) {
		e.asked = asked
	}
	timeout := req.Timeout
	if timeout == 0 {
		timeout = b.cfg.Load().eff.RequestTimeout
	}
	if timeout > 0 {
		e.deadline = e.created.Add(timeout)
	}
	if err := b.persistPending(ctx, e); err != nil {
		b.releaseFor(caller)
		d = denyWith(d, LayerPolicy, "the request could not be recorded, so it is refused: "+err.Error())
		b.record(req, d)
		return d, err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.releaseFor(caller)
		return denyWith(d, LayerPolicy, "Airlock is shutting down"), ErrClosed
	}
	b.pending[req.ID] = e
	b.mu.Unlock()
	b.publish(TopicRequested, api.PermissionRequested{ID: req.ID, Tool: req.Tool, Summary: summary(req),
		Tier: string(e.ask.Tier), InteractiveOnly: e.ask.InteractiveOnly})
	return b.waitEntry(ctx, e)
}

// attach re-joins a pending request with the same ID, or returns the answer given while
// its caller was away. ok is false when the request must be evaluated afresh.
func (b *Broker) attach(ctx context.Context, req Request) (Decision, bool, error) {
	// A request recovered after a restart was read back redacted: it is compared with
	// the caller's in that form, and then runs with the caller's real parameters.
	b.mu.Lock()
	if e, ok := b.pending[req.ID]; ok && !e.claimed {
		if !sameRequest(askedAs(e.req, e.asked), req) && !(e.recovered && sameAtRest(askedAs(e.req, e.asked), req)) {
			b.mu.Unlock()
			return Decision{}, false, fmt.Errorf("attach to %s: %w", req.ID, ErrRequestMismatch)
		}
		if e.recovered {
			if len(e.asked) == 0 {
				e.ask.Params = realParams(e.ask.Params, e.req.Params, req.Params)
				e.req.Params = req.Params
			} else {
				// A hook rewrote them: the rewritten params are kept (recover expired the
				// request if redaction changed them).
				e.asked = req.Params
			}
			e.req.Context, e.req.Escalation, e.recovered = req.Context, req.Escalation, false
		}
		e.waiters++
		b.mu.Unlock()
		d, err := b.waitEntry(ctx, e)
		return d, true, err
	}
	b.mu.Unlock()
	var rec PendingRecord
	err := b.db.WithContext(ctx).Where("id = ?", req.ID).Limit(1).Find(&rec).Error
	if err != nil || rec.ID == "" || rec.Status != StatusAnswered {
		return Decision{}, false, nil
	}
	var was Request
	if json.Unmarshal([]byte(rec.RequestJSON), &was) != nil || !sameAtRest(askedAs(was, json.RawMessage(rec.AskedParams)), req) {
		return Decision{}, false, fmt.Errorf("attach to %s: %w", req.ID, ErrRequestMismatch)
	}
	var d Decision
	if err := json.Unmarshal([]byte(rec.AnswerJSON), &d); err != nil {
		return Decision{}, false, nil
	}
	d.Params = realParams(d.Params, askedAs(was, json.RawMessage(rec.AskedParams)).Params, req.Params)
	// The answer is delivered once; the same ID later is a new question.
	b.writeMu.Lock()
	res := b.db.WithContext(context.WithoutCancel(ctx)).Model(&PendingRecord{}).
		Where("id = ? AND status = ?", req.ID, StatusAnswered).Update("status", StatusDelivered)
	b.writeMu.Unlock()
	if res.Error != nil || res.RowsAffected != 1 {
		return Decision{}, false, nil
	}
	return d, true, nil
}

// askedAs is a pending request as its caller asked it: with the params from before a
// before_tool_use hook rewrote them, if one did.
func askedAs(r Request, asked json.RawMessage) Request {
	if len(asked) > 0 {
		r.Params = asked
	}
	return r
}

// sameRequest compares what was asked: the tool, the parameters and the context.
func sameRequest(a, b Request) bool {
	if a.Tool != b.Tool || !jsonEqual(a.Params, b.Params) {
		return false
	}
	// The caller's pid may differ after a restart (an in-process caller); the rest of
	// the context must be identical.
	a.Context.Caller, b.Context.Caller = Caller{}, Caller{}
	ca, _ := json.Marshal(a.Context)
	cb, _ := json.Marshal(b.Context)
	return bytes.Equal(ca, cb) && (a.Escalation == nil) == (b.Escalation == nil)
}

// sameAtRest reports whether req is the request stored (redacted) as stored.
func sameAtRest(stored, req Request) bool {
	r, err := atRest(req)
	return err == nil && sameRequest(stored, r)
}

// realParams is what a decision read back from the database runs with: the caller's
// own parameters when the decision's are the stored (redacted) request's, which is
// what they were before redaction. Parameters a hook rewrote stay as they are.
func realParams(decided, storedReq, callers json.RawMessage) json.RawMessage {
	if len(decided) > 0 && jsonEqual(decided, storedReq) {
		return callers
	}
	return decided
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

func (b *Broker) waitEntry(ctx context.Context, e *pendingEntry) (Decision, error) {
	var timer <-chan time.Time
	if !e.deadline.IsZero() {
		t := time.NewTimer(time.Until(e.deadline))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-e.done:
		return e.final, nil
	case <-timer:
		if b.claim(e) {
			d := nobodyAnswers(e.ask, e.req, api.AnsweredExpired, fmt.Sprintf("expired: nobody answered in Airlock within %s",
				e.deadline.Sub(e.created).Round(time.Second)))
			b.complete(e, d, StatusTimedOut)
		}
		<-e.done
		return e.final, nil
	case <-b.stop:
		return denyWith(e.ask, LayerPolicy, "Airlock is shutting down; the request stays pending"), ErrClosed
	case <-ctx.Done():
		b.mu.Lock()
		e.waiters--
		last := e.waiters == 0 && !e.claimed && !b.closed
		if last {
			e.claimed = true
		}
		b.mu.Unlock()
		if last {
			b.complete(e, denyWith(e.ask, LayerPolicy, "the caller stopped waiting"), StatusCancelled)
		}
		return denyWith(e.ask, LayerPolicy, "the caller stopped waiting"), ctx.Err()
	}
}

// claim marks an entry as being decided; only one claimer wins.
func (b *Broker) claim(e *pendingEntry) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.claimed {
		return false
	}
	e.claimed = true
	return true
}

// complete persists the final decision of a claimed entry, wakes its callers, and
// records and publishes the decision.
func (b *Broker) complete(e *pendingEntry, d Decision, status string) {
	d.RequestID = e.req.ID
	d.Waited = time.Since(e.created)
	body, _ := json.Marshal(d)
	b.mu.Lock()
	if status == StatusAnswered && e.waiters > 0 {
		status = StatusDelivered
	}
	b.mu.Unlock()
	b.writeMu.Lock()
	err := b.db.Model(&PendingRecord{}).Where("id = ?", e.req.ID).
		Updates(map[string]any{"status": status, "answer_json": string(body), "updated_at": time.Now().UTC()}).Error
	b.writeMu.Unlock()
	if err != nil {
		b.log.Error("persist permission answer", "request", e.req.ID, "err", err)
	}
	b.mu.Lock()
	delete(b.pending, e.req.ID)
	e.final = d
	b.mu.Unlock()
	b.releaseFor(e.caller)
	close(e.done)
	b.record(e.req, d)
}

func denyWith(d Decision, l Layer, reason string) Decision {
	d.Verdict, d.Layer = Deny, l
	d.Reasons = append(append([]string(nil), d.Reasons...), reason)
	return d
}

// nobodyAnswers is the answer to a request that asked when nobody answered it, or
// could (by says which): the caller's own prompt gets the question when it has one
// (HandOver), else it is denied with why.
func nobodyAnswers(d Decision, req Request, by, why string) Decision {
	if req.HandOver {
		d.Verdict, d.Layer, d.AnsweredBy = Ask, LayerPolicy, api.AnsweredHandedOver
		d.Reasons = append(append([]string(nil), d.Reasons...), why+"; handed over to the caller's own prompt")
		return d
	}
	d = denyWith(d, LayerPolicy, why)
	d.AnsweredBy = by
	return d
}

// expiredWith denies a request that expired unanswered (at start-up: its caller gone,
// or nobody re-attached), and says so in the audit (AnsweredExpired).
func expiredWith(d Decision, reason string) Decision {
	d = denyWith(d, LayerPolicy, reason)
	d.AnsweredBy = api.AnsweredExpired
	return d
}

// record audits and publishes a final decision.
func (b *Broker) record(req Request, d Decision) {
	b.audit.add(auditRecord(req, d, time.Now().UTC()))
	if b.pub != nil {
		b.pub.Publish(TopicDecided, api.PermissionDecided{ID: req.ID, Summary: summary(req),
			Verdict: string(d.Verdict), Tier: string(d.Tier), Layer: string(d.Layer)})
	}
}

func (b *Broker) publish(topic string, payload any) {
	if b.pub != nil {
		b.pub.Publish(topic, payload)
	}
}

// scopes returns the scopes an allow may choose for a request.
func (e *pendingEntry) scopes() []Scope {
	if e.ask.InteractiveOnly || e.ask.Tier == P2 {
		return []Scope{ScopeOnce}
	}
	c := e.req.Context
	out := []Scope{ScopeOnce}
	if c.SessionKey() != "" {
		out = append(out, ScopeSession)
	}
	if c.Task != "" {
		out = append(out, ScopeTask)
	}
	// Always is remembered for a department or a place; a request without either would
	// make a grant that applies everywhere, so it is not offered. With a department it
	// is the department grant: offered once, as department (an always answer still
	// makes it).
	switch {
	case c.Department != "":
		out = append(out, ScopeDepartment)
	case e.place != "":
		out = append(out, ScopeAlways)
	}
	return out
}

// offers reports whether an allow of e may choose scope s (an always answer to a
// request with a department is its department grant).
func (e *pendingEntry) offers(s Scope) bool {
	return slices.Contains(e.scopes(), s) || (s == ScopeAlways && e.req.Context.Department != "" && slices.Contains(e.scopes(), ScopeDepartment))
}

// defaultScope is the scope of an allow that names none: a P1 request
// is remembered for the rest of its session, so it asks the first time only; once is
// the exception the person picks, and all that P2, interactive-only and session-less
// requests offer.
func (e *pendingEntry) defaultScope() Scope {
	if slices.Contains(e.scopes(), ScopeSession) {
		return ScopeSession
	}
	return ScopeOnce
}

func (e *pendingEntry) view() PendingRequest {
	p := PendingRequest{
		ID: e.req.ID, Request: e.req, Summary: summary(e.req), Tier: e.ask.Tier, Kind: e.ask.Kind,
		InteractiveOnly: e.ask.InteractiveOnly, Reasons: e.ask.Reasons, Scopes: e.scopes(),
		CreatedAt: e.created, CallerWaiting: e.waiters > 0, Grant: e.ask.Grant,
	}
	if !e.deadline.IsZero() {
		dl := e.deadline
		p.Deadline = &dl
	}
	return p
}

// Pending lists the requests waiting for a person, oldest first.
func (b *Broker) Pending() []PendingRequest {
	b.mu.Lock()
	out := make([]PendingRequest, 0, len(b.pending))
	for _, e := range b.pending {
		if !e.claimed {
			out = append(out, e.view())
		}
	}
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Answer answers a pending request. a.By is the surface the answer came through, which
// the core sets (never the caller). A deny is accepted from any surface. An allow of an
// interactive-only or P2 request, and an always grant, need a person: the window, or a
// terminal where the person proved presence (ByPerson, with Interactive); the tray and
// notifications answer P1 only. Session and always scopes exist for P1 only, and a
// pattern wider than the request's own subject can be chosen only in the window. An
// allow without a scope is remembered for the session when the request offers that,
// else once.
func (b *Broker) Answer(ctx context.Context, id string, a Answer) (Decision, error) {
	b.mu.Lock()
	e, ok := b.pending[id]
	if !ok || e.claimed {
		b.mu.Unlock()
		return Decision{}, fmt.Errorf("answer %s: %w (already answered, expired, or unknown; see `airlock approvals list`)", id, ErrNotPending)
	}
	if err := validateAnswer(e, a); err != nil {
		b.mu.Unlock()
		return Decision{}, fmt.Errorf("answer %s: %w", id, err)
	}
	e.claimed = true
	b.mu.Unlock()

	d := e.ask
	d.Reasons = append([]string(nil), e.ask.Reasons...)
	d.Layer, d.AnsweredBy = LayerPerson, a.By
	if a.Allow {
		d.Verdict = Allow
		d.Scope = a.Scope
		if d.Scope == "" {
			d.Scope = e.defaultScope()
		}
		d.Reasons = append(d.Reasons, "allowed by the person ("+a.By+", "+string(d.Scope)+")"+suffix(a.Reason))
		if d.Scope != ScopeOnce {
			pattern := a.Pattern
			if pattern == "" {
				pattern = e.req.Subject()
			}
			g := api.GrantRecord{Tool: e.req.Tool, Pattern: pattern, Scope: d.Scope, CreatedBy: a.By, RequestID: id}
			switch d.Scope {
			case ScopeSession:
				g.Session = e.req.Context.SessionKey()
			case ScopeTask:
				g.Task = e.req.Context.Task
			case ScopeDepartment:
				g.Department = e.req.Context.Department
			default:
				g.Department, g.Workspace = e.req.Context.Department, e.place
			}
			if _, err := b.grants.Add(ctx, g); err != nil {
				d.Reasons = append(d.Reasons, "the grant could not be remembered: "+err.Error())
			}
		}
	} else {
		d.Verdict = Deny
		d.Reasons = append(d.Reasons, "denied by the person ("+a.By+")"+suffix(a.Reason))
	}
	b.complete(e, d, StatusAnswered)
	return d, nil
}

// ByPerson reports whether an answer that arrived through surface by may be a person's:
// a click in the window, or a terminal where the person proved presence to the
// operating system (or, with terminal_proof = "tty", merely had a terminal).
func ByPerson(by string) bool {
	return by == ByWindow || by == ByCLIOSProof || by == ByCLITTY
}

// personWayOut says where a person answers a request.
func personWayOut(id string) string {
	return fmt.Sprintf("answer it in the Airlock window, or run `airlock approvals allow %s` at a terminal and type your login password", id)
}

func validateAnswer(e *pendingEntry, a Answer) error {
	switch a.By {
	case ByWindow, ByTray, ByNotification, ByCLIOSProof, ByCLITTY, ByAPI:
	default:
		return fmt.Errorf("%w: by %q: want window, tray, notification, cli-os-proof, cli-tty or api", ErrBadAnswer, a.By)
	}
	if !a.Allow {
		return nil
	}
	person := ByPerson(a.By) && a.Interactive
	if e.ask.InteractiveOnly && !person {
		return fmt.Errorf("%w (%s): only a person can allow it, and an answer from the %s is not one: %s", ErrInteractiveOnly, e.ask.Kind, a.By, personWayOut(e.req.ID))
	}
	if e.ask.Tier == P2 && !person {
		return fmt.Errorf("%w: a P2 request asks a person every time, and an answer from the %s is not one: %s", ErrNeedsPerson, a.By, personWayOut(e.req.ID))
	}
	if a.Pattern != "" && a.Pattern != e.req.Subject() && a.By != ByWindow {
		return fmt.Errorf("%w: pattern %q is wider than the request's own call %q: from the %s a grant covers that call only; leave the pattern out, or choose a wider one in the Airlock window", ErrBadAnswer, a.Pattern, redact.String(e.req.Subject()), a.By)
	}
	switch a.Scope {
	case "", ScopeOnce:
	case ScopeSession, ScopeTask, ScopeDepartment, ScopeAlways:
		if !e.offers(a.Scope) {
			if e.ask.Tier == P2 || e.ask.InteractiveOnly {
				return fmt.Errorf("%w: %s requests ask every time, so only --once can be chosen", ErrBadAnswer, e.ask.Tier)
			}
			offered := make([]string, 0, 5)
			for _, s := range e.scopes() {
				offered = append(offered, string(s))
			}
			var needs string
			switch a.Scope {
			case ScopeAlways:
				needs = "the request's department, or a workspace or working directory that is neither / nor above the home directory"
			case ScopeTask:
				needs = "the request's task (a scheduled run's request has one)"
			case ScopeDepartment:
				needs = "the request's department"
			default:
				needs = "a session"
			}
			return fmt.Errorf("%w: scope %s needs %s, and this request has none; use once, or a scope it offers (%s)", ErrBadAnswer, a.Scope, needs, strings.Join(offered, ", "))
		}
		if a.Scope != ScopeSession && !person {
			return fmt.Errorf("%w: a %s grant allows every later call like it without asking, and an answer from the %s is not a person's: allow it for the session instead, or %s", ErrNeedsPerson, a.Scope, a.By, strings.Replace(personWayOut(e.req.ID), "allow "+e.req.ID, "allow "+e.req.ID+" --"+string(a.Scope), 1))
		}
	default:
		return fmt.Errorf("%w: scope %q: want once, session, task, department or always", ErrBadAnswer, a.Scope)
	}
	return nil
}

// alwaysPlace is where an always grant of a request without a department applies: its
// workspace when that holds its working directory, else the working directory, symlinks
// resolved. It is "" — no always grant — when that place is `/` or above the home
// directory: a request naming `/` as its workspace would otherwise turn one answer into
// an allow of every later call of every agent.
func alwaysPlace(c Context, home string) string {
	home = realDir(home)
	cwd, ws := realDir(c.Cwd), realDir(c.Workspace)
	place := cwd
	if ws != "" && (cwd == "" || within(cwd, ws)) && !tooBroad(ws, home) {
		place = ws
	}
	if place == "" || tooBroad(place, home) {
		return ""
	}
	return place
}

// tooBroad reports whether dir is `/` or a directory above home.
func tooBroad(dir, home string) bool {
	return dir == string(filepath.Separator) || (home != "" && dir != home && within(home, dir))
}

// realDir is an absolute directory with its symlinks resolved ("" for a relative one).
func realDir(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// persistPending writes a request that waits for a person. What reaches the database is
// redacted (PendingRecord.BeforeSave): the command, parameters and reasons, so a
// credential in a command is never at rest; e keeps the real request in memory.
func (b *Broker) persistPending(ctx context.Context, e *pendingEntry) error {
	reqJSON, err := json.Marshal(e.req)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	askJSON, _ := json.Marshal(e.ask)
	rec := PendingRecord{
		ID: e.req.ID, Tool: e.req.Tool, Subject: e.req.Subject(), RequestJSON: string(reqJSON),
		DecisionJSON: string(askJSON), AskedParams: string(e.asked), Tier: e.ask.Tier, Kind: e.ask.Kind, InteractiveOnly: e.ask.InteractiveOnly,
		Status: StatusPending, CallerPID: e.req.Context.Caller.PID, CreatedAt: e.created, UpdatedAt: e.created,
	}
	if !e.deadline.IsZero() {
		dl := e.deadline
		rec.Deadline = &dl
	}
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	if err := b.db.WithContext(context.WithoutCancel(ctx)).Save(&rec).Error; err != nil {
		return fmt.Errorf("persist pending request %s: %w", e.req.ID, err)
	}
	return nil
}

// recover reloads the requests that were pending when the app stopped. They come back
// redacted, as stored; the caller that re-attaches supplies the real parameters.
func (b *Broker) recover(ctx context.Context) error {
	var rows []PendingRecord
	if err := b.db.WithContext(ctx).Where("status = ?", StatusPending).Order("created_at").Find(&rows).Error; err != nil {
		return fmt.Errorf("load pending requests: %w", err)
	}
	for _, r := range rows {
		e := &pendingEntry{created: r.CreatedAt, recovered: true, done: make(chan struct{})}
		if r.AskedParams != "" {
			e.asked = json.RawMessage(r.AskedParams)
		}
		if json.Unmarshal([]byte(r.RequestJSON), &e.req) != nil || json.Unmarshal([]byte(r.DecisionJSON), &e.ask) != nil {
			e.req = Request{ID: r.ID, Tool: r.Tool}
			e.ask = Decision{RequestID: r.ID, Verdict: Ask, Tier: P2, InteractiveOnly: true}
			e.claimed = true
			b.complete(e, expiredWith(e.ask, "the stored request could not be read; expired at start-up"), StatusExpired)
			continue
		}
		// A row written before the wire became snake_case keeps interactiveOnly and
		// requestId under their old JSON keys, which now decode as nothing; the columns
		// hold them whatever the casing, so a request that needed a person still does.
		e.ask.InteractiveOnly = e.ask.InteractiveOnly || r.InteractiveOnly
		e.ask.Tier = e.ask.Tier.Max(r.Tier)
		if e.ask.Kind == "" {
			e.ask.Kind = r.Kind
		}
		if e.ask.RequestID == "" {
			e.ask.RequestID = r.ID
		}
		if r.Deadline != nil {
			e.deadline = *r.Deadline
		}
		e.place = alwaysPlace(e.req.Context, b.preflight.Home)
		if pid := r.CallerPID; pid > 0 && !processAlive(pid) {
			e.claimed = true
			b.complete(e, expiredWith(e.ask, fmt.Sprintf("the caller (pid %d) is gone; expired at start-up", pid)), StatusExpired)
			continue
		}
		if len(e.asked) > 0 && bytes.Contains(e.ask.Params, []byte(redact.Marker)) {
			// A hook rewrote the params and they carried a credential, which is not kept:
			// the caller asks again and the hook rewrites them anew.
			e.claimed = true
			b.complete(e, expiredWith(e.ask, "its parameters, rewritten by a hook, held a credential that is not kept across a restart; expired at start-up, ask again"), StatusExpired)
			continue
		}
		b.pending[r.ID] = e
		time.AfterFunc(b.grace, func() { b.expireUnattached(e) })
	}
	return nil
}

// expireUnattached expires a recovered request nobody re-attached to.
func (b *Broker) expireUnattached(e *pendingEntry) {
	b.mu.Lock()
	expire := e.waiters == 0 && !e.claimed && !b.closed
	if expire {
		e.claimed = true
	}
	b.mu.Unlock()
	if expire {
		b.complete(e, expiredWith(e.ask, "nobody was waiting for it after a restart; expired"), StatusExpired)
	}
}

// processAlive reports whether a process exists (EPERM means it exists but is not ours).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// AfterToolUse records the outcome of a call on its decision's audit row and runs the
// afterToolUse hooks with it.
func (b *Broker) AfterToolUse(ctx context.Context, req Request, d Decision, out Outcome) {
	req.CleanLabels()
	b.recordOutcome(ctx, req, d, out)
	runAfterHooks(ctx, b.log, b.cfg.Load().eff.AfterHooks, req, d, out)
}

// recordOutcome writes what the caller reports came of a call (it ran, or failed) on
// the audit row of its decision: found by the request's ID, else by the caller's call
// ID (a hook's PostToolUse knows only that), and only within the caller's own session
// and run, so a caller cannot mark another's calls. A row already marked stays as it is.
func (b *Broker) recordOutcome(ctx context.Context, req Request, d Decision, out Outcome) {
	id := d.RequestID
	if id == "" {
		id = req.ID
	}
	if id == "" && req.CallID == "" {
		return
	}
	if err := b.audit.Flush(ctx); err != nil {
		b.log.Warn("record a call's outcome", "request", id, "call", req.CallID, "err", err)
		return
	}
	ran := api.OutcomeRan
	if !out.Ran || out.Error != "" || (out.ExitCode != nil && *out.ExitCode != 0) {
		ran = api.OutcomeFailed
	}
	tx := b.db.WithContext(ctx).Model(&AuditRecord{}).
		Where("session = ? AND run = ? AND tool = ? AND (ran IS NULL OR ran = '')", req.Context.Session, req.Context.Run, req.Tool)
	if id != "" {
		tx = tx.Where("request_id = ?", id)
	} else {
		tx = tx.Where("call_id = ?", req.CallID)
	}
	b.writeMu.Lock()
	err := tx.Updates(map[string]any{"ran": ran, "ran_error": out.Error, "ran_at": time.Now().UTC()}).Error
	b.writeMu.Unlock()
	if err != nil {
		b.log.Error("record a call's outcome", "request", id, "call", req.CallID, "err", err)
	}
}

// FlushAudit waits until every decision so far is in the audit table.
func (b *Broker) FlushAudit(ctx context.Context) error { return b.audit.Flush(ctx) }

// Close stops the broker: callers still waiting get ErrClosed and their requests stay
// pending in the database for the next start.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.stop)
	b.mu.Unlock()
	b.audit.close()
	return nil
}
