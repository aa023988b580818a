package permission

import (
	"context"
	"testing"
)

// An allow that names no scope follows the tiers: a P1 request asks the first time
// and is then remembered for the rest of its session (this tool, this exact call); once
// is the exception the person picks. P2, interactive-only and session-less requests
// offer once only, so that is what they get.
func TestAllowWithoutScopeRemembersP1ForTheSession(t *testing.T) {
	ctx := context.Background()
	b, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	inRun := bash("make build")
	inRun.Context.Session, inRun.Context.Run = "", "7"
	noSession := bash("make test")
	noSession.Context.Session = ""
	p2 := Request{Tool: ToolOpsApply, Params: params("plan_id", "p1"), Context: Context{Session: "s1", Department: "dev"}}
	tests := []struct {
		name        string
		req         Request
		by          string
		interactive bool
		want        Scope
		remembered  bool
	}{
		{"P1 from the window", bash("npm run lint"), ByWindow, true, ScopeSession, true},
		{"P1 from the tray", bash("go vet ./..."), ByTray, false, ScopeSession, true},
		{"P1 from a notification", bash("go build ./..."), ByNotification, false, ScopeSession, true},
		{"P1 from the CLI", bash("cargo check"), ByAPI, false, ScopeSession, true},
		// A run is the session of what it starts: remembered for the rest of the run.
		{"P1 in a run", inRun, ByWindow, true, ScopeSession, true},
		{"P1 without a session or a run", noSession, ByWindow, true, ScopeOnce, false},
		{"P2", p2, ByWindow, true, ScopeOnce, false},
		{"interactive-only", bash("rm -rf ~"), ByWindow, true, ScopeOnce, false},
	}
	for _, tt := range tests {
		p, ch := ask(t, b, ev, tt.req)
		d, err := b.Answer(ctx, p.ID, Answer{Allow: true, By: tt.by, Interactive: tt.interactive})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		<-ch
		if d.Scope != tt.want {
			t.Errorf("%s: allowed with scope %q, want %q", tt.name, d.Scope, tt.want)
		}
		again := b.Check(ctx, tt.req).Decision
		if got := again.Verdict == Allow && again.Layer == LayerGrant; got != tt.remembered {
			t.Errorf("%s: the same call again = %s by %s, want remembered %v", tt.name, again.Verdict, again.Layer, tt.remembered)
		}
	}
	// A run's grant is that run's only.
	otherRun := inRun
	otherRun.Context.Run = "8"
	if d := b.Check(ctx, otherRun).Decision; d.Verdict != Ask {
		t.Errorf("another run's call: %s by %s, want ask", d.Verdict, d.Layer)
	}
	// The session grant is this session's only, and for this exact call only.
	other := bash("npm run lint")
	other.Context.Session = "s2"
	if d := b.Check(ctx, other).Decision; d.Verdict != Ask {
		t.Errorf("the session grant reached another session: %+v", d)
	}
	if d := b.Check(ctx, bash("npm run lint --fix")).Decision; d.Verdict != Ask {
		t.Errorf("the session grant covered another command: %+v", d)
	}
	// Once stays available, when the person picks it.
	p, ch := ask(t, b, ev, bash("make test"))
	if d, err := b.Answer(ctx, p.ID, Answer{Allow: true, Scope: ScopeOnce, By: ByWindow, Interactive: true}); err != nil || d.Scope != ScopeOnce {
		t.Fatalf("once: %+v, %v", d, err)
	}
	<-ch
	if d := b.Check(ctx, bash("make test")).Decision; d.Verdict != Ask {
		t.Errorf("once was remembered: %+v", d)
	}
}
