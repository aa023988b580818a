package permission

import (
	"context"
	"errors"
	"fmt"
)

// DefaultMaxPendingPerCaller is how many requests one caller may have waiting for the
// person at once unless BrokerOptions.MaxPendingPerCaller says otherwise: more than an
// agent with parallel subagents asks, far fewer than would bury the person's list.
const DefaultMaxPendingPerCaller = 32

// ErrTooManyPending is returned (wrapped, with a deny) by Await when the request's
// caller already has as many requests waiting for the person as it may.
var ErrTooManyPending = errors.New("too many requests waiting for the person")

type callerKey struct{}

// asker is who asks: one caller, and the process it belongs to (several sessions of one
// client process are several callers of one process; "" when the caller is the process).
type asker struct{ caller, process string }

// ProcessCapFactor is how many callers' worth of waiting requests one process may have
// across all its callers (the sessions it names): a client that invents a new session
// name per request still meets a cap.
const ProcessCapFactor = 4

// WithCaller names who asks through ctx: one sandbox's ask-only channel, one client
// process (and session) of the local API. The broker caps the requests each caller
// has waiting (BrokerOptions.MaxPendingPerCaller); the core's entry points set it from
// what they know of the caller (the channel a request came on, the peer's pid), never
// from what the request says. A request without one (the core's own) is not capped.
func WithCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, asker{caller: caller})
}

// WithProcessCaller is [WithCaller] for one of several callers of one process (a session
// it serves): each is capped, and the process is capped at [ProcessCapFactor] times that
// across all of them, whatever names its sessions take.
func WithProcessCaller(ctx context.Context, process, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, asker{caller: caller, process: process})
}

func callerFrom(ctx context.Context) asker {
	a, _ := ctx.Value(callerKey{}).(asker)
	return a
}

// quota is the broker's count of waiting requests per caller and per process. Its
// fields are guarded by Broker.mu.
type quota struct {
	max     int
	waiting map[string]int
	// processes counts the waiting requests of each process with several callers.
	processes map[string]int
	// refused holds the callers (and processes) at their cap: how many requests were
	// refused since they reached it. The first refusal is audited, the rest only
	// counted, and the count is logged when the caller is down to half its cap.
	refused map[string]int
}

// over names what a's next request would exceed ("" when it fits) and that cap.
func (q *quota) over(a asker) (string, int) {
	if q.waiting[a.caller] >= q.max {
		return a.caller, q.max
	}
	if a.process != "" && q.processes[a.process] >= q.max*ProcessCapFactor {
		return a.process, q.max * ProcessCapFactor
	}
	return "", 0
}

// reserve takes one of a's places (under b.mu); first reports the first refusal since
// the caller or its process reached its cap, who what reached it and max that cap.
func (q *quota) reserve(a asker) (ok, first bool, who string, max int) {
	if a.caller == "" || q.max <= 0 {
		return true, false, "", 0
	}
	if who, max = q.over(a); who != "" {
		n, at := q.refused[who]
		q.refused[who] = n + 1
		return false, !at, who, max
	}
	q.waiting[a.caller]++
	if a.process != "" {
		q.processes[a.process]++
	}
	return true, false, "", 0
}

// release gives a place back (under b.mu); refused is how many requests were refused
// while the caller or its process was at its cap, when it has just come down to half
// of it (else 0).
func (q *quota) release(a asker) (refused int) {
	if a.caller == "" || q.max <= 0 {
		return 0
	}
	if q.waiting[a.caller]--; q.waiting[a.caller] <= 0 {
		delete(q.waiting, a.caller)
	}
	// The episode ends well below the cap, so a caller hovering at it is audited and
	// logged once, not each time one of its requests is answered.
	if n, at := q.refused[a.caller]; at && q.waiting[a.caller] <= q.max/2 {
		delete(q.refused, a.caller)
		refused += n
	}
	if a.process != "" {
		if q.processes[a.process]--; q.processes[a.process] <= 0 {
			delete(q.processes, a.process)
		}
		if n, at := q.refused[a.process]; at && q.processes[a.process] <= q.max*ProcessCapFactor/2 {
			delete(q.refused, a.process)
			refused += n
		}
	}
	return refused
}

// reserveFor takes a place for a's caller, or refuses the request: a deny with the
// reason and ErrTooManyPending, audited only the first time in a row.
func (b *Broker) reserveFor(a asker, req Request, d Decision) (Decision, error) {
	b.mu.Lock()
	ok, first, who, max := b.quota.reserve(a)
	b.mu.Unlock()
	if ok {
		return d, nil
	}
	reason := fmt.Sprintf("%s already has %d requests waiting for the person, the most it may: this one is refused without asking; "+
		"ask again once some are answered", who, max)
	d = denyWith(d, LayerPolicy, reason)
	if first {
		b.log.Warn("permission: a caller reached its cap of requests waiting for the person; refusing more (audited once, logged again with the count)",
			"caller", who, "cap", max)
		d.Reasons = append(d.Reasons, "further requests are refused without an audit row each until half of its requests are answered")
		b.record(req, d)
	}
	return d, fmt.Errorf("%s: %w", reason, ErrTooManyPending)
}

// releaseFor gives a's place back once it is no longer waiting.
func (b *Broker) releaseFor(a asker) {
	if a.caller == "" {
		return
	}
	b.mu.Lock()
	refused := b.quota.release(a)
	b.mu.Unlock()
	if refused > 0 {
		b.log.Warn("permission: a caller is well below its cap of requests waiting for the person again",
			"caller", a.caller, "process", a.process, "cap", b.quota.max, "refused", refused)
	}
}

// RecordRefusal audits a refusal the core made at its door before any request was
// decided (a sandbox's connection beyond its cap): a deny with the reason.
func (b *Broker) RecordRefusal(req Request, reason string) {
	req.CleanLabels()
	if req.ID == "" {
		req.ID = newID("req")
	}
	b.record(req, Decision{RequestID: req.ID, Verdict: Deny, Layer: LayerPolicy, Reasons: []string{reason}})
}

type gateKey struct{}

// WithGate bounds how many of one caller's requests are being decided at once to the
// capacity of gate: a flood of them then takes a few goroutines' share of the CPU from
// everyone else, not one per request. Waiting for the person does not hold it.
func WithGate(ctx context.Context, gate chan struct{}) context.Context {
	return context.WithValue(ctx, gateKey{}, gate)
}

// enterGate waits for ctx's gate (WithGate); leave gives the place back.
func enterGate(ctx context.Context) (leave func(), err error) {
	gate, _ := ctx.Value(gateKey{}).(chan struct{})
	if gate == nil {
		return func() {}, nil
	}
	select {
	case gate <- struct{}{}:
		return func() { <-gate }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
