package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// testAirlock is the airlock the unit tests' hook names; nothing runs it.
const testAirlock = "/opt/air lock/airlock"

// testBash is a Bash sandbox under workspace-write with the network off.
func testBash() BashSandbox {
	return BashSandbox{Airlock: testAirlock, Policy: func(cwd string) (sandbox.Policy, error) {
		return sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOff, Cwd: cwd}, nil
	}}
}

func bashHook(b Broker, bash BashSandbox) ClaudeHook {
	return ClaudeHook{Broker: b, Wait: time.Second, MCPServer: "airlock", ServerBeside: func() bool { return true },
		Headless: func() bool { return false }, Bash: bash}
}

func hookAnswer(t *testing.T, h ClaudeHook, event string) ClaudeDecision {
	t.Helper()
	var out bytes.Buffer
	if err := h.Run(context.Background(), strings.NewReader(event), &out); err != nil {
		t.Fatal(err)
	}
	var o ClaudeOutput
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	return o.HookSpecificOutput
}

// TestClaudeHookBashRunsInTheSandbox: every answer that lets Claude Code's Bash run —
// allowed, handed over to Claude Code's prompt, or Airlock unreachable — rewrites the
// command to run through `airlock exec` under the session's policy in the call's
// directory, the other input kept; a person's one-time grant goes along, exactly; the
// broker judged the call by that policy; and the reason says where it runs and what
// allowing lifts. A deny rewrites nothing.
func TestClaudeHookBashRunsInTheSandbox(t *testing.T) {
	grant := &api.Grant{Writable: []string{"/etc/hosts"}, Network: true}
	tests := []struct {
		name      string
		d         api.Decision
		err       error
		verdict   api.Verdict
		grantArgs []string
		reason    string
	}{
		{"allowed", api.Decision{Verdict: api.Allow, Tier: "P1", Layer: "grant"}, nil, api.Allow, nil, "runs in Airlock's sandbox (airlock exec, workspace-write, network off)"},
		{"handed over", api.Decision{Verdict: api.Ask, AnsweredBy: api.AnsweredHandedOver, Reasons: []string{"P1"}}, nil, api.Ask, nil, "stay out of its reach"},
		{"Airlock down", api.Decision{}, errors.New("no socket"), api.Ask, nil, "runs in Airlock's sandbox"},
		{"escalation allowed once", api.Decision{Verdict: api.Allow, Tier: "P2", Layer: "person", Grant: grant}, nil, api.Allow,
			[]string{"--grant-writable", "/etc/hosts", "--grant-network"}, "allowing lifts only /etc/hosts writable and the network on, for this one call"},
		{"escalation handed over", api.Decision{Verdict: api.Ask, AnsweredBy: api.AnsweredHandedOver, Grant: grant,
			Reasons: []string{"writes /etc/hosts; allowing it once gives " + grant.String()}}, nil, api.Ask,
			[]string{"--grant-writable", "/etc/hosts", "--grant-network"}, "allowing lifts only /etc/hosts writable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fb := &fakeBroker{d: tt.d, err: tt.err}
			got := hookAnswer(t, bashHook(fb, testBash()),
				`{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/w/sub dir","tool_input":{"command":"make test","description":"d","timeout":5000}}`)
			if got.PermissionDecision != tt.verdict || !strings.Contains(got.PermissionDecisionReason, tt.reason) {
				t.Fatalf("answer %s %q, want %s with %q", got.PermissionDecision, got.PermissionDecisionReason, tt.verdict, tt.reason)
			}
			cmd, _ := got.UpdatedInput["command"].(string)
			argv, ok := splitShellJoin(cmd)
			want := append([]string{testAirlock, "exec", "--sandbox=workspace-write", "--network=off", "--cwd", "/w/sub dir"}, tt.grantArgs...)
			want = append(want, "--", "bash", "-c", "make test")
			if !ok || !slices.Equal(argv, want) {
				t.Fatalf("updatedInput.command = %q\n argv %q\n want %q", cmd, argv, want)
			}
			if got.UpdatedInput["description"] != "d" || got.UpdatedInput["timeout"] != float64(5000) {
				t.Errorf("the rest of the input was not kept: %v", got.UpdatedInput)
			}
			if tt.err == nil {
				if p := fb.got[0].Context.Policy; p.Mode != "workspace-write" || p.Network != api.NetworkOff {
					t.Errorf("the broker judged the call by %+v, not by the sandbox's policy", p)
				}
			}
		})
	}
	t.Run("denied", func(t *testing.T) {
		fb := &fakeBroker{d: api.Decision{Verdict: api.Deny, Tier: "P2", Layer: "rule"}}
		got := hookAnswer(t, bashHook(fb, testBash()), `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/w","tool_input":{"command":"rm -rf ~"}}`)
		if got.PermissionDecision != api.Deny || got.UpdatedInput != nil {
			t.Fatalf("deny: %+v", got)
		}
	})
	t.Run("no sandbox to run it in", func(t *testing.T) {
		fb := &fakeBroker{d: api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier"}}
		got := hookAnswer(t, bashHook(fb, BashSandbox{Err: errors.New("airlock is not installed beside /x/airlock-agent")}),
			`{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/w","tool_input":{"command":"ls"}}`)
		if got.PermissionDecision != api.Deny || got.UpdatedInput != nil || !strings.Contains(got.PermissionDecisionReason, "not installed beside") ||
			!strings.Contains(got.PermissionDecisionReason, UnconfinedSetting) {
			t.Fatalf("a hook that cannot confine the command: %+v", got)
		}
	})
}

// TestClaudeHookBashUnconfined: only the explicit setting leaves the command as it is,
// and then every answer says in capitals that it runs on the host, and an escalation's
// text no longer promises a grant that nothing enforces.
func TestClaudeHookBashUnconfined(t *testing.T) {
	grant := &api.Grant{Writable: []string{"/etc"}}
	fb := &fakeBroker{d: api.Decision{Verdict: api.Ask, AnsweredBy: api.AnsweredHandedOver, Grant: grant,
		Reasons: []string{"writes /etc/x; allowing it once gives " + grant.String()}}}
	got := hookAnswer(t, bashHook(fb, BashSandbox{Unconfined: true}), `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/w","tool_input":{"command":"touch /etc/x"}}`)
	r := got.PermissionDecisionReason
	if got.UpdatedInput != nil || !strings.Contains(r, "UNCONFINED") || !strings.Contains(r, UnconfinedSetting) ||
		strings.Contains(r, "for this one call") || !strings.Contains(r, "runs the whole command on your machine") {
		t.Fatalf("unconfined: %+v", got)
	}
}

// TestClaudeHookBashQuotingRoundTrips: the rewritten line, run by bash as Claude Code
// runs it, hands the very command to `bash -c` — quotes, newlines, heredocs, $(), globs,
// backslashes — and its output and exit status come back unchanged (a stand-in airlock
// that runs what follows "--" stands for exec's sandbox here; the real one is tested
// with the real Claude Code in test/agents-e2e).
func TestClaudeHookBashQuotingRoundTrips(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "air lock's", "airlock")
	if err := os.MkdirAll(filepath.Dir(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nwhile [ \"$#\" -gt 0 ] && [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a b.txt"), []byte("x"), 0o644)
	bash := testBash()
	bash.Airlock = fake
	for _, command := range []string{
		`echo hi`,
		`echo "it's" 'a "quote"' it\'s`,
		"printf '%s\\n' one\ntwo=$(echo three)\necho \"$two\"",
		"cat <<'EOF'\n$HOME 'x' \"y\" `z`\nEOF\ncat <<EOF\n$((6*7)) $(echo sub)\nEOF",
		`echo $(echo $(printf '\x27nested\x27')) "$(printf '%s' "a  b")"`,
		`ls *.txt; echo a\\b '\n' $'tab\there'`,
		`echo out; echo err >&2; exit 7`,
		`false || { echo or; (exit 3); }`,
		"echo 'unicode: é ✓' ; echo !x",
	} {
		fb := &fakeBroker{d: api.Decision{Verdict: api.Allow, Tier: "P1", Layer: "grant"}}
		ev, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": dir, "tool_input": map[string]any{"command": command}})
		got := hookAnswer(t, bashHook(fb, bash), string(ev))
		line, _ := got.UpdatedInput["command"].(string)
		if inner, ok := unwrapBash(line, fake); !ok || inner != command {
			t.Fatalf("%q: updatedInput %q unwraps to %q (%v)", command, line, inner, ok)
		}
		wantOut, wantCode := runBash(t, dir, command)
		gotOut, gotCode := runBash(t, dir, line)
		if gotOut != wantOut || gotCode != wantCode {
			t.Errorf("%q:\n through the hook: %q exit %d\n as written:       %q exit %d", command, gotOut, gotCode, wantOut, wantCode)
		}
	}
}

func runBash(t *testing.T, dir, line string) (string, int) {
	t.Helper()
	c := exec.Command("bash", "-c", line)
	c.Dir = dir
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), c.ProcessState.ExitCode()
}

// TestClaudeHookBashAuditsTheCommand: what Claude Code reports after the call (the
// rewritten input) is audited as the command it was asked to run.
func TestClaudeHookBashAuditsTheCommand(t *testing.T) {
	h := bashHook(&fakeBroker{}, testBash())
	line := h.wrap(confinedBash{policy: sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite}}, "/w", "echo 'x'\nls", nil)
	ev, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": "/w", "tool_input": map[string]any{"command": line}})
	fb := &fakeBroker{}
	h.Broker = fb
	if err := h.Run(context.Background(), bytes.NewReader(ev), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if len(fb.after) != 1 || !strings.Contains(string(fb.after[0].Request.Params), `"echo 'x'\nls"`) {
		t.Fatalf("audited %+v", fb.after)
	}
}

// FuzzSplitShellJoin: splitShellJoin undoes api.ShellJoin for every argv.
func FuzzSplitShellJoin(f *testing.F) {
	for _, s := range []string{"", "a b", "it's", "\n", "'\\''", "$(x)", "a\x00b"} {
		f.Add(s, "-c")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		argv := []string{"airlock", a, "--", b, a + b}
		got, ok := splitShellJoin(api.ShellJoin(argv))
		if !ok || !slices.Equal(got, argv) {
			t.Fatalf("%q → %q → %q (%v)", argv, api.ShellJoin(argv), got, ok)
		}
	})
}
