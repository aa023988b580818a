package permission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func hookSettings(path, timeout string, tools ...string) Settings {
	return Settings{Hooks: HooksSection{BeforeToolUse: []HookSetting{{Command: []string{path}, Tools: tools, Timeout: timeout}}}}
}

func TestBeforeHooks(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name       string
		body       string
		req        Request
		wantV      Verdict
		wantLayer  Layer
		wantReason string
		check      func(t *testing.T, d Decision)
	}{
		{name: "block", body: `cat >/dev/null; echo '{"decision":"block","reason":"no deploys on Friday"}'`,
			req: bash("make deploy"), wantV: Deny, wantLayer: LayerHook, wantReason: "no deploys on Friday"},
		{name: "continue", body: `cat >/dev/null; echo '{"decision":"continue"}'`,
			req: Request{Tool: ToolReadFile, Params: params("path", "/x")}, wantV: Allow, wantLayer: LayerTier},
		{name: "rewrite to destructive", body: `cat >/dev/null; echo '{"decision":"continue","params":{"command":"rm -rf /"},"reason":"test"}'`,
			req: bash("ls"), wantV: Ask, wantLayer: LayerTier, wantReason: "rewrote the parameters",
			check: func(t *testing.T, d Decision) {
				if !d.InteractiveOnly || d.Kind != KindBashDestructive || !strings.Contains(string(d.Params), "rm -rf /") {
					t.Errorf("rewritten command not re-checked: %+v", d)
				}
			}},
		{name: "rewrite to safer", body: `cat >/dev/null; echo '{"decision":"continue","params":{"path":"/work/safe"}}'`,
			req: Request{Tool: ToolReadFile, Params: params("path", "/etc/shadow")}, wantV: Allow, wantLayer: LayerTier,
			check: func(t *testing.T, d Decision) {
				if !strings.Contains(string(d.Params), "/work/safe") {
					t.Errorf("params not rewritten: %s", d.Params)
				}
			}},
		{name: "elevate", body: `cat >/dev/null; echo '{"decision":"elevate","reason":"prod"}'`,
			req: Request{Tool: ToolReadFile, Params: params("path", "/x")}, wantV: Ask, wantLayer: LayerTier, wantReason: "raised the tier to P2",
			check: func(t *testing.T, d Decision) {
				if d.Tier != P2 || d.InteractiveOnly {
					t.Errorf("elevate: %+v", d)
				}
			}},
		{name: "crash", body: `echo 'hook exploded' >&2; exit 2`, req: bash("ls"), wantV: Deny, wantLayer: LayerHook, wantReason: "hook exploded"},
		{name: "hang", body: `sleep 30`, req: bash("ls"), wantV: Deny, wantLayer: LayerHook, wantReason: "did not answer within"},
		{name: "hang with a child holding stdout", body: `sleep 30 & sleep 30`, req: bash("ls"), wantV: Deny, wantLayer: LayerHook, wantReason: "did not answer within"},
		{name: "silent", body: `cat >/dev/null`, req: bash("ls"), wantV: Deny, wantLayer: LayerHook, wantReason: "printed no decision"},
		{name: "garbage", body: `echo '<html>'`, req: bash("ls"), wantV: Deny, wantLayer: LayerHook, wantReason: "invalid JSON"},
		{name: "unknown decision", body: `echo '{"decision":"maybe"}'`, req: bash("ls"), wantV: Deny, wantLayer: LayerHook, wantReason: "continue, block or elevate"},
		{name: "params not an object", body: `echo '{"decision":"continue","params":[1]}'`, req: bash("ls"), wantV: Deny, wantLayer: LayerHook},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hook := script(t, "hook", c.body)
			b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, hookSettings(hook, "300ms")))
			req := c.req
			ev := b.evaluate(ctx, &req, evalMode{hooks: true, reviewer: true})
			d := ev.Decision
			if d.Verdict != c.wantV || d.Layer != c.wantLayer {
				t.Fatalf("got %s by %s (%v), want %s by %s", d.Verdict, d.Layer, d.Reasons, c.wantV, c.wantLayer)
			}
			if c.wantReason != "" && !strings.Contains(strings.Join(d.Reasons, "\n"), c.wantReason) {
				t.Fatalf("reasons %q lack %q", d.Reasons, c.wantReason)
			}
			if c.check != nil {
				c.check(t, d)
			}
		})
	}
}

func TestHookInputAndToolsFilter(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	hook := script(t, "hook", `cat > `+in+`; echo '{"decision":"block"}'`)
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, hookSettings(hook, "5s", "bash", "ops_*")))
	ctx := context.Background()
	// Not a matching tool: the hook does not run.
	if d, err := b.Await(ctx, Request{Tool: ToolReadFile, Params: params("path", "/x")}); err != nil || d.Verdict != Allow {
		t.Fatalf("read_file with a bash-only hook = %+v, %v", d, err)
	}
	if _, err := os.Stat(in); err == nil {
		t.Fatal("hook ran for a tool outside its filter")
	}
	req := bash("ls")
	req.Context.Run = "run-7"
	if d, _ := b.Await(ctx, req); d.Verdict != Deny || d.Layer != LayerHook {
		t.Fatalf("bash with blocking hook = %+v", d)
	}
	var hi HookInput
	body, _ := os.ReadFile(in)
	if err := json.Unmarshal(body, &hi); err != nil || hi.Event != "before_tool_use" || hi.Tool != ToolBash || hi.Tier != P1 ||
		hi.Context.Run != "run-7" || !strings.Contains(string(hi.Params), `"ls"`) {
		t.Fatalf("hook input %s (%v)", body, err)
	}
	// Wildcard tools filter.
	if d, _ := b.Await(ctx, Request{Tool: "ops_plan", Params: params("plan", "x")}); d.Verdict != Deny {
		t.Fatalf("ops_plan with an ops_* hook = %+v", d)
	}
}

func TestAfterHookGetsOutcome(t *testing.T) {
	out := filepath.Join(t.TempDir(), "after.json")
	hook := script(t, "after", `cat > `+out)
	s := Settings{Hooks: HooksSection{AfterToolUse: []HookSetting{{Command: []string{hook}}}}}
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, s))
	ctx := context.Background()
	req := Request{ID: "r-after", Tool: ToolReadFile, Params: params("path", "/x")}
	d, _ := b.Await(ctx, req)
	code := 0
	b.AfterToolUse(ctx, req, d, Outcome{Ran: true, ExitCode: &code})
	var hi HookInput
	body, _ := os.ReadFile(out)
	if err := json.Unmarshal(body, &hi); err != nil || hi.Event != "after_tool_use" || hi.Outcome == nil || !hi.Outcome.Ran ||
		hi.Decision == nil || hi.Decision.Verdict != Allow {
		t.Fatalf("after hook input %s (%v)", body, err)
	}
	// A failing after-hook changes nothing and does not panic.
	s.Hooks.AfterToolUse[0].Command = []string{script(t, "bad", "exit 9")}
	if err := b.Reload(effective(t, s)); err != nil {
		t.Fatal(err)
	}
	b.AfterToolUse(ctx, req, d, Outcome{Ran: true})
}

// A hook that raises a request to P2 asks for a person: the auto reviewer must not
// answer it (the permission pipeline, steps 2 and 7), under any approval policy.
func TestHookRaisedP2IsNotForTheReviewer(t *testing.T) {
	cases := []struct {
		name   string
		hook   string // the before_tool_use hook's answer
		policy string
		wantV  Verdict
		// reviewed says the reviewer is consulted (the control case: no raise).
		reviewed bool
		// allowRule adds a trusted allow rule for the command: it does not answer either.
		allowRule bool
	}{
		{name: "raised, on-request: the person is asked", hook: `{"decision":"elevate","reason":"production"}`, policy: "on-request", wantV: Ask},
		{name: "raised with an explicit tier", hook: `{"decision":"elevate","tier":"P2"}`, policy: "on-request", wantV: Ask},
		{name: "raised, never: denied with the reason", hook: `{"decision":"elevate","reason":"production"}`, policy: "never", wantV: Deny},
		{name: "not raised: the reviewer answers", hook: `{"decision":"continue"}`, policy: "on-request", wantV: Allow, reviewed: true},
		{name: "raised, and an allow rule matches: the person is still asked", hook: `{"decision":"elevate","reason":"production"}`, policy: "on-request", wantV: Ask, allowRule: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(dir, "reviewer-called")
			hook := script(t, "hook", `cat >/dev/null; echo '`+c.hook+`'`)
			rev := script(t, "reviewer", `cat >/dev/null; touch '`+marker+`'; echo '{"decision":"allow","risk":"low","rationale":"fine"}'`)
			s := hookSettings(hook, "20s")
			s.ApprovalPolicy, s.ApprovalsReviewer = c.policy, "auto_review"
			s.Reviewer = ReviewerSection{Command: []string{rev}, Timeout: "20s"}
			if c.allowRule {
				s.Permission.Rules = []RuleSetting{{Tool: "bash", Pattern: "make *", Action: "allow"}}
			}
			b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, s))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req := bash("make deploy")
			req.ID = "raised"
			type result struct {
				d   Decision
				err error
			}
			done := make(chan result, 1)
			go func() {
				d, err := b.Await(ctx, req)
				done <- result{d, err}
			}()
			var d Decision
			if c.wantV == Ask {
				waitFor(t, "the request to wait for the person", func() bool {
					select {
					case r := <-done:
						t.Fatalf("decided without a person: %s by %s (%v), %v", r.d.Verdict, r.d.Layer, r.d.Reasons, r.err)
					default:
					}
					return len(b.Pending()) == 1
				})
				p := b.Pending()[0]
				if p.Tier != P2 || !strings.Contains(strings.Join(p.Reasons, "\n"), "not the auto reviewer") {
					t.Errorf("pending %+v: want P2 and a reason naming the hook's raise", p)
				}
				// A person answers it.
				var err error
				if d, err = b.Answer(ctx, p.ID, Answer{Allow: true, By: ByWindow, Interactive: true}); err != nil {
					t.Fatal(err)
				}
				<-done
			} else {
				r := <-done
				if r.err != nil {
					t.Fatal(r.err)
				}
				d = r.d
			}
			if d.Verdict != Allow && c.wantV == Ask || c.wantV != Ask && d.Verdict != c.wantV {
				t.Fatalf("got %s by %s (%v), want %s", d.Verdict, d.Layer, d.Reasons, c.wantV)
			}
			if c.wantV == Ask && d.AnsweredBy != ByWindow {
				t.Errorf("answered by %q, want the window", d.AnsweredBy)
			}
			if c.wantV == Deny && !strings.Contains(strings.Join(d.Reasons, "\n"), "raised the tier to P2: production") {
				t.Errorf("the denial does not give the hook's reason: %v", d.Reasons)
			}
			_, err := os.Stat(marker)
			if called := err == nil; called != c.reviewed {
				t.Fatalf("reviewer called = %v, want %v (decision %s by %s: %v)", called, c.reviewed, d.Verdict, d.Layer, d.Reasons)
			}
		})
	}
}

// A request a before_tool_use hook rewrote, pending across a restart, is re-attached by
// its caller asking as it did (the rewritten params are what the person answers and
// what runs), whether it is still pending or was answered while the caller was away.
func TestRewrittenRequestReattachesAfterRestart(t *testing.T) {
	for _, answeredAway := range []bool{false, true} {
		t.Run(fmt.Sprintf("answered while away %v", answeredAway), func(t *testing.T) {
			dir := t.TempDir()
			hook := script(t, "hook", `cat >/dev/null; echo '{"decision":"continue","params":{"command":"make release-dry-run"}}'`)
			s := hookSettings(hook, "20s")
			db := openDB(t, dir)
			b1, _ := newBroker(t, db, effective(t, s))
			req := bash("make release")
			req.ID = "r-rewritten"
			errs := make(chan error, 1)
			go func() {
				_, err := b1.Await(context.Background(), req)
				errs <- err
			}()
			waitFor(t, "pending", func() bool { return len(b1.Pending()) == 1 })
			if err := b1.Close(); err != nil {
				t.Fatal(err)
			}
			if err := <-errs; !errors.Is(err, ErrClosed) {
				t.Fatalf("caller at shutdown got %v, want ErrClosed", err)
			}
			closeDB(t, db)

			db = openDB(t, dir)
			b2, _ := newBroker(t, db, effective(t, s), func(o *BrokerOptions) { o.RecoveryGrace = time.Minute })
			ctx := context.Background()
			if answeredAway {
				if _, err := b2.Answer(ctx, req.ID, Answer{Allow: true, By: ByWindow, Interactive: true}); err != nil {
					t.Fatal(err)
				}
			}
			got := make(chan Decision, 1)
			go func() {
				d, err := b2.Await(ctx, req)
				if err != nil {
					t.Errorf("re-attach: %v", err)
				}
				got <- d
			}()
			if !answeredAway {
				waitFor(t, "re-attach", func() bool {
					p := b2.Pending()
					return len(p) == 1 && p[0].CallerWaiting
				})
				if p := b2.Pending()[0]; !strings.Contains(p.Summary, "release-dry-run") {
					t.Errorf("the person is shown %q, want the rewritten command", p.Summary)
				}
				if _, err := b2.Answer(ctx, req.ID, Answer{Allow: true, By: ByWindow, Interactive: true}); err != nil {
					t.Fatal(err)
				}
			}
			d := <-got
			if d.Verdict != Allow || !strings.Contains(string(d.Params), "release-dry-run") {
				t.Fatalf("re-attached decision %+v, want allowed with the rewritten params", d)
			}
		})
	}
}

// The after-hooks see the params that ran on every surface: the MCP server and dispatch
// pass the broker's decision (with a before-hook's rewrite), the hook adapter passes the
// agent's own report of what ran with a bare decision.
func TestAfterHookParamsAreWhatRan(t *testing.T) {
	cases := []struct {
		name     string
		reqCmd   string
		decision Decision
		want     string
	}{
		{name: "decision with rewritten params", reqCmd: "make release", decision: Decision{Verdict: Allow, Params: params("command", "make release-dry-run")}, want: "make release-dry-run"},
		{name: "decision with the request's params", reqCmd: "ls", decision: Decision{Verdict: Allow, Params: params("command", "ls")}, want: "ls"},
		{name: "bare decision (hook adapter)", reqCmd: "go test ./...", decision: Decision{Verdict: Allow}, want: "go test ./..."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "after.json")
			hook := script(t, "after", `cat > '`+out+`'`)
			s := Settings{Hooks: HooksSection{AfterToolUse: []HookSetting{{Command: []string{hook}, Timeout: "20s"}}}}
			b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, s))
			b.AfterToolUse(context.Background(), bash(c.reqCmd), c.decision, Outcome{Ran: true})
			var hi HookInput
			body, _ := os.ReadFile(out)
			if err := json.Unmarshal(body, &hi); err != nil {
				t.Fatalf("after hook input %q: %v", body, err)
			}
			var p map[string]string
			if err := json.Unmarshal(hi.Params, &p); err != nil || p["command"] != c.want {
				t.Fatalf("after hook params %s, want command %q", hi.Params, c.want)
			}
		})
	}
}
