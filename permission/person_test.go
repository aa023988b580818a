package permission

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Who answered is the surface's fact, and what an answer may do follows from it: an API
// answer is never a person, so it allows P1 once or for the session, for the request's
// own call, and nothing more.
func TestAnswersNeedingAPerson(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	ws := filepath.Join(home, "proj")
	os.MkdirAll(ws, 0o755)
	b, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{Permission: PermissionSection{Tiers: map[string]string{"web_fetch": "P2"}}}),
		func(o *BrokerOptions) { o.Preflight.Home = home })
	p1 := func(cmd string) Request {
		return Request{Tool: ToolBash, Params: params("command", cmd), Context: Context{Session: "s1", Cwd: ws}}
	}
	p2 := Request{Tool: "web_fetch", Params: params("url", "https://example.com"), Context: Context{Session: "s1", Cwd: ws}}
	tests := []struct {
		name    string
		req     Request
		answer  Answer
		wantErr error // nil: accepted
	}{
		{"P2 allowed over the API", p2, Answer{Allow: true, By: ByAPI}, ErrNeedsPerson},
		{"P2 allowed over the API claiming a person", p2, Answer{Allow: true, By: ByAPI, Interactive: true}, ErrNeedsPerson},
		{"P2 allowed from the tray", p2, Answer{Allow: true, By: ByTray, Interactive: true}, ErrNeedsPerson},
		{"P2 allowed with OS proof at a terminal", p2, Answer{Allow: true, By: ByCLIOSProof, Interactive: true}, nil},
		{"P2 allowed in the window", p2, Answer{Allow: true, By: ByWindow, Interactive: true}, nil},
		{"P2 denied over the API", p2, Answer{Allow: false, By: ByAPI}, nil},
		{"always over the API", p1("make a"), Answer{Allow: true, By: ByAPI, Scope: ScopeAlways}, ErrNeedsPerson},
		{"always from the tray", p1("make b"), Answer{Allow: true, By: ByTray, Scope: ScopeAlways}, ErrNeedsPerson},
		{"always with OS proof", p1("make c"), Answer{Allow: true, By: ByCLIOSProof, Interactive: true, Scope: ScopeAlways}, nil},
		{"pattern * over the API", p1("make d"), Answer{Allow: true, By: ByAPI, Scope: ScopeSession, Pattern: "*"}, ErrBadAnswer},
		{"pattern * with OS proof", p1("make e"), Answer{Allow: true, By: ByCLIOSProof, Interactive: true, Scope: ScopeAlways, Pattern: "*"}, ErrBadAnswer},
		{"the request's own call over the API", p1("make f"), Answer{Allow: true, By: ByAPI, Scope: ScopeSession, Pattern: "make f"}, nil},
		{"a wider pattern in the window", p1("make g"), Answer{Allow: true, By: ByWindow, Interactive: true, Scope: ScopeAlways, Pattern: "make *"}, nil},
		{"unknown surface", p1("cargo h"), Answer{Allow: true, By: "robot"}, ErrBadAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ch := ask(t, b, ev, tt.req)
			d, err := b.Answer(ctx, p.ID, tt.answer)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("answer %+v = %v, want %v", tt.answer, err, tt.wantErr)
				}
				if _, err := b.Answer(ctx, p.ID, Answer{By: ByAPI}); err != nil {
					t.Fatal(err)
				}
				<-ch
				return
			}
			if err != nil {
				t.Fatalf("answer %+v refused: %v", tt.answer, err)
			}
			if got := <-ch; got.AnsweredBy != tt.answer.By {
				t.Fatalf("recorded as answered by %q, want %q", got.AnsweredBy, tt.answer.By)
			}
			_ = d
		})
	}
}

// An always grant applies at the request's real directory: a request that names `/` (or
// a directory above the home) as its workspace gets a grant for its working directory,
// and one whose working directory is that broad is offered no always at all.
func TestAlwaysGrantPlaceIsClamped(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	ws := filepath.Join(home, "proj")
	other := filepath.Join(home, "other")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(other, 0o755)
	link := filepath.Join(home, "link")
	os.Symlink("/", link)
	b, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}), func(o *BrokerOptions) { o.Preflight.Home = home })
	req := func(cmd, cwd, workspace string) Request {
		return Request{Tool: ToolBash, Params: params("command", cmd), Context: Context{Session: "s1", Cwd: cwd, Workspace: workspace}}
	}
	tests := []struct {
		name      string
		req       Request
		wantPlace string // "" : always is not offered
	}{
		{"workspace / is clamped to the working directory", req("make a", ws, "/"), ws},
		{"a workspace above the home is clamped", req("make b", ws, filepath.Dir(home)), ws},
		{"a symlink to / is resolved and clamped", req("make c", ws, link), ws},
		{"a workspace holding the working directory", req("make d", filepath.Join(ws), home), home},
		{"a workspace that does not hold the working directory", req("make e", ws, other), ws},
		{"working directory /", req("make f", "/", "/"), ""},
		{"no working directory, workspace /", req("make g", "", "/"), ""},
		{"a relative working directory", req("make h", "proj", ""), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ch := ask(t, b, ev, tt.req)
			offered := false
			for _, s := range p.Scopes {
				offered = offered || s == ScopeAlways
			}
			_, err := b.Answer(ctx, p.ID, Answer{Allow: true, By: ByWindow, Interactive: true, Scope: ScopeAlways})
			if tt.wantPlace == "" {
				if offered || !errors.Is(err, ErrBadAnswer) {
					t.Fatalf("always offered %v, answer %v; want neither", offered, err)
				}
				b.Answer(ctx, p.ID, Answer{By: ByWindow})
				<-ch
				return
			}
			if err != nil || !offered {
				t.Fatalf("always offered %v, answer %v", offered, err)
			}
			<-ch
			list, _ := b.Grants().List(ctx, GrantFilter{})
			if len(list) == 0 || list[0].Workspace != tt.wantPlace {
				t.Fatalf("grant %+v, want place %s", list, tt.wantPlace)
			}
			// Another agent somewhere else is not covered.
			if d := b.Check(ctx, req(tt.req.Subject(), "/etc", "/")).Decision; d.Verdict != Ask {
				t.Fatalf("the grant reached /etc: %+v", d)
			}
		})
	}
}
