package ops

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFlowEndToEnd(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	v := e.create(t, e.plan())
	if v.Status != StatusDraft || !v.Intact || len(v.Hash) != 64 {
		t.Fatalf("new plan: status %s intact %v hash %q", v.Status, v.Intact, v.Hash)
	}
	if v.Project != "dir:"+e.dir {
		t.Fatalf("project = %q, want dir:%s", v.Project, e.dir)
	}
	d, err := e.svc.AttachDiff(ctx, DiffInput{PlanID: v.ID, Run: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != StatusDiffed || d.Diff.Content != "+applied\n" || d.Diff.SHA256 != sha256Hex([]byte("+applied\n")) {
		t.Fatalf("diff = %+v", d.Diff)
	}
	ar, err := e.svc.Approve(ctx, v.ID, ApproveOptions{ConfirmedHashPrefix: strings.ToUpper(v.Hash[:10]), By: "alice", Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := ar.ExpiresAt.Sub(e.clock.Now()); got != DefaultTokenTTL {
		t.Fatalf("token valid for %s, want %s", got, DefaultTokenTTL)
	}
	// The token is stored only as its sha256.
	var tok ApprovalToken
	if err := e.db.First(&tok, "plan_id = ?", v.ID).Error; err != nil {
		t.Fatal(err)
	}
	if tok.TokenHash != sha256Hex([]byte(ar.Token)) || strings.Contains(tok.TokenHash, ar.Token) {
		t.Fatal("token not stored as its sha256")
	}
	var n int64
	e.db.Model(&JournalEntry{}).Where("detail LIKE ?", "%"+ar.Token+"%").Count(&n)
	if n != 0 {
		t.Fatal("the raw token reached the journal")
	}
	if len(ar.Token) != 43 { // 32 bytes, base64url without padding
		t.Fatalf("token %q is not 32 bytes of base64url", ar.Token)
	}
	res, err := e.svc.Apply(ctx, v.ID, ar.Token, ApplyOptions{By: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusApplied || e.lines(t) != 1 {
		t.Fatalf("apply: %+v, lines %d", res, e.lines(t))
	}
	if res.SnapshotBefore == nil || res.SnapshotAfter == nil || strings.Contains(res.SnapshotBefore.Content, "out.txt") ||
		!strings.Contains(res.SnapshotAfter.Content, "out.txt") {
		t.Fatalf("snapshots before/after do not show the change: %+v %+v", res.SnapshotBefore, res.SnapshotAfter)
	}
	vr, err := e.svc.Verify(ctx, v.ID, "agent")
	if err != nil {
		t.Fatal(err)
	}
	if vr.Status != StatusVerified || !vr.Assertions[0].Passed || vr.Assertions[0].SHA256 != sha256Hex([]byte("1\n")) {
		t.Fatalf("verify = %+v", vr)
	}
	want := []string{EventPlanned, EventDiffAttached, EventApproved, EventApplyStarted, EventApplyFinished, EventVerified}
	if got := e.events(t, v.Project, v.ID); !slices.Equal(got, want) {
		t.Fatalf("journal = %v, want %v", got, want)
	}
	e.journalOK(t, v.Project)
	if e.pub.count(TopicPlanUpdated) < 5 || e.pub.count(TopicJournalAppended) != len(want) {
		t.Fatalf("events: %d plan updates, %d journal appends", e.pub.count(TopicPlanUpdated), e.pub.count(TopicJournalAppended))
	}
	// A verified plan can neither be approved nor applied again.
	if _, err := e.svc.Apply(ctx, v.ID, ar.Token, ApplyOptions{}); !errors.Is(err, ErrTokenUsed) {
		t.Fatalf("replay after verify: %v", err)
	}
	if e.lines(t) != 1 {
		t.Fatal("replay ran the command")
	}
}

func TestApproveRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	v := e.create(t, e.plan())
	ok := ApproveOptions{ConfirmedHashPrefix: v.Hash[:8], By: "alice", Interactive: true}

	if _, err := e.svc.Approve(ctx, v.ID, ok); !errors.Is(err, ErrNoDiff) {
		t.Fatalf("approve without diff: %v", err)
	}
	e.diff(t, v.ID)
	notInteractive := ok
	notInteractive.Interactive = false
	if _, err := e.svc.Approve(ctx, v.ID, notInteractive); !errors.Is(err, ErrNotInteractive) {
		t.Fatalf("approve without a person: %v", err)
	}
	var hc *HashConfirmationError
	for _, prefix := range []string{"", v.Hash[:7], "00000000", v.Hash[:8] + "x"} {
		o := ok
		o.ConfirmedHashPrefix = prefix
		if _, err := e.svc.Approve(ctx, v.ID, o); !errors.As(err, &hc) {
			t.Fatalf("approve with prefix %q: %v", prefix, err)
		}
	}
	var ve *ValidationError
	for _, ttl := range []time.Duration{MaxTokenTTL + time.Second, -time.Minute} {
		o := ok
		o.TTL = ttl
		if _, err := e.svc.Approve(ctx, v.ID, o); !errors.As(err, &ve) || ve.Field != "ttl" {
			t.Fatalf("approve with ttl %s: %v", ttl, err)
		}
	}
	o := ok
	o.TTL = MaxTokenTTL
	ar, err := e.svc.Approve(ctx, v.ID, o)
	if err != nil {
		t.Fatal(err)
	}
	if ar.ExpiresAt.Sub(e.clock.Now()) != MaxTokenTTL {
		t.Fatalf("ttl %s", ar.ExpiresAt.Sub(e.clock.Now()))
	}
	if _, err := e.svc.Approve(ctx, v.ID, ok); !errors.Is(err, ErrLiveToken) {
		t.Fatalf("second approval while a token is live: %v", err)
	}
	// Once the token lapses the plan is expired and may be approved again.
	e.clock.Advance(MaxTokenTTL)
	ar2, err := e.svc.Approve(ctx, v.ID, ok)
	if err != nil {
		t.Fatalf("re-approve after expiry: %v", err)
	}
	if ar2.Token == ar.Token {
		t.Fatal("the same token was minted twice")
	}
	got := e.events(t, v.Project, v.ID)
	if !slices.Contains(got, EventApproveRefused) || !slices.Contains(got, EventExpired) {
		t.Fatalf("journal lacks the refusal or the expiry: %v", got)
	}
}

func TestReplay(t *testing.T) {
	e := newEnv(t)
	v, token := e.approved(t, e.plan())
	if _, err := e.svc.Apply(context.Background(), v.ID, token, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := e.svc.Apply(context.Background(), v.ID, token, ApplyOptions{}); !errors.Is(err, ErrTokenUsed) {
			t.Fatalf("replay: %v", err)
		}
	}
	if e.lines(t) != 1 {
		t.Fatalf("the command ran %d times", e.lines(t))
	}
	e.journalOK(t, v.Project)
}

func TestTokenExpiry(t *testing.T) {
	e := newEnv(t)
	v, token := e.approved(t, e.plan())
	e.clock.Advance(DefaultTokenTTL) // expires_at is exclusive: at exactly TTL the token is dead
	if _, err := e.svc.Apply(context.Background(), v.ID, token, ApplyOptions{}); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("expired token: %v", err)
	}
	if e.lines(t) != 0 || e.status(t, v.ID) != StatusExpired {
		t.Fatalf("lines %d status %s", e.lines(t), e.status(t, v.ID))
	}
	// Still refused once the plan is expired, and a new approval works.
	if _, err := e.svc.Apply(context.Background(), v.ID, token, ApplyOptions{}); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("expired token again: %v", err)
	}
	t2 := e.approve(t, v)
	e.clock.Advance(DefaultTokenTTL - time.Nanosecond)
	if _, err := e.svc.Apply(context.Background(), v.ID, t2, ApplyOptions{}); err != nil {
		t.Fatalf("token one nanosecond before expiry: %v", err)
	}
	if e.lines(t) != 1 {
		t.Fatal("apply did not run")
	}
}

func TestTokenUnknownAndOtherPlan(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, tokA := e.approved(t, e.plan())
	inB := e.plan()
	inB.Intent = "another change"
	b, tokB := e.approved(t, inB)
	if _, err := e.svc.Apply(ctx, a.ID, "not-a-token", ApplyOptions{}); !errors.Is(err, ErrTokenUnknown) {
		t.Fatalf("unknown token: %v", err)
	}
	if _, err := e.svc.Apply(ctx, b.ID, tokA, ApplyOptions{}); !errors.Is(err, ErrTokenOtherPlan) {
		t.Fatalf("cross-plan token: %v", err)
	}
	if _, err := e.svc.Apply(ctx, a.ID, tokB, ApplyOptions{}); !errors.Is(err, ErrTokenOtherPlan) {
		t.Fatalf("cross-plan token: %v", err)
	}
	if e.lines(t) != 0 || e.tokenUsed(t, tokA) || e.tokenUsed(t, tokB) {
		t.Fatal("a refused token ran something or was spent")
	}
	// Each token still works for its own plan.
	for _, x := range []struct{ id, tok string }{{a.ID, tokA}, {b.ID, tokB}} {
		if _, err := e.svc.Apply(ctx, x.id, x.tok, ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if e.lines(t) != 2 {
		t.Fatalf("lines %d", e.lines(t))
	}
}

func TestSupersededPlanToken(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	old, token := e.approved(t, e.plan())
	in := e.plan()
	in.Apply = Command{Shell: "echo applied >> out.txt; echo applied >> out.txt"}
	in.Supersedes = old.ID
	nw := e.create(t, in)
	if e.status(t, old.ID) != StatusSuperseded {
		t.Fatalf("old plan is %s", e.status(t, old.ID))
	}
	_, err := e.svc.Apply(ctx, old.ID, token, ApplyOptions{})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != StatusSuperseded {
		t.Fatalf("token of a superseded plan: %v", err)
	}
	if _, err := e.svc.Apply(ctx, nw.ID, token, ApplyOptions{}); !errors.Is(err, ErrTokenOtherPlan) {
		t.Fatalf("old token on the new plan: %v", err)
	}
	if e.lines(t) != 0 {
		t.Fatal("something ran")
	}
	// Superseding needs the same target, and a plan that is not applied.
	bad := e.plan()
	bad.Supersedes = nw.ID
	bad.Target.Device = "elsewhere"
	var ve *ValidationError
	if _, err := e.svc.CreatePlan(ctx, bad); !errors.As(err, &ve) || ve.Field != "supersedes" {
		t.Fatalf("supersede another target: %v", err)
	}
	if got := e.events(t, old.Project, old.ID); got[len(got)-2] != EventSuperseded || got[len(got)-1] != EventApplyRefused {
		t.Fatalf("journal of the old plan: %v", got)
	}
}

func TestRejectIsJournaledAndRevokes(t *testing.T) {
	e := newEnv(t)
	v, token := e.approved(t, e.plan())
	if _, err := e.svc.Reject(context.Background(), v.ID, "wrong window", "alice"); err != nil {
		t.Fatal(err)
	}
	var se *StatusError
	if _, err := e.svc.Apply(context.Background(), v.ID, token, ApplyOptions{}); !errors.As(err, &se) {
		t.Fatalf("token of a rejected plan: %v", err)
	}
	entries, _ := e.svc.Journal(context.Background(), JournalQuery{Project: v.Project, Event: EventRejected})
	if len(entries) != 1 || !strings.Contains(entries[0].Detail, "wrong window") || entries[0].Actor != "alice" {
		t.Fatalf("rejection journal: %+v", entries)
	}
	if e.lines(t) != 0 {
		t.Fatal("ran")
	}
}

func TestNoRefundAfterFailedApply(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := e.plan()
	in.Apply = Command{Shell: "echo applied >> out.txt; exit 3"}
	v, token := e.approved(t, in)
	res, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{})
	var ae *ApplyError
	if !errors.As(err, &ae) || res == nil || res.Status != StatusFailed || res.ExitCode != 3 {
		t.Fatalf("failing apply: %+v, %v", res, err)
	}
	if _, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{}); !errors.Is(err, ErrTokenUsed) {
		t.Fatalf("retry with the spent token: %v", err)
	}
	if e.lines(t) != 1 {
		t.Fatalf("ran %d times", e.lines(t))
	}
	// A retry needs a fresh diff, then a new approval.
	var se *StatusError
	if _, err := e.svc.Approve(ctx, v.ID, ApproveOptions{ConfirmedHashPrefix: v.Hash[:8], Interactive: true}); !errors.As(err, &se) {
		t.Fatalf("approve a failed plan without a fresh diff: %v", err)
	}
	e.diff(t, v.ID)
	if tok := e.approve(t, v); tok == token {
		t.Fatal("same token")
	}
	got := e.events(t, v.Project, v.ID)
	if !slices.Contains(got, EventApplyFailed) {
		t.Fatalf("journal: %v", got)
	}
}

func TestNoRefundAfterTimedOutApply(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := e.plan()
	in.Apply = Command{Shell: "echo applied >> out.txt; sleep 30; echo applied >> out.txt"}
	in.TimeoutSeconds = 1
	v, token := e.approved(t, in)
	res, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{})
	var ae *ApplyError
	if !errors.As(err, &ae) || !res.TimedOut || res.Status != StatusFailed {
		t.Fatalf("timed-out apply: %+v, %v", res, err)
	}
	if _, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{}); !errors.Is(err, ErrTokenUsed) {
		t.Fatalf("retry: %v", err)
	}
	if e.lines(t) != 1 {
		t.Fatalf("lines %d: the timed-out command was not killed, or ran again", e.lines(t))
	}
	entries, _ := e.svc.Journal(ctx, JournalQuery{Project: v.Project, Event: EventApplyFailed})
	if len(entries) != 1 || !strings.Contains(entries[0].Detail, "timed out") {
		t.Fatalf("journal: %+v", entries)
	}
}

func TestSnapshotFailureStopsApply(t *testing.T) {
	e := newEnv(t)
	in := e.plan()
	in.Snapshot = Command{Argv: []string{"cat", "missing-file"}}
	v, token := e.approved(t, in)
	res, err := e.svc.Apply(context.Background(), v.ID, token, ApplyOptions{})
	var ae *ApplyError
	if !errors.As(err, &ae) || res.Status != StatusFailed || !strings.Contains(res.Reason, "snapshot") {
		t.Fatalf("apply with a failing snapshot: %+v %v", res, err)
	}
	if e.lines(t) != 0 || !e.tokenUsed(t, token) {
		t.Fatal("the apply ran, or the token was given back")
	}
}

func TestConcurrentRedeemRunsOnce(t *testing.T) {
	e := newEnv(t)
	v, token := e.approved(t, e.plan())
	const n = 100
	errs := make(chan error, n)
	start := make(chan struct{})
	for range n {
		go func() {
			<-start
			_, err := e.svc.Apply(context.Background(), v.ID, token, ApplyOptions{By: "racer"})
			errs <- err
		}()
	}
	close(start)
	ok, used := 0, 0
	for range n {
		err := <-errs
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrTokenUsed):
			used++
		default:
			var se *StatusError
			if errors.As(err, &se) && se.Status == StatusApplying || errors.As(err, &se) && se.Status == StatusApplied {
				used++ // lost the race between the pre-check and the redeem
				continue
			}
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 || used != n-1 {
		t.Fatalf("%d applies succeeded, %d were refused as used", ok, used)
	}
	if e.lines(t) != 1 {
		t.Fatalf("the command ran %d times", e.lines(t))
	}
	e.journalOK(t, v.Project)
	if got := e.events(t, v.Project, v.ID); countOf(got, EventApplyStarted) != 1 || countOf(got, EventApplyRefused) != n-1 {
		t.Fatalf("journal: %d started, %d refused", countOf(got, EventApplyStarted), countOf(got, EventApplyRefused))
	}
}

func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func TestCancelledApplyIsRecordedAndSpendsTheToken(t *testing.T) {
	e := newEnv(t)
	in := e.plan()
	in.Apply = Command{Shell: "echo applied >> out.txt; sleep 30"}
	in.Snapshot = Command{}
	v, token := e.approved(t, in)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.svc.Apply(ctx, v.ID, token, ApplyOptions{})
		done <- err
	}()
	for e.lines(t) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	err := <-done
	var ae *ApplyError
	if !errors.As(err, &ae) || !strings.Contains(ae.Reason, "cancelled") {
		t.Fatalf("cancelled apply: %v", err)
	}
	if e.status(t, v.ID) != StatusFailed || !e.tokenUsed(t, token) {
		t.Fatal("a cancelled apply must end failed with its token spent")
	}
	e.journalOK(t, v.Project)
}
