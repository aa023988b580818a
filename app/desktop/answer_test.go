package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/permission"
)

// ask raises a request as an agent does and returns its decision when it comes.
func ask(t *testing.T, core *app.Core, req permission.Request) <-chan permission.Decision {
	t.Helper()
	out := make(chan permission.Decision, 1)
	go func() {
		d, err := core.Broker.Await(context.Background(), req)
		if err != nil {
			t.Errorf("await %s: %v", req.ID, err)
		}
		out <- d
	}()
	return out
}

// waitPending waits until the window would list the request id.
func waitPending(t *testing.T, f *Facade, id string) api.Approval {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, a := range f.PendingApprovals() {
			if a.ID == id {
				return a
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("request %s never became pending", id)
	return api.Approval{}
}

func writeReq(id, cwd string) permission.Request {
	_ = os.MkdirAll(cwd, 0o700)
	params, _ := json.Marshal(map[string]string{"path": filepath.Join(cwd, "notes.md"), "content": "hello"})
	return permission.Request{ID: id, Tool: "write_file", Params: params, Context: permission.Context{Cwd: cwd, Department: "research"}}
}

// Allow always from the window remembers a grant: the next identical request is silent.
func TestAnswerAllowAlwaysFromTheWindow(t *testing.T) {
	core, home := openCore(t)
	f := NewFacade(core)
	cwd := filepath.Join(home, "work")

	first := ask(t, core, writeReq("w1", cwd))
	a := waitPending(t, f, "w1")
	// Always in a department is its department grant, offered as such (an always
	// answer still makes it).
	if a.Tier != "P1" || !strings.Contains(a.Params, `"content": "hello"`) || strings.Join(a.Scopes, ",") != "once,department" {
		t.Fatalf("pending view = %+v; want P1 with indented params and scopes once,department", a)
	}
	if err := f.Answer("w1", true, "always", ""); err != nil {
		t.Fatalf("allow always: %v", err)
	}
	if d := <-first; d.Verdict != permission.Allow || d.AnsweredBy != permission.ByWindow || d.Scope != permission.ScopeAlways {
		t.Fatalf("decision = %+v; want allow always by window", d)
	}
	d, err := core.Broker.Await(context.Background(), writeReq("w2", cwd))
	if err != nil || d.Verdict != permission.Allow {
		t.Fatalf("the identical request after Allow always = %+v, %v; want allowed silently", d, err)
	}
	if len(f.PendingApprovals()) != 0 {
		t.Errorf("pending after the grant: %+v", f.PendingApprovals())
	}
	// Answering again is refused: it is not pending any more.
	if err := f.Answer("w1", false, "", ""); !errors.Is(err, permission.ErrNotPending) {
		t.Errorf("second answer = %v; want ErrNotPending", err)
	}
}

// A P2 request offers once only: the window may allow it once, never always; a deny
// carries the person's reason.
func TestAnswerP2FromTheWindow(t *testing.T) {
	core, home := openCore(t)
	f := NewFacade(core)
	cmd, _ := json.Marshal(map[string]string{"command": "rm -rf ~"})
	req := permission.Request{ID: "b1", Tool: "bash", Params: cmd, Context: permission.Context{Cwd: home}}
	got := ask(t, core, req)
	a := waitPending(t, f, "b1")
	if a.Tier != "P2" || strings.Join(a.Scopes, ",") != "once" {
		t.Fatalf("pending view = %+v; want P2 offering once only", a)
	}
	if err := f.Answer("b1", true, "always", ""); err == nil {
		t.Fatal("allow always of a P2 was accepted")
	}
	if err := f.Answer("b1", false, "", "not today"); err != nil {
		t.Fatalf("deny: %v", err)
	}
	d := <-got
	if d.Verdict != permission.Deny || !strings.Contains(strings.Join(d.Reasons, " "), "not today") {
		t.Fatalf("decision = %+v; want deny with the reason", d)
	}

	// Interactive-only (destructive) requests may be allowed once from the window: a click is a person.
	again := ask(t, core, permission.Request{ID: "b2", Tool: "bash", Params: cmd, Context: permission.Context{Cwd: home}})
	if a := waitPending(t, f, "b2"); !a.InteractiveOnly {
		t.Fatalf("rm -rf ~ should be interactive-only: %+v", a)
	}
	if err := f.Answer("b2", true, "once", ""); err != nil {
		t.Fatalf("allow once from the window: %v", err)
	}
	if d := <-again; d.Verdict != permission.Allow {
		t.Fatalf("decision = %+v; want allow", d)
	}
}

// Authorizing the home directory needs the second confirmation, which says what becomes
// writable; an ordinary directory is authorized at once.
func TestAuthorizeDirectoryFromTheWindow(t *testing.T) {
	core, home := openCore(t)
	f := NewFacade(core)

	got, err := f.AuthorizeDirectory(home, false)
	if err != nil || !got.NeedsConfirmation || got.Path != home {
		t.Fatalf("authorize home = %+v, %v; want the second confirmation", got, err)
	}
	for _, want := range []string{home + "/.ssh", "documents", "start without asking"} {
		if !strings.Contains(got.Confirmation, want) {
			t.Errorf("confirmation %q does not say %q", got.Confirmation, want)
		}
	}
	if strings.Contains(got.Confirmation, "--confirm-home") {
		t.Errorf("confirmation speaks CLI: %q", got.Confirmation)
	}
	if places, _ := core.Departments.Places(context.Background(), false); len(places) != 0 {
		t.Fatalf("home was authorized without the confirmation: %+v", places)
	}
	if got, err = f.AuthorizeDirectory(home, true); err != nil || got.NeedsConfirmation || got.Path != home {
		t.Fatalf("confirmed authorize = %+v, %v", got, err)
	}

	dir := filepath.Join(t.TempDir(), "legacy")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	got, err = f.AuthorizeDirectory(dir, false)
	if err != nil || got.NeedsConfirmation || got.Path != dir || got.Released == nil {
		t.Fatalf("authorize %s = %+v, %v", dir, got, err)
	}
	if _, err := f.AuthorizeDirectory(filepath.Join(dir, "missing"), false); err == nil {
		t.Error("authorizing a missing directory succeeded")
	}
}

func TestInboxListsPendingApprovals(t *testing.T) {
	core, home := openCore(t)
	f := NewFacade(core)
	if items, err := f.Inbox(); err != nil || len(items) != 0 {
		t.Fatalf("empty inbox = %+v, %v", items, err)
	}
	done := ask(t, core, writeReq("i1", filepath.Join(home, "w")))
	waitPending(t, f, "i1")
	items, err := f.Inbox()
	if err != nil || len(items) != 1 || items[0].Key != "i1" || items[0].Kind != "approval" {
		t.Fatalf("inbox = %+v, %v; want the pending approval", items, err)
	}
	_ = f.Answer("i1", false, "", "")
	<-done
}

// A run held outside known places is listed by the inbox; cancelling it from the window
// ("Skip") takes it off, and it never runs.
func TestCancelHeldRunsFromTheWindow(t *testing.T) {
	core, _ := openCore(t)
	f := NewFacade(core)
	ctx := context.Background()
	if _, err := core.Dispatch.Start(ctx); err != nil {
		t.Fatalf("start dispatch: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "outside")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Dispatch.CreateTask(ctx, dispatch.TaskSpec{Name: "skip-me", Argv: []string{"touch", "ran"}, Cwd: dir, TimeZone: "UTC"}); err != nil {
		t.Fatalf("create task: %v", err)
	}
	run, err := core.Dispatch.RunNow(ctx, "skip-me")
	if err != nil {
		t.Fatalf("run now: %v", err)
	}
	var held dispatch.InboxItem
	waitFor(t, "the held run in the inbox", func() bool {
		items, _ := f.Inbox()
		for _, it := range items {
			if it.Kind == dispatch.InboxDirectoryKind {
				held = it
				return true
			}
		}
		return false
	})
	if len(held.Runs) != 1 || held.Runs[0] != run.ID {
		t.Fatalf("held item = %+v; want run %d", held, run.ID)
	}
	if err := f.CancelRuns(held.Runs); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if items, _ := f.Inbox(); len(items) != 0 {
		t.Fatalf("inbox after cancel = %+v", items)
	}
	r, err := core.Dispatch.Run(ctx, run.ID)
	if err != nil || r.Status != dispatch.StatusCancelled {
		t.Fatalf("run = %+v, %v; want cancelled", r, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !os.IsNotExist(err) {
		t.Error("the cancelled run ran")
	}
	if err := f.CancelRuns(held.Runs); err == nil {
		t.Error("cancelling an ended run again succeeded")
	}
}
