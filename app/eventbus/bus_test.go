package eventbus

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/airlock-app/airlock/api"
)

func TestPublishReachesSubscribersInOrder(t *testing.T) {
	b := New()
	all := b.Subscribe(10)
	runs := b.Subscribe(10, api.TopicRunUpdated)
	defer all.Close()
	defer runs.Close()
	b.Publish(api.TopicConfigChanged, api.ConfigChanged{Path: "x"})
	b.Publish(api.TopicRunUpdated, api.RunUpdated{ID: 7})

	first, second := <-all.C, <-all.C
	if first.Topic != api.TopicConfigChanged || second.Topic != api.TopicRunUpdated || second.Seq != first.Seq+1 {
		t.Fatalf("got %+v then %+v", first, second)
	}
	got := <-runs.C
	var p api.RunUpdated
	if err := json.Unmarshal(got.Payload, &p); err != nil || p.ID != 7 {
		t.Fatalf("filtered subscriber got %+v (%v)", got, err)
	}
	select {
	case ev := <-runs.C:
		t.Fatalf("filtered subscriber got an extra event %+v", ev)
	default:
	}
}

func TestSlowSubscriberDoesNotBlock(t *testing.T) {
	b := New()
	s := b.Subscribe(1)
	for i := 0; i < 100; i++ {
		b.Publish(api.TopicRunLog, api.RunLogChunk{RunID: uint(i)})
	}
	if ev := <-s.C; ev.Seq != 1 {
		t.Fatalf("first kept event seq %d", ev.Seq)
	}
	s.Close()
	s.Close() // twice is fine
	b.Publish(api.TopicRunLog, api.RunLogChunk{})
}

// The bus publishes only api's topics, each with its declared payload type: a
// subscriber decodes by the table, so anything else would reach it undecodable.
func TestPublishRefusesUndeclaredEvents(t *testing.T) {
	tests := []struct {
		name    string
		topic   string
		payload any
	}{
		{"unknown topic", "run.updatd", api.RunUpdated{}},
		{"a map for a struct", api.TopicRunUpdated, map[string]any{"id": 1}},
		{"another topic's payload", api.TopicRunUpdated, api.RunLogChunk{}},
		{"a pointer to the payload", api.TopicRunUpdated, &api.RunUpdated{}},
		{"nil", api.TopicInboxChanged, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Check(tt.topic, tt.payload); !errors.Is(err, ErrUndeclared) {
				t.Fatalf("Check = %v, want ErrUndeclared", err)
			}
			b := New()
			s := b.Subscribe(1)
			defer s.Close()
			b.Publish(tt.topic, tt.payload)
			if b.Refused() != 1 {
				t.Errorf("Refused = %d, want 1", b.Refused())
			}
			select {
			case ev := <-s.C:
				t.Fatalf("published %+v", ev)
			default:
			}
		})
	}
	for _, e := range api.Events {
		if err := Check(e.Topic, reflectZero(e)); err != nil {
			t.Errorf("declared event refused: %v", err)
		}
	}
}

func reflectZero(e api.EventInfo) any { return reflect.Zero(e.Payload).Interface() }

// Next waits for one event and ends with the context or the subscription; Burst takes
// with the first every event already queued, and says when the subscription closed.
func TestNextAndBurst(t *testing.T) {
	b := New()
	sub := b.Subscribe(10)
	for i := uint(1); i <= 3; i++ {
		b.Publish(api.TopicRunUpdated, api.RunUpdated{ID: i})
	}
	ev, ok := sub.Next(context.Background())
	if !ok || ev.Seq != 1 {
		t.Fatalf("Next: %+v %v", ev, ok)
	}
	evs, open := sub.Burst(ev)
	if !open || len(evs) != 3 || evs[2].Seq != 3 {
		t.Fatalf("Burst: %d events, open %v", len(evs), open)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := sub.Next(ctx); ok {
		t.Fatal("Next after the context ended")
	}
	b.Publish(api.TopicRunUpdated, api.RunUpdated{ID: 4})
	sub.Close()
	if ev, ok := sub.Next(context.Background()); !ok || ev.Seq != 4 {
		t.Fatalf("what was queued before Close: %+v %v", ev, ok)
	}
	if _, ok := sub.Next(context.Background()); ok {
		t.Fatal("Next after Close")
	}
}
