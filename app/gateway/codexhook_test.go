package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
)

func TestParsePatch(t *testing.T) {
	for _, tc := range []struct {
		name, patch string
		want        []PatchFile // nil: refused
	}{
		{"add", "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n", []PatchFile{{Op: PatchAdd, Path: "a.txt", Text: "+hi\n"}}},
		{"update and move", "*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End of File\n*** End Patch",
			[]PatchFile{{Op: PatchUpdate, Path: "a", MoveTo: "b", Text: "@@\n-x\n+y\n*** End of File\n"}}},
		{"several, padded markers", "\n *** Begin Patch\n*** Delete File:  .git/config \n  *** Add File: /etc/x\n+y\n*** End Patch  \n\n",
			[]PatchFile{{Op: PatchDelete, Path: ".git/config"}, {Op: PatchAdd, Path: "/etc/x", Text: "+y\n"}}},
		{"unknown marker", "*** Begin Patch\n*** Add File: a\n+x\n*** Replace File: /etc/passwd\n*** End Patch\n", nil},
		{"no end", "*** Begin Patch\n*** Add File: a\n+x\n", nil},
		{"no file", "*** Begin Patch\n*** End Patch\n", nil},
		{"empty path", "*** Begin Patch\n*** Add File: \n+x\n*** End Patch\n", nil},
		{"text before a file", "*** Begin Patch\n+x\n*** Add File: a\n*** End Patch\n", nil},
		{"move without update", "*** Begin Patch\n*** Add File: a\n*** Move to: b\n*** End Patch\n", nil},
		{"heredoc command", "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePatch(tc.patch)
			if tc.want == nil {
				if err == nil || !errors.Is(err, ErrPatch) {
					t.Fatalf("ParsePatch = %+v, %v; want an ErrPatch refusal", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(tc.want)
			if !bytes.Equal(a, b) {
				t.Errorf("ParsePatch:\n got %s\nwant %s", a, b)
			}
		})
	}
}

// FuzzParsePatch: whatever the text, ParsePatch does not panic, and every line that
// names a file to Codex (a marker, blanks trimmed) names one of the files it returns,
// unless it refuses the patch.
func FuzzParsePatch(f *testing.F) {
	for _, s := range []string{
		"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: a\n*** Move to: ../b\n@@\n-x\n+y\n*** End Patch",
		"*** Begin Patch\n*** Delete File: .git/config\n*** Update File: x\n @@ *** Add File: /etc/y\n*** End Patch\n",
		"*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		files, err := ParsePatch(text)
		if err != nil {
			return
		}
		named := map[string]bool{}
		for _, pf := range files {
			named[pf.Path], named[pf.MoveTo] = true, true
		}
		for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
			m := strings.TrimSpace(line)
			for _, p := range []string{patchAdd, patchDelete, patchUpdate, patchMove} {
				if rest, ok := strings.CutPrefix(m, strings.TrimSpace(p)); ok && !named[strings.TrimSpace(rest)] {
					t.Fatalf("%q names %q, which ParsePatch left out: %+v", line, strings.TrimSpace(rest), files)
				}
			}
		}
	})
}

type codexBroker struct {
	decide func(api.Request) (api.Decision, error)
	asked  []api.Request
	after  []api.AfterToolUse
}

func (b *codexBroker) Await(ctx context.Context, r api.Request) (api.Decision, error) {
	b.asked = append(b.asked, r)
	if b.decide == nil {
		<-ctx.Done()
		return api.Decision{}, ctx.Err()
	}
	return b.decide(r)
}

func (b *codexBroker) After(_ context.Context, a api.AfterToolUse) error {
	b.after = append(b.after, a)
	return nil
}

// TestCodexHookFailsClosed: Codex 0.171 runs a call whose hook failed or answered
// nothing it reads, so every way the hook can end prints "{}" only when each file of
// the patch was allowed, and a denial otherwise — the broker's error, its deny, no answer
// within --wait, a grant Codex's own write cannot use, an unreadable event or patch, a
// panic.
func TestCodexHookFailsClosed(t *testing.T) {
	event := func(patch string) string {
		b, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/work/repo",
			"tool_name": "apply_patch", "tool_input": map[string]any{"command": patch}, "tool_use_id": "c1"})
		return string(b)
	}
	two := event("*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: /work/repo/.git/config\n@@\n+y\n*** End Patch\n")
	allow := func(api.Request) (api.Decision, error) { return api.Decision{Verdict: api.Allow}, nil }
	for _, tc := range []struct {
		name, in string
		decide   func(api.Request) (api.Decision, error)
		allowed  bool
		reason   string
		asked    int
		notRun   int
	}{
		{"all allowed", two, allow, true, "", 2, 0},
		{"second denied", two, func(r api.Request) (api.Decision, error) {
			if strings.Contains(string(r.Params), ".git") {
				return api.Decision{Verdict: api.Deny, Tier: "P1", Layer: "isolation"}, nil
			}
			return api.Decision{Verdict: api.Allow}, nil
		}, false, "Airlock blocked edit_file (/work/repo/.git/config)", 2, 1},
		{"broker error", two, func(api.Request) (api.Decision, error) { return api.Decision{}, errors.New("socket gone") }, false, "socket gone", 1, 0},
		{"no answer", two, nil, false, "nobody answered within", 1, 0},
		{"unanswered", two, func(api.Request) (api.Decision, error) {
			return api.Decision{Verdict: api.Ask, AnsweredBy: api.AnsweredExpired}, nil
		}, false, "nobody answered", 1, 0},
		{"grant", two, func(api.Request) (api.Decision, error) {
			return api.Decision{Verdict: api.Allow, Grant: &api.Grant{Writable: []string{"/etc"}}}, nil
		}, false, "which no answer widens", 1, 1},
		{"bad patch", event("rm -rf ~"), allow, false, "cannot say which files", 0, 0},
		{"bad event", "{", allow, false, "could not parse", 0, 0},
		{"panic", two, func(api.Request) (api.Decision, error) { panic("boom") }, false, "hook failed (boom)", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &codexBroker{decide: tc.decide}
			var out bytes.Buffer
			h := CodexHook{Broker: b, Wait: 3 * time.Second}
			if err := h.Run(context.Background(), strings.NewReader(tc.in), &out); err != nil {
				t.Fatal(err)
			}
			if tc.allowed {
				if out.String() != "{}\n" {
					t.Errorf("allowed patch answered %q", out.String())
				}
			} else {
				var d codexDeny
				if err := json.Unmarshal(out.Bytes(), &d); err != nil || d.HookSpecificOutput.PermissionDecision != "deny" ||
					d.HookSpecificOutput.HookEventName != "PreToolUse" || !strings.Contains(d.HookSpecificOutput.PermissionDecisionReason, tc.reason) {
					t.Errorf("answer %q (%v), want a deny saying %q", out.String(), err, tc.reason)
				}
			}
			if len(b.asked) != tc.asked {
				t.Errorf("asked %d times, want %d", len(b.asked), tc.asked)
			}
			for _, r := range b.asked {
				if r.Context.Caller.Description != "hook:codex" || r.Context.Session != "codex:s" || r.Timeout <= 0 || r.Timeout > 3*time.Second {
					t.Errorf("request %+v: want caller hook:codex, session codex:s, a timeout within the wait", r.Context)
				}
			}
			if len(b.after) != tc.notRun {
				t.Errorf("%d allowed files marked not applied, want %d", len(b.after), tc.notRun)
			}
			for _, a := range b.after {
				if a.Outcome.Ran || !strings.HasPrefix(a.Outcome.Error, "not applied") {
					t.Errorf("outcome %+v, want not applied", a.Outcome)
				}
			}
		})
	}
}

// TestMapCodexPatch: relative paths are the event's cwd's; a move asks about both paths.
func TestMapCodexPatch(t *testing.T) {
	calls, err := MapCodexPatch("*** Begin Patch\n*** Update File: a\n*** Move to: ../../etc/b\n@@\n-x\n+y\n*** Delete File: /w/r/c\n*** End Patch\n", "/w/r")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, c := range calls {
		got = append(got, c.Tool+" "+subjectOf(c))
	}
	want := []string{"edit_file /w/r/a", "write_file /etc/b", "edit_file /w/r/c"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", got, want)
	}
}
