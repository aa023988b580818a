package permission

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/atrest"
)

// Credentials of several shapes in one command, as an agent's bash call would carry them.
const (
	pgPassword   = "hunter2"
	anthropicKey = "sk-ant-api03-QmFzZTY0U2VjcmV0S2V5VmFsdWUxMjM0NTY3ODkw"
	bearerToken  = "bEaReR.t0ken-9f8e7d6c"
	headerToken  = "gh-header-tok-5a4b3c"
	mysqlPass    = "my5ql-pw-1a2b"
)

var secretCommand = "PGPASSWORD=" + pgPassword + " psql -h db -c 'select 1' && curl -H 'Authorization: Bearer " + bearerToken +
	"' -H 'x-api-key: " + anthropicKey + "' https://api.anthropic.com && curl -H 'Authorization: token " + headerToken +
	"' https://api.github.com && mysql -u root -p" + mysqlPass + " db"

var allSecrets = []string{"PGPASSWORD=" + pgPassword, anthropicKey, bearerToken, headerToken, mysqlPass}

// assertNotAtRest fails if a secret is in the database file in dir or its WAL.
func assertNotAtRest(t *testing.T, dir, when string) {
	t.Helper()
	atrest.Check(t, filepath.Join(dir, "airlock.db"), when, allSecrets...)
}

// TestPendingRequestSecretsNeverAtRest raises a request whose command carries
// credentials, checks the database file and its WAL while it waits, across a restart,
// and after it is answered and audited, and checks that the call still runs with the
// real command: re-attached after the restart, and answered while its caller was away.
func TestPendingRequestSecretsNeverAtRest(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	b1, _ := newBroker(t, db, effective(t, Settings{}))

	live, away := bash(secretCommand), bash(secretCommand+" # second")
	live.ID, away.ID = "r-live", "r-away"
	errs := make(chan error, 2)
	for _, r := range []Request{live, away} {
		go func(r Request) {
			_, err := b1.Await(context.Background(), r)
			errs <- err
		}(r)
	}
	waitFor(t, "2 pending", func() bool { return len(b1.Pending()) == 2 })
	for _, p := range b1.Pending() {
		// In memory the request is the real one: an allow runs what was asked.
		if p.Request.Command() != live.Command() && p.Request.Command() != away.Command() {
			t.Fatalf("pending request in memory changed: %s", p.Request.Command())
		}
	}
	assertNotAtRest(t, dir, "while pending")
	var rec PendingRecord
	if err := db.First(&rec, "id = ?", "r-live").Error; err != nil {
		t.Fatal(err)
	}
	if !json.Valid([]byte(rec.RequestJSON)) || !strings.Contains(rec.RequestJSON, "PGPASSWORD=[REDACTED] psql") {
		t.Fatalf("stored request: %s", rec.RequestJSON)
	}

	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Fatalf("caller at shutdown: %v", err)
		}
	}
	closeDB(t, db)
	assertNotAtRest(t, dir, "after shutdown")

	db = openDB(t, dir)
	b2, _ := newBroker(t, db, effective(t, Settings{}), func(o *BrokerOptions) { o.RecoveryGrace = time.Minute })
	if n := len(b2.Pending()); n != 2 {
		t.Fatalf("recovered %d requests, want 2", n)
	}
	ctx := context.Background()

	// Re-attach with the real request (another pid, as after a restart), then allow.
	got := make(chan Decision, 1)
	go func() {
		r := live
		r.Context.Caller = Caller{PID: 99999999, Description: "mcp:claude"}
		d, err := b2.Await(ctx, r)
		if err != nil {
			t.Errorf("re-attach: %v", err)
		}
		got <- d
	}()
	waitFor(t, "re-attach", func() bool {
		for _, p := range b2.Pending() {
			if p.ID == "r-live" && p.CallerWaiting {
				return true
			}
		}
		return false
	})
	if _, err := b2.Answer(ctx, "r-live", Answer{Allow: true, By: ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d.Verdict != Allow || !jsonEqual(d.Params, live.Params) {
		t.Fatalf("re-attached caller got %+v, want an allow with its own params %s", d, live.Params)
	}

	// Answered while its caller was away: delivered with the real params when it comes back.
	if _, err := b2.Answer(ctx, "r-away", Answer{Allow: true, By: ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	d, err := b2.Await(ctx, away)
	if err != nil || d.Verdict != Allow || !jsonEqual(d.Params, away.Params) {
		t.Fatalf("caller back after the answer got %+v, %v; want an allow with its own params", d, err)
	}
	// The allow was remembered for the session, stored redacted: the same command with
	// its real credentials is still covered by it.
	var grants []GrantRecord
	db.Find(&grants)
	if len(grants) > 0 {
		again := bash(secretCommand)
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		d, err := b2.Await(actx, again)
		cancel()
		if err != nil || d.Verdict != Allow || d.Layer != LayerGrant {
			t.Fatalf("the remembered allow did not cover the same command: %+v, %v", d, err)
		}
	}

	if err := b2.FlushAudit(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := b2.Audit(ctx, AuditQuery{})
	if err != nil || len(rows) < 2 {
		t.Fatalf("audit rows: %d, %v", len(rows), err)
	}
	for _, r := range rows {
		if !json.Valid([]byte(r.Reasons)) {
			t.Fatalf("audit reasons not JSON: %s", r.Reasons)
		}
	}
	assertNotAtRest(t, dir, "after the answers and the audit")
	_ = b2.Close()
	closeDB(t, db)
	assertNotAtRest(t, dir, "at the end")
}

// TestAuditRowSecretsNeverAtRest writes audit rows the ways Airlock does (the broker's
// writer, and a direct insert as the execution-mode audit does) with credentials the old
// audit redactor missed (an Authorization header with a token scheme, mysql -pSECRET, a
// JSON password field), and checks the database bytes.
func TestAuditRowSecretsNeverAtRest(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	b, _ := newBroker(t, db, effective(t, Settings{ApprovalPolicy: "never"}))
	ctx := context.Background()
	if d, err := b.Await(ctx, bash(secretCommand)); err != nil || d.Verdict != Allow {
		t.Fatalf("await: %+v %v", d, err)
	}
	reasons, _ := json.Marshal([]string{"denied: " + secretCommand})
	direct := AuditRecord{api.AuditRecord{RequestID: "run-1-route", Tool: ToolExec, Subject: "execution_mode auto: " + secretCommand,
		Verdict: Deny, Layer: LayerIsolation, Reasons: string(reasons), AskedBy: "dispatch", CreatedAt: time.Now().UTC()}}
	if err := db.Create(&direct).Error; err != nil {
		t.Fatal(err)
	}
	if err := b.FlushAudit(ctx); err != nil {
		t.Fatal(err)
	}
	assertNotAtRest(t, dir, "audit")
	rows, _ := b.Audit(ctx, AuditQuery{})
	if len(rows) != 2 {
		t.Fatalf("%d audit rows, want 2", len(rows))
	}
	for _, r := range rows {
		if !strings.Contains(r.Subject, "PGPASSWORD=[REDACTED]") || !json.Valid([]byte(r.Reasons)) {
			t.Fatalf("audit row: %+v", r)
		}
	}
}
