package brokerapprovals

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/permission"
)

// hookScript writes an executable shell script (a hook or a reviewer) and returns its path.
func hookScript(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func beforeHook(path string) permission.Settings {
	return permission.Settings{Hooks: permission.HooksSection{BeforeToolUse: []permission.HookSetting{{Command: []string{path}, Timeout: "20s"}}}}
}

// pendingFor returns the broker's pending request a held run waits on.
func pendingFor(t *testing.T, b *permission.Broker, r dispatch.Run) permission.PendingRequest {
	t.Helper()
	for _, p := range b.Pending() {
		if p.ID == r.ApprovalID {
			return p
		}
	}
	t.Fatalf("run #%d waits on %q, which is not pending: %+v", r.ID, r.ApprovalID, b.Pending())
	return permission.PendingRequest{}
}

// A before_tool_use hook that rewrites a run's command applies to the run: the broker
// judges the rewritten command (it is not the task's, so the task's creation does not
// approve it), and once allowed, the run executes it and its log says so.
func TestBeforeHookRewritesTheRunsCommand(t *testing.T) {
	hook := hookScript(t, "rewrite", `cat >/dev/null; echo '{"decision":"continue","params":{"argv":["echo","rewritten"]},"reason":"house style"}'`)
	d, b, ws := setupWith(t, beforeHook(hook))
	ctx := context.Background()
	tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "rewrite", Cwd: ws, Argv: []string{"echo", "original"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := d.RunNow(ctx, tk.Name)
	held := wait(t, d, r.ID, dispatch.StatusWaitingApproval, dispatch.StatusSucceeded, dispatch.StatusFailed)
	if held.Status != dispatch.StatusWaitingApproval {
		t.Fatalf("run #%d is %s (%s): the rewritten command is not the task's and must be asked", r.ID, held.Status, held.Reason)
	}
	p := pendingFor(t, b, held)
	if !strings.Contains(p.Summary, "rewritten") || strings.Contains(p.Summary, "original") {
		t.Fatalf("the person is shown %q, want the rewritten command", p.Summary)
	}
	if _, err := b.Answer(ctx, p.ID, permission.Answer{Allow: true, By: permission.ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	done := wait(t, d, r.ID, dispatch.StatusSucceeded, dispatch.StatusFailed)
	if done.Status != dispatch.StatusSucceeded {
		t.Fatalf("run #%d %s: %s", r.ID, done.Status, done.Reason)
	}
	body, err := os.ReadFile(done.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	log := string(body)
	if !strings.Contains(log, "\nrewritten\n") || strings.Contains(log, "\noriginal\n") {
		t.Fatalf("the run did not execute the rewritten command; log:\n%s", log)
	}
	if !strings.Contains(log, "a before_tool_use hook rewrote the command: echo original → echo rewritten") {
		t.Fatalf("the log does not say the command was rewritten:\n%s", log)
	}
}

// The task's approval of its command does not cover what a hook rewrote it into: a
// destructive rewrite is interactive-only and asks at every run, like a destructive task.
func TestBeforeHookRewriteToDestructiveAsksThePerson(t *testing.T) {
	hook := hookScript(t, "rewrite", `cat >/dev/null; echo '{"decision":"continue","params":{"argv":["git","push","--force","origin","main"]}}'`)
	d, b, ws := setupWith(t, beforeHook(hook))
	ctx := context.Background()
	tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "harmless", Cwd: ws, Argv: []string{"echo", "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := d.RunNow(ctx, tk.Name)
	held := wait(t, d, r.ID, dispatch.StatusWaitingApproval, dispatch.StatusSucceeded, dispatch.StatusFailed)
	if held.Status != dispatch.StatusWaitingApproval {
		t.Fatalf("run #%d is %s (%s), want waiting_approval", r.ID, held.Status, held.Reason)
	}
	p := pendingFor(t, b, held)
	if !p.InteractiveOnly || p.Kind != permission.KindBashDestructive || p.Tier != permission.P2 {
		t.Fatalf("pending %+v: want an interactive-only bash_destructive P2", p)
	}
	if _, err := b.Answer(ctx, p.ID, permission.Answer{Allow: true, By: permission.ByAPI}); err == nil {
		t.Fatal("a script allowed the destructive rewrite")
	}
	if _, err := b.Answer(ctx, p.ID, permission.Answer{Allow: false, By: permission.ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	wait(t, d, r.ID, dispatch.StatusDenied)
}

// A rewrite a run cannot execute (no argv) is refused with a message that says what a
// hook must answer; the task's original command does not run instead.
func TestBeforeHookRewriteWithoutArgvIsRefused(t *testing.T) {
	hook := hookScript(t, "rewrite", `cat >/dev/null; echo '{"decision":"continue","params":{"command":"echo rewritten"}}'`)
	d, b, ws := setupWith(t, beforeHook(hook))
	ctx := context.Background()
	tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "noargv", Cwd: ws, Argv: []string{"echo", "original"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := d.RunNow(ctx, tk.Name)
	held := wait(t, d, r.ID, dispatch.StatusWaitingApproval, dispatch.StatusDenied, dispatch.StatusSucceeded, dispatch.StatusFailed)
	if held.Status == dispatch.StatusWaitingApproval {
		if _, err := b.Answer(ctx, held.ApprovalID, permission.Answer{Allow: true, By: permission.ByWindow, Interactive: true}); err != nil {
			t.Fatal(err)
		}
	}
	got := wait(t, d, r.ID, dispatch.StatusDenied, dispatch.StatusSucceeded, dispatch.StatusFailed)
	if got.Status != dispatch.StatusDenied || !strings.Contains(got.Reason, `"argv"`) {
		t.Fatalf("run #%d %s (%s), want denied naming the argv a hook must give", r.ID, got.Status, got.Reason)
	}
	if got.StartedAt != nil {
		t.Fatal("the run started")
	}
}

// After a scheduled run, the after_tool_use hooks receive its outcome, as they do for an
// agent's tool call: the command that ran, the decision, exit code and ran.
func TestAfterHookGetsTheRunsOutcome(t *testing.T) {
	cases := []struct {
		name     string
		argv     []string
		status   string
		exitCode int
	}{
		{name: "succeeded", argv: []string{"sh", "-c", "echo fine"}, status: dispatch.StatusSucceeded, exitCode: 0},
		{name: "failed", argv: []string{"sh", "-c", "exit 3"}, status: dispatch.StatusFailed, exitCode: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "after.jsonl")
			hook := hookScript(t, "after", `cat >> '`+out+`'; echo >> '`+out+`'`)
			s := permission.Settings{Hooks: permission.HooksSection{AfterToolUse: []permission.HookSetting{{Command: []string{hook}, Timeout: "20s"}}}}
			d, _, ws := setupWith(t, s)
			ctx := context.Background()
			tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "after-" + c.name, Cwd: ws, Argv: c.argv})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := d.RunNow(ctx, tk.Name)
			done := wait(t, d, r.ID, dispatch.StatusSucceeded, dispatch.StatusFailed)
			if done.Status != c.status {
				t.Fatalf("run #%d %s (%s), want %s", r.ID, done.Status, done.Reason, c.status)
			}
			var body []byte
			deadline := time.Now().Add(30 * time.Second)
			for len(body) == 0 && time.Now().Before(deadline) {
				body, _ = os.ReadFile(out)
				time.Sleep(5 * time.Millisecond)
			}
			var hi permission.HookInput
			if err := json.Unmarshal(body, &hi); err != nil {
				t.Fatalf("after_tool_use hook input %q: %v", body, err)
			}
			argv, _ := json.Marshal(map[string]any{"argv": c.argv})
			if hi.Event != "after_tool_use" || hi.Tool != permission.ToolExec || hi.Context.Run != strconv.FormatUint(uint64(r.ID), 10) ||
				hi.Context.Task != tk.Name || string(hi.Params) != string(argv) {
				t.Fatalf("after_tool_use hook input %s", body)
			}
			if hi.Decision == nil || hi.Decision.Verdict != permission.Allow || hi.Decision.Layer != permission.LayerTask {
				t.Fatalf("decision %+v, want allowed by the task", hi.Decision)
			}
			if o := hi.Outcome; o == nil || !o.Ran || o.ExitCode == nil || *o.ExitCode != c.exitCode || o.SandboxDenied ||
				(c.status == dispatch.StatusFailed) != (o.Error != "") {
				t.Fatalf("outcome %s", body)
			}
		})
	}
}

// A hook that raises a run's command to P2 asks for the person: the auto reviewer, which
// would allow it, is not consulted.
func TestHookRaisedP2RunWaitsForThePerson(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "reviewer-called")
	hook := hookScript(t, "elevate", `cat >/dev/null; echo '{"decision":"elevate","reason":"production host"}'`)
	rev := hookScript(t, "reviewer", `cat >/dev/null; touch '`+marker+`'; echo '{"decision":"allow","risk":"low","rationale":"looks fine"}'`)
	s := beforeHook(hook)
	s.ApprovalsReviewer = "auto_review"
	s.Reviewer = permission.ReviewerSection{Command: []string{rev}, Timeout: "20s"}
	d, b, ws := setupWith(t, s)
	ctx := context.Background()
	tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "prod", Cwd: ws, Argv: []string{"echo", "deploy"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := d.RunNow(ctx, tk.Name)
	held := wait(t, d, r.ID, dispatch.StatusWaitingApproval, dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusDenied)
	if held.Status != dispatch.StatusWaitingApproval {
		t.Fatalf("run #%d is %s (%s), want waiting_approval", r.ID, held.Status, held.Reason)
	}
	if p := pendingFor(t, b, held); p.Tier != permission.P2 {
		t.Fatalf("pending %+v, want P2", p)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the auto reviewer was asked about a request a hook raised to P2")
	}
	if _, err := b.Answer(ctx, held.ApprovalID, permission.Answer{Allow: true, By: permission.ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	if got := wait(t, d, r.ID, dispatch.StatusSucceeded, dispatch.StatusFailed); got.Status != dispatch.StatusSucceeded || got.StartedAt == nil {
		t.Fatalf("run #%d %s (%s)", r.ID, got.Status, got.Reason)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the auto reviewer was called")
	}
}

// A run held on the rewritten command survives a crash: the restarted dispatcher asks
// again with the task's command and re-attaches to the pending request (the person is
// shown the rewritten one), and the answer runs the rewritten command.
func TestRewrittenRunSurvivesARestart(t *testing.T) {
	hook := hookScript(t, "rewrite", `cat >/dev/null; echo '{"decision":"continue","params":{"argv":["echo","rewritten"]}}'`)
	e := newAutoEnv(t, func(e *autoEnv) {
		eff, err := permission.Resolve(permission.Sources{File: beforeHook(hook), LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatal(err)
		}
		e.settings = eff
	})
	ctx := context.Background()
	if _, err := e.d.CreateTask(ctx, dispatch.TaskSpec{Name: "rewrite", Cwd: e.ws, Argv: []string{"echo", "original"}}); err != nil {
		t.Fatal(err)
	}
	r, _ := e.d.RunNow(ctx, "rewrite")
	held := wait(t, e.d, r.ID, dispatch.StatusWaitingApproval, dispatch.StatusSucceeded, dispatch.StatusFailed)
	if held.Status != dispatch.StatusWaitingApproval {
		t.Fatalf("run #%d is %s (%s), want waiting_approval", r.ID, held.Status, held.Reason)
	}
	// As after a crash, the request stays pending in the database (an orderly stop
	// withdraws it, and the restarted run asks afresh): put the row back as a crash
	// leaves it.
	e.close()
	if err := e.db.Model(&permission.PendingRecord{}).Where("id = ?", held.ApprovalID).Update("status", permission.StatusPending).Error; err != nil {
		t.Fatal(err)
	}
	e.open()
	if got := wait(t, e.d, r.ID, dispatch.StatusWaitingApproval, dispatch.StatusSucceeded, dispatch.StatusFailed); got.Status != dispatch.StatusWaitingApproval {
		t.Fatalf("after a restart run #%d is %s (%s)", r.ID, got.Status, got.Reason)
	}
	// The restarted dispatcher asks again with the task's command and waits on the
	// request (a mismatch with the stored, rewritten one would fail the run).
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _ := e.d.Run(ctx, r.ID)
		if got.Status != dispatch.StatusWaitingApproval {
			t.Fatalf("after a restart run #%d is %s (%s)", r.ID, got.Status, got.Reason)
		}
		ps := e.b.Pending()
		if len(ps) == 1 && ps[0].ID == held.ApprovalID && ps[0].CallerWaiting {
			if !strings.Contains(ps[0].Summary, "rewritten") {
				t.Fatalf("after a restart the person is shown %q, want the rewritten command", ps[0].Summary)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a restart nobody waits on %s: %+v", held.ApprovalID, ps)
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.answer(held.ApprovalID, true)
	done := wait(t, e.d, r.ID, dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusDenied)
	if done.Status != dispatch.StatusSucceeded {
		t.Fatalf("run #%d %s (%s)", r.ID, done.Status, done.Reason)
	}
	if body, _ := os.ReadFile(done.LogPath); !strings.Contains(string(body), "\nrewritten\n") {
		t.Fatalf("log:\n%s", body)
	}
}
