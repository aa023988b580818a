// Package eventbus carries live events from the core to the window, the tray, the
// CLI and server-sent-event subscribers. Domain packages publish through it via their
// own one-method Publisher interfaces, which Bus satisfies.
package eventbus

import (
	"encoding/json"
	"log/slog"
	"sync"
	"time"
)

// Event is one published fact. Seq grows by one for every event of a bus.
type Event struct {
	Seq     uint64          `json:"seq"`
	Topic   string          `json:"topic"`
	Time    time.Time       `json:"time"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Bus fans events out to subscribers. A slow subscriber loses events (and is told so
// by a gap in Seq) rather than stalling the core.
type Bus struct {
	mu   sync.Mutex
	seq  uint64
	subs map[*Subscription]struct{}
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

// Publish sends topic and payload (marshalled to JSON once) to every subscriber.
func (b *Bus) Publish(topic string, payload any) {
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
