package desktop

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/eventbus"
)

type emitted struct {
	topic string
	data  []any
}

type recorder struct {
	mu  sync.Mutex
	got []emitted
	ch  chan struct{}
}

func (r *recorder) emit(topic string, data ...any) {
	r.mu.Lock()
	r.got = append(r.got, emitted{topic, data})
	r.mu.Unlock()
	r.ch <- struct{}{}
}

// Every event of the bus reaches the window under its own topic, with its payload as
// the first argument (raw JSON, as published) and its sequence number as the second.
func TestForwardEventsReemitsEveryEvent(t *testing.T) {
	bus := eventbus.New()
	rec := &recorder{ch: make(chan struct{}, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { forwardEvents(ctx, bus, rec.emit); close(done) }()

	// The subscription is taken inside the goroutine: publish until the first arrives.
	deadline := time.After(10 * time.Second)
	for first := false; !first; {
		bus.Publish(api.TopicWindowShow, api.WindowShow{})
		select {
		case <-rec.ch:
			first = true
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatal("the forwarder never emitted")
		}
	}
	config := api.ConfigChanged{Path: "/x/config.toml", Valid: true}
	bus.Publish(api.TopicConfigChanged, config)
	bus.Publish(api.TopicRunLog, api.RunLogChunk{RunID: 1, Chunk: "line"})
	for range 2 {
		select {
		case <-rec.ch:
		case <-deadline:
			t.Fatal("events were not forwarded")
		}
	}
	cancel()
	<-done

	rec.mu.Lock()
	defer rec.mu.Unlock()
	last := rec.got[len(rec.got)-2:]
	if last[0].topic != "config.changed" || last[1].topic != "run.log" {
		t.Fatalf("topics = %q, %q; want config.changed, run.log", last[0].topic, last[1].topic)
	}
	payload, err := json.Marshal(last[0].data[0])
	want, _ := json.Marshal(config)
	if err != nil || string(payload) != string(want) {
		t.Errorf("payload = %s (%v), want the published JSON", payload, err)
	}
	m0, ok0 := last[0].data[1].(EventMeta)
	m1, ok1 := last[1].data[1].(EventMeta)
	if !ok0 || !ok1 || m1.Seq != m0.Seq+1 || m0.Time.IsZero() {
		t.Errorf("meta = %+v, %+v; want consecutive sequence numbers with times", last[0].data[1], last[1].data[1])
	}
}

// An event whose payload has no fields reaches the window as an empty object.
func TestForwardEventsEmptyPayload(t *testing.T) {
	bus := eventbus.New()
	rec := &recorder{ch: make(chan struct{}, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go forwardEvents(ctx, bus, rec.emit)
	deadline := time.After(10 * time.Second)
	for {
		bus.Publish(api.TopicWindowShow, api.WindowShow{})
		select {
		case <-rec.ch:
			rec.mu.Lock()
			data := rec.got[0].data
			rec.mu.Unlock()
			raw, _ := json.Marshal(data[0])
			if string(raw) != "{}" {
				t.Errorf("payload = %s, want {}", raw)
			}
			return
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatal("the forwarder never emitted")
		}
	}
}
