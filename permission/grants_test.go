package permission

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestTaskAndDepartmentGrants: an allow "for this task" covers the same call in every
// later run (session) of that task and in no other task; "for this department" covers
// every task and session of that department and no other; each is offered only when the
// request's context has a task or a department, needs a person, and a grant of a task
// goes when the task is removed.
func TestTaskAndDepartmentGrants(t *testing.T) {
	ctx := context.Background()
	domain := func(run, task, dept string) Request {
		return Request{Tool: ToolNetworkDomain, Params: []byte(`{"domain":"example.test","port":443}`),
			Context: Context{Run: run, Task: task, Department: dept, Cwd: "/work/app", Policy: PolicySummary{Mode: "workspace-write"}}}
	}
	tests := []struct {
		name   string
		asked  Request
		scope  Scope
		offers []Scope
		covers []Request // asked again after the answer: allowed by the grant
		asks   []Request // still asked
	}{
		{
			name: "for this task", asked: domain("1", "backup", ""), scope: ScopeTask,
			offers: []Scope{ScopeOnce, ScopeSession, ScopeTask, ScopeAlways},
			covers: []Request{domain("2", "backup", ""), domain("3", "backup", "dev")},
			asks:   []Request{domain("2", "report", ""), domain("2", "", "")},
		},
		{
			name: "for this department", asked: domain("1", "backup", "dev"), scope: ScopeDepartment,
			offers: []Scope{ScopeOnce, ScopeSession, ScopeTask, ScopeDepartment},
			covers: []Request{domain("2", "backup", "dev"), domain("2", "report", "dev"), domain("", "", "dev")},
			asks:   []Request{domain("2", "backup", "ops"), domain("2", "report", "")},
		},
		{
			// Always with a department is the department grant, offered as department;
			// a caller that answers always still gets it.
			name: "always in a department", asked: domain("1", "backup", "dev"), scope: ScopeAlways,
			offers: []Scope{ScopeOnce, ScopeSession, ScopeTask, ScopeDepartment},
			covers: []Request{domain("2", "report", "dev")},
			asks:   []Request{domain("2", "report", "ops")},
		},
		{
			name: "for this session, without a task", asked: domain("1", "", ""), scope: ScopeSession,
			offers: []Scope{ScopeOnce, ScopeSession, ScopeAlways},
			covers: []Request{domain("1", "", "")},
			asks:   []Request{domain("2", "", "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
			p, ch := ask(t, b, ev, tt.asked)
			if !slices.Equal(p.Scopes, tt.offers) {
				t.Fatalf("scopes offered = %v, want %v", p.Scopes, tt.offers)
			}
			if tt.scope != ScopeSession {
				// Remembered beyond the session: a person's answer only.
				if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, Scope: tt.scope, By: ByTray}); !errors.Is(err, ErrNeedsPerson) {
					t.Fatalf("%s from the tray: err = %v, want ErrNeedsPerson", tt.scope, err)
				}
			}
			if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, Scope: tt.scope, By: ByWindow, Interactive: true}); err != nil {
				t.Fatal(err)
			}
			if d := <-ch; d.Verdict != Allow || d.Scope != tt.scope {
				t.Fatalf("decision = %+v", d)
			}
			for _, r := range tt.covers {
				if d := b.Check(ctx, r).Decision; d.Verdict != Allow || d.Layer != LayerGrant {
					t.Errorf("%+v: %s (%s), want allowed by the grant", r.Context, d.Verdict, d.Layer)
				}
			}
			for _, r := range tt.asks {
				if d := b.Check(ctx, r).Decision; d.Verdict != Ask {
					t.Errorf("%+v: %s (%s), want asked", r.Context, d.Verdict, d.Layer)
				}
			}
		})
	}
}

// TestScopeNotOfferedIsRefused: a task or department scope on a request without one is
// refused with the scopes it does offer, and a grant without its task or department is
// not recorded.
func TestScopeNotOfferedIsRefused(t *testing.T) {
	ctx := context.Background()
	b, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	p, ch := ask(t, b, ev, Request{Tool: ToolBash, Params: params("command", "make lint"), Context: Context{Session: "s1", Cwd: "/work/app"}})
	for _, s := range []Scope{ScopeTask, ScopeDepartment, "forever"} {
		if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, Scope: s, By: ByWindow, Interactive: true}); !errors.Is(err, ErrBadAnswer) {
			t.Errorf("scope %s: err = %v, want ErrBadAnswer", s, err)
		}
	}
	if _, err := b.Answer(ctx, p.ID, Answer{By: ByWindow}); err != nil {
		t.Fatal(err)
	}
	<-ch
	for _, s := range []Scope{ScopeTask, ScopeDepartment} {
		var rec GrantRecord
		rec.Tool, rec.Pattern, rec.Scope, rec.Workspace = ToolBash, "make lint", s, "/work/app"
		if _, err := b.Grants().Add(ctx, rec.GrantRecord); err == nil {
			t.Errorf("a %s grant without its %s was recorded", s, s)
		}
	}
}

// TestRevokeTaskGrants: removing a task revokes its task grants (and only those): a task
// made later under the same name is asked again.
func TestRevokeTaskGrants(t *testing.T) {
	ctx := context.Background()
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	g := b.Grants()
	req := Request{Tool: ToolNetworkDomain, Params: []byte(`{"domain":"example.test","port":443}`), Context: Context{Run: "1", Task: "backup"}}
	for _, task := range []string{"backup", "report"} {
		rec := GrantRecord{}
		rec.Tool, rec.Pattern, rec.Scope, rec.Task = ToolNetworkDomain, req.Subject(), ScopeTask, task
		if _, err := g.Add(ctx, rec.GrantRecord); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := g.RevokeTask(ctx, "backup"); err != nil || n != 1 {
		t.Fatalf("RevokeTask = %d, %v; want 1", n, err)
	}
	if d := b.Check(ctx, req).Decision; d.Verdict != Ask {
		t.Errorf("after the task was removed: %s (%s), want asked", d.Verdict, d.Layer)
	}
	req.Context.Task = "report"
	if d := b.Check(ctx, req).Decision; d.Verdict != Allow {
		t.Errorf("another task's grant: %s (%s), want allowed", d.Verdict, d.Layer)
	}
}
