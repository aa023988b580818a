package eventbus

import (
	"encoding/json"
	"testing"
)

func TestPublishReachesSubscribersInOrder(t *testing.T) {
	b := New()
	all := b.Subscribe(10)
	runs := b.Subscribe(10, TopicRunUpdated)
	defer all.Close()
	defer runs.Close()
	b.Publish(TopicConfigChanged, map[string]string{"path": "x"})
	b.Publish(TopicRunUpdated, map[string]int{"id": 7})

	first, second := <-all.C, <-all.C
	if first.Topic != TopicConfigChanged || second.Topic != TopicRunUpdated || second.Seq != first.Seq+1 {
		t.Fatalf("got %+v then %+v", first, second)
	}
	got := <-runs.C
	var p map[string]int
	if err := json.Unmarshal(got.Payload, &p); err != nil || p["id"] != 7 {
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
		b.Publish(TopicRunLog, i)
	}
	if ev := <-s.C; ev.Seq != 1 {
		t.Fatalf("first kept event seq %d", ev.Seq)
	}
	s.Close()
	s.Close() // twice is fine
	b.Publish(TopicRunLog, 1)
}
