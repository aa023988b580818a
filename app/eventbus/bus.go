// Package eventbus carries live events from the core to the window, the tray, the
// CLI and server-sent-event subscribers. Domain packages publish through it via their
// own one-method Publisher interfaces, which Bus satisfies. The topics and their
// payload types are api's (api.Events); the bus publishes nothing else.
package eventbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-app/airlock/api"
)

// Event is one published fact. Seq grows by one for every event of a bus.
type Event = api.Event

// Bus fans events out to subscribers. A slow subscriber loses events (and is told so
// by a gap in Seq) rather than stalling the core.
type Bus struct {
	mu      sync.Mutex
	seq     uint64
	subs    map[*Subscription]struct{}
	refused atomic.Uint64
}

// Subscription receives events on C until Close.
type Subscription struct {
	C      <-chan Event
	c      chan Event
	bus    *Bus
	topics map[string]bool
	once   sync.Once
}

// New returns an empty bus.
func New() *Bus { return &Bus{subs: map[*Subscription]struct{}{}} }

// Publish sends topic and payload (marshalled to JSON once) to every subscriber. A
// topic api.Events does not declare, or a payload of another type than the topic's, is
// refused (and logged): subscribers decode payloads by the table.
func (b *Bus) Publish(topic string, payload any) {
	if err := Check(topic, payload); err != nil {
		b.refused.Add(1)
		slog.Error("event refused", "topic", topic, "error", err)
		return
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		slog.Error("event payload does not marshal", "topic", topic, "error", err)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	ev := Event{Seq: b.seq, Topic: topic, Time: time.Now().UTC(), Payload: raw}
	for s := range b.subs {
		if len(s.topics) > 0 && !s.topics[topic] {
			continue
		}
		select {
		case s.c <- ev:
		default:
			slog.Warn("event subscriber is too slow; event dropped", "topic", topic, "seq", ev.Seq)
		}
	}
}

// Refused counts the events Publish refused: a publisher's bug that tests look for.
func (b *Bus) Refused() uint64 { return b.refused.Load() }

// Watching counts the subscriptions that receive topic (those of all topics included):
// whether anything follows it now, say the permission requests a person could answer.
func (b *Bus) Watching(topic string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for s := range b.subs {
		if len(s.topics) == 0 || s.topics[topic] {
			n++
		}
	}
	return n
}

// Subscribe returns a subscription to the given topics (all when none), buffering up to
// buffer events.
func (b *Bus) Subscribe(buffer int, topics ...string) *Subscription {
	c := make(chan Event, buffer)
	s := &Subscription{C: c, c: c, bus: b}
	if len(topics) > 0 {
		s.topics = map[string]bool{}
		for _, t := range topics {
			s.topics[t] = true
		}
	}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Close ends the subscription and closes C.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		delete(s.bus.subs, s)
		close(s.c)
		s.bus.mu.Unlock()
	})
}

// ErrUndeclared is the error of Check for an event api.Events does not declare.
var ErrUndeclared = errors.New("event not in api.Events")

// Check reports whether topic is a topic of api.Events and payload has its type.
func Check(topic string, payload any) error {
	want, ok := api.PayloadType(topic)
	if !ok {
		return fmt.Errorf("topic %q: %w", topic, ErrUndeclared)
	}
	if got := reflect.TypeOf(payload); got != want {
		return fmt.Errorf("topic %q takes an %s payload, not %v: %w", topic, want, got, ErrUndeclared)
	}
	return nil
}

// Next waits for the next event. ok is false when ctx ends or the subscription is closed.
func (s *Subscription) Next(ctx context.Context) (ev Event, ok bool) {
	select {
	case <-ctx.Done():
		return Event{}, false
	case ev, ok = <-s.C:
		return ev, ok
	}
}

// Burst returns first and every event already queued after it, so that a burst (a
// hundred runs failing at once) is handled as one. open is false when the subscription
// was closed meanwhile.
func (s *Subscription) Burst(first Event) (evs []Event, open bool) {
	evs = []Event{first}
	for {
		select {
		case ev, ok := <-s.C:
			if !ok {
				return evs, false
			}
			evs = append(evs, ev)
		default:
			return evs, true
		}
	}
}
