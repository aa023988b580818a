package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
