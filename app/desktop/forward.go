package desktop

import (
	"context"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/eventbus"
)

// EventMeta travels with every forwarded event as the second argument: Seq grows by
// one per event of the bus, so a gap tells the window it missed something and should
// re-fetch.
type EventMeta struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
}

// emitFunc sends one event to the window (runtime.EventsEmit bound to the Wails context).
type emitFunc func(topic string, data ...any)

// forwardEvents re-emits every event of bus, under its own topic, with its JSON payload
// as the first argument and its EventMeta as the second, until ctx ends.
func forwardEvents(ctx context.Context, bus *eventbus.Bus, emit emitFunc) {
	sub := bus.Subscribe(1024)
	defer sub.Close()
	for {
		ev, ok := sub.Next(ctx)
		if !ok {
			return
		}
		var payload any
		if len(ev.Payload) > 0 {
			payload = ev.Payload
		}
		emit(ev.Topic, payload, EventMeta{Seq: ev.Seq, Time: ev.Time})
	}
}

func topics() []string { return api.Topics() }
