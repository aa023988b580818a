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

// WithCaller names who asks through ctx: one sandbox's ask-only channel, one client
// process (and session) of the local API. The broker caps the requests each caller
// has waiting (BrokerOptions.MaxPendingPerCaller); the core's entry points set it from
// what they know of the caller (the channel a request came on, the peer's pid), never
// from what the request says. A request without one (the core's own) is not capped.
func WithCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

func callerFrom(ctx context.Context) string {
	s, _ := ctx.Value(callerKey{}).(string)
	return s
}

// quota is the broker's count of waiting requests per caller. Its fields are guarded by
// Broker.mu.
type quota struct {
	max     int
	waiting map[string]int
	// refused holds the callers at their cap: how many requests were refused since they
	// reached it. The first refusal is audited, the rest only counted, and the count is
	// logged when the caller is down to half its cap.
	refused map[string]int
}

// reserve takes one of caller's places (under b.mu); first reports the first refusal
// since the caller reached its cap.
func (q *quota) reserve(caller string) (ok, first bool) {
	if caller == "" || q.max <= 0 {
		return true, false
	}
	if q.waiting[caller] >= q.max {
		n, at := q.refused[caller]
		q.refused[caller] = n + 1
		return false, !at
	}
	q.waiting[caller]++
	return true, false
}

// release gives a place back (under b.mu); refused is how many requests were refused
// while the caller was at its cap, when it has just come down to half of it (else 0).
func (q *quota) release(caller string) (refused int) {
	if caller == "" || q.max <= 0 {
		return 0
	}
	if q.waiting[caller]--; q.waiting[caller] <= 0 {
		delete(q.waiting, caller)
	}
	// The episode ends well below the cap, so a caller hovering at it is audited and
	// logged once, not each time one of its requests is answered.
	if n, at := q.refused[caller]; at && q.waiting[caller] <= q.max/2 {
		delete(q.refused, caller)
		return n
	}
	return 0
}

// reserveFor takes a place for e's caller, or refuses the request: a deny with the
// reason and ErrTooManyPending, audited only the first time in a row.
func (b *Broker) reserveFor(caller string, req Request, d Decision) (Decision, error) {
	b.mu.Lock()
	ok, first := b.quota.reserve(caller)
	b.mu.Unlock()
	if ok {
		return d, nil
	}
	reason := fmt.Sprintf("%s already has %d requests waiting for the person, the most it may: this one is refused without asking; "+
		"ask again once some are answered", caller, b.quota.max)
	d = denyWith(d, LayerPolicy, reason)
	if first {
		b.log.Warn("permission: a caller reached its cap of requests waiting for the person; refusing more (audited once, logged again with the count)",
			"caller", caller, "cap", b.quota.max)
		d.Reasons = append(d.Reasons, "further requests are refused without an audit row each until half of its requests are answered")
		b.record(req, d)
	}
	return d, fmt.Errorf("%s: %w", reason, ErrTooManyPending)
}

// releaseFor gives e's place back once it is no longer waiting.
func (b *Broker) releaseFor(caller string) {
	if caller == "" {
		return
	}
	b.mu.Lock()
	refused := b.quota.release(caller)
	b.mu.Unlock()
	if refused > 0 {
		b.log.Warn("permission: a caller is well below its cap of requests waiting for the person again",
			"caller", caller, "cap", b.quota.max, "refused", refused)
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
