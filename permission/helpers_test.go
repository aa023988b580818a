package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/testdb"
)

// openDB opens a real SQLite database in dir the way the app does, and migrates it.
func openDB(t testing.TB, dir string) *gorm.DB {
	t.Helper()
	return testdb.Open(t, filepath.Join(dir, "airlock.db"), Migrate)
}

func closeDB(t testing.TB, db *gorm.DB) {
	t.Helper()
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.Close(); err != nil {
		t.Fatal(err)
	}
}

// script writes an executable shell script and returns its path.
func script(t testing.TB, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// events records what the broker publishes.
type events struct {
	mu   sync.Mutex
	list []event
	ch   chan event
}

type event struct {
	topic   string
	payload any
}

func newEvents() *events { return &events{ch: make(chan event, 100000)} }

func (e *events) Publish(topic string, payload any) {
	e.mu.Lock()
	e.list = append(e.list, event{topic, payload})
	e.mu.Unlock()
	e.ch <- event{topic, payload}
}

// waitRequested waits for a permission.requested event and returns b's pending
// request of that id.
func (e *events) waitRequested(t testing.TB, b *Broker) PendingRequest {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-e.ch:
			if ev.topic == TopicRequested {
				id := ev.payload.(api.PermissionRequested).ID
				for _, p := range b.Pending() {
					if p.ID == id {
						return p
					}
				}
				t.Fatalf("permission.requested for %s, which is not pending", id)
			}
		case <-timeout:
			t.Fatal("no permission.requested event")
		}
	}
}

type brokerOpt func(*BrokerOptions)

func newBroker(t testing.TB, db *gorm.DB, eff Effective, opts ...brokerOpt) (*Broker, *events) {
	t.Helper()
	ev := newEvents()
	o := BrokerOptions{DB: db, Settings: eff, Publisher: ev}
	for _, f := range opts {
		f(&o)
	}
	b, err := NewBroker(context.Background(), o)
	if err != nil {
		t.Fatalf("new broker: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, ev
}

// effective resolves settings with an empty environment.
func effective(t testing.TB, s Settings) Effective {
	t.Helper()
	e, err := Resolve(Sources{File: s, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	return e
}

func params(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func bash(cmd string) Request {
	return Request{Tool: ToolBash, Params: params("command", cmd), Context: Context{Session: "s1", Department: "dev", Cwd: "/work", Policy: PolicySummary{Mode: "workspace-write"}}}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
