//lint:file-ignore SA1019 the test speaks MCP logging, deprecated from protocol 2026-07-28 on, as clients of the versions before it do

package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-app/airlock/api"
)

// slowPerson is a broker whose person answers (allow) only when the test says so.
type slowPerson struct {
	recordingBroker
	answer chan struct{}
}

func (b *slowPerson) Await(ctx context.Context, r api.Request) (api.Decision, error) {
	select {
	case <-b.answer:
		return api.Decision{Verdict: api.Allow, Tier: "P1", Layer: "person"}, nil
	case <-ctx.Done():
		return api.Decision{}, ctx.Err()
	}
}

// A call that waits for the person tells its client so while it waits: progress
// notifications when the client gave a progress token, logging messages otherwise (to a
// client that set a logging level). A waiting call never looks hung.
func TestWaitingCallsTellTheClient(t *testing.T) {
	ws := t.TempDir()
	b := &slowPerson{answer: make(chan struct{})}
	var mu sync.Mutex
	var progress, logs []string
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Message)
			mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, r.Params.Data.(string))
			mu.Unlock()
		},
	})
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = NewServer(Options{Policy: testPolicy(t, ws), Broker: b, ProgressEvery: 50 * time.Millisecond}).Run(ctx, st)
	}()
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cs.Close() }() // a call still waiting ends first
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	seen := func(list *[]string) int { mu.Lock(); defer mu.Unlock(); return len(*list) }
	for _, tt := range []struct {
		name  string
		token any
		got   *[]string
	}{
		{"with a progress token", "tok-1", &progress},
		{"without one", nil, &logs},
	} {
		t.Run(tt.name, func(t *testing.T) {
			params := &mcp.CallToolParams{Name: api.ToolWriteFile, Arguments: map[string]any{"path": "a.txt", "content": "x"}}
			if tt.token != nil {
				params.SetProgressToken(tt.token)
			} else {
				// The level of this call's log messages (the client's logging/setLevel, for
				// clients of older protocol versions, is set above).
				params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
			}
			done := make(chan error, 1)
			go func() { _, err := cs.CallTool(ctx, params); done <- err }()
			for deadline := time.Now().Add(10 * time.Second); seen(tt.got) < 2; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no word to the client while the call waited (progress %q, logs %q)", progress, logs)
				}
			}
			b.answer <- struct{}{}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains((*tt.got)[0], "waiting for the person") || !strings.Contains((*tt.got)[0], api.ToolWriteFile) {
				t.Errorf("the client was told %q", (*tt.got)[0])
			}
		})
	}
}
