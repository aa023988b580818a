package permission

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// TestWaitingRequestsAreCappedPerCaller: one caller (a sandbox's channel) may have
// only its cap of requests waiting for the person; beyond it Await refuses at once with
// ErrTooManyPending and the reason, audited once and logged with the count when the
// caller is down to half its cap — not once per refusal. Another caller still asks.
func TestWaitingRequestsAreCappedPerCaller(t *testing.T) {
	var logs bytes.Buffer
	var logMu sync.Mutex
	lw := writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return logs.Write(p) })
	db := openDB(t, t.TempDir())
	b, _ := newBroker(t, db, effective(t, Settings{}), func(o *BrokerOptions) {
		o.MaxPendingPerCaller = 4
		o.Logger = slog.New(slog.NewTextHandler(lw, nil))
	})
	flood := WithCaller(context.Background(), "the sandbox 42")
	ctx, cancel := context.WithCancel(flood)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); b.Await(ctx, bash(fmt.Sprintf("rm -rf build%d", i))) }()
	}
	waitFor(t, "4 waiting", func() bool { return len(b.Pending()) == 4 })
	for i := range 50 {
		d, err := b.Await(flood, bash(fmt.Sprintf("rm -rf more%d", i)))
		if !errors.Is(err, ErrTooManyPending) || d.Verdict != Deny || !strings.Contains(strings.Join(d.Reasons, " "), "the sandbox 42 already has 4 requests waiting") {
			t.Fatalf("request %d beyond the cap: %v %+v", i, err, d)
		}
	}
	if n := len(b.Pending()); n != 4 {
		t.Fatalf("%d requests waiting, want the cap of 4", n)
	}
	// Another caller still asks.
	other, cancelOther := context.WithCancel(WithCaller(context.Background(), "the process 7"))
	defer cancelOther()
	go b.Await(other, bash("rm -rf theirs"))
	go b.Await(other, bash("rm -rf own")) // same caller twice: within its cap
	waitFor(t, "6 waiting", func() bool { return len(b.Pending()) == 6 })

	cancel() // the sandbox's waiting requests end: it is below half its cap
	wg.Wait()
	waitFor(t, "2 waiting", func() bool { return len(b.Pending()) == 2 })
	go b.Await(flood, bash("rm -rf again"))
	waitFor(t, "the sandbox to ask again", func() bool { return len(b.Pending()) == 3 })

	if err := b.FlushAudit(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs, err := b.Audit(context.Background(), AuditQuery{Verdict: Deny, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	refusals := 0
	for _, r := range recs {
		if strings.Contains(r.Reasons, "the most it may") {
			refusals++
		}
	}
	if refusals != 1 {
		t.Errorf("%d audit rows of refusals at the cap, want 1 for the 50 refusals", refusals)
	}
	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	if strings.Count(out, "reached its cap") != 1 || !strings.Contains(out, "refused=50") {
		t.Errorf("the log does not say it once with the count:\n%s", out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestAProcessIsCappedAcrossItsSessions: a client process that names a new session for
// every request is still capped, at ProcessCapFactor times the per-caller cap, while
// another process asks.
func TestAProcessIsCappedAcrossItsSessions(t *testing.T) {
	db := openDB(t, t.TempDir())
	b, _ := newBroker(t, db, effective(t, Settings{}), func(o *BrokerOptions) { o.MaxPendingPerCaller = 2 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	limit := 2 * ProcessCapFactor
	for i := range limit {
		s := WithProcessCaller(ctx, "the process 9", fmt.Sprintf("the process 9 in session s%d", i))
		go b.Await(s, bash(fmt.Sprintf("rm -rf a%d", i)))
	}
	waitFor(t, "the process's cap waiting", func() bool { return len(b.Pending()) == limit })
	for i := range 20 {
		s := WithProcessCaller(ctx, "the process 9", fmt.Sprintf("the process 9 in session t%d", i))
		d, err := b.Await(s, bash(fmt.Sprintf("rm -rf b%d", i)))
		if !errors.Is(err, ErrTooManyPending) || !strings.Contains(strings.Join(d.Reasons, " "), fmt.Sprintf("the process 9 already has %d requests waiting", limit)) {
			t.Fatalf("a new session of a process at its cap: %v %+v", err, d)
		}
	}
	go b.Await(WithProcessCaller(ctx, "the process 10", "the process 10 in session x"), bash("rm -rf theirs"))
	waitFor(t, "another process to ask", func() bool { return len(b.Pending()) == limit+1 })
}
