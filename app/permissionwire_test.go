package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/gateway"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/internal/vartmp"
)

// TestGatewayAwaitRoundTrip: a request the MCP server sends with its typed Await reaches
// the real core's broker as the same value, every field of it (what a copy of the wire
// types used to drop without a word), and the decision the person gives in the window
// comes back to the gateway as the broker made it.
func TestGatewayAwaitRoundTrip(t *testing.T) {
	base := vartmp.Dir(t, "permwire-")
	c, _ := runCoreAt(t, base)
	ws := filepath.Join(base, "home", "project")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	sent := api.Request{
		ID: "rt-1", Tool: api.ToolBash, Params: json.RawMessage(`{"command":"make release"}`),
		Context: api.Context{Session: "s-rt", Run: "", Task: "nightly", Department: "", Workspace: ws, Cwd: ws,
			Policy: api.PolicySummary{Mode: "workspace-write", Network: api.NetworkOff, ApprovalPolicy: "on-request", Reviewer: "user",
				Posture: "", WritableRoots: []string{ws}, ExecutionMode: ""},
			// The core sets the pid from the socket's peer: this process.
			Caller:   api.Caller{PID: os.Getpid(), Description: "mcp:round-trip"},
			TaskArgv: []string{"make", "nightly"}},
		Timeout: time.Minute,
	}
	gw := gateway.APIBroker{Client: localapi.NewClient(c.Paths.Socket)}
	type result struct {
		d   api.Decision
		err error
	}
	got := make(chan result, 1)
	go func() {
		d, err := gw.Await(context.Background(), sent)
		got <- result{d, err}
	}()

	var seen api.PendingRequest
	waitUntil(t, "the request pending in the core", 10*time.Second, func() bool {
		for _, p := range c.PendingApprovals(WindowCaller()) {
			if p.ID == sent.ID {
				seen = p
				return true
			}
		}
		return false
	})
	if !reflect.DeepEqual(seen.Request, sent) {
		t.Fatalf("the broker received\n%+v\nthe gateway sent\n%+v", seen.Request, sent)
	}

	answered, err := c.AnswerApproval(WindowCaller(), sent.ID, api.AnswerIn{Allow: true, Scope: "once", Reason: "round trip"})
	if err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	// Waited is measured when the waiter wakes, after Answer returned; the API writes
	// JSON indented, so the params are compared compacted.
	r.d.Waited, answered.Waited = 0, 0
	r.d.Params, answered.Params = compactJSON(t, r.d.Params), compactJSON(t, answered.Params)
	if !reflect.DeepEqual(r.d, answered) {
		t.Fatalf("the gateway got\n%+v\nthe broker decided\n%+v", r.d, answered)
	}
	if r.d.Verdict != api.Allow || r.d.AnsweredBy != "window" || r.d.RequestID != sent.ID {
		t.Fatalf("decision %+v, want an allow by the window for %s", r.d, sent.ID)
	}
}

func compactJSON(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("params %q: %v", raw, err)
	}
	return b.Bytes()
}

// TestRevokeGrantStatus: DELETE /v1/grants/{id} answers 404 only for a grant that is not
// there; a database that fails is Airlock's own failure, 500, and says so.
func TestRevokeGrantStatus(t *testing.T) {
	base := vartmp.Dir(t, "permwire-")
	c, _ := runCoreAt(t, base)
	client := localapi.NewClient(c.Paths.Socket)
	ctx := context.Background()

	_, err := localapi.Call(ctx, client, api.RevokeGrant, api.None{}, "g-nonexistent")
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Code != api.CodeNotFound {
		t.Fatalf("revoke an unknown grant: %v, want 404 %s", err, api.CodeNotFound)
	}

	if err := c.DB.Exec("DROP TABLE permission_grants").Error; err != nil {
		t.Fatal(err)
	}
	_, err = localapi.Call(ctx, client, api.RevokeGrant, api.None{}, "g-any")
	if !errors.As(err, &ae) || ae.Status != http.StatusInternalServerError || ae.Code != api.CodeInternal {
		t.Fatalf("revoke with a failing database: %v, want 500 %s", err, api.CodeInternal)
	}
	if _, err := localapi.Call(ctx, client, api.ListGrants, api.None{}); !errors.As(err, &ae) || ae.Status != http.StatusInternalServerError {
		t.Fatalf("list grants with a failing database: %v, want 500", err)
	}
}
