package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// hookDecision runs `airlock hook claude --wait wait` on one PreToolUse of tool with
// input (in dir) and returns Claude Code's decision and its reason.
func (in *instance) hookDecision(wait, dir, tool, input string) (string, string) {
	in.t.Helper()
	return in.hookDecisionWith(wait, dir, tool, input, "")
}

// hookDecisionWith is hookDecision with --profile profile when profile is set.
func (in *instance) hookDecisionWith(wait, dir, tool, input, profile string) (string, string) {
	in.t.Helper()
	bin := in.bin
	in.bin = withAgent // the hook runs in airlock-agent
	args := []string{"hook", "claude", "--wait", wait}
	if profile != "" {
		args = append(args, "--profile", profile)
	}
	c := in.cmd(args...)
	in.bin = bin
	c.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"cwd":"` + dir + `","session_id":"s-web"}`)
	out, err := c.Output()
	var v struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err != nil || json.Unmarshal(out, &v) != nil {
		in.t.Fatalf("hook claude %s: %v, stdout %q", tool, err, out)
	}
	return v.HookSpecificOutput.PermissionDecision, v.HookSpecificOutput.PermissionDecisionReason
}

// TestWebSearchIsANetworkTool: Claude Code's WebSearch through the hook is governed by
// the network setting as web_fetch is: refused with the network off (not a plain P1 that
// approval_policy never lets through), allowed by domain under an allowlist (its
// allowed_domains, each in [network] allowed_domains; a search of the whole web names
// none and is refused), and a P1 like any other with the network on.
func TestWebSearchIsANetworkTool(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "airlock-websearch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	const allowlist = "approval_policy = \"never\"\n[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n[network]\nallowed_domains = [\"docs.example.com\"]\ndenied_domains = [\"bad.example.com\"]\n"
	for _, tc := range []struct {
		name, config, tool, input string
		decision, reason          string
	}{
		{"off", "approval_policy = \"never\"\n", "WebSearch", `{"query":"airlock"}`, "deny", "network access is off"},
		{"off, with domains", "approval_policy = \"never\"\n", "WebSearch", `{"query":"airlock","allowed_domains":["docs.example.com"]}`, "deny", "network access is off"},
		{"a code search off", "approval_policy = \"never\"\n", "mcp__github__search_code", `{"q":"airlock"}`, "deny", "network access is off"},
		{"allowlist, allowed", allowlist, "WebSearch", `{"query":"airlock","allowed_domains":["docs.example.com"]}`, "allow", ""},
		{"allowlist, unlisted", allowlist, "WebSearch", `{"query":"airlock","allowed_domains":["other.example.org"]}`, "deny", "other.example.org is not in [network] allowed_domains"},
		{"allowlist, denied", allowlist, "WebSearch", `{"query":"airlock","allowed_domains":["bad.example.com"]}`, "deny", "bad.example.com is in [network] denied_domains"},
		{"allowlist, the whole web", allowlist, "WebSearch", `{"query":"airlock"}`, "deny", "names no domain"},
		{"allowlist, a fetch", allowlist, "WebFetch", `{"url":"https://docs.example.com/x","prompt":"p"}`, "allow", ""},
		{"on", "approval_policy = \"never\"\n[sandbox_workspace_write]\nnetwork_access = true\n", "WebSearch", `{"query":"airlock"}`, "allow", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newInstance(t)
			in.writeConfig(tc.config)
			in.startDaemon()
			decision, reason := in.hookDecision("5s", dir, tc.tool, tc.input)
			if decision != tc.decision || !strings.Contains(reason, tc.reason) {
				t.Fatalf("%s %s: %s %q, want %s with %q", tc.tool, tc.input, decision, reason, tc.decision, tc.reason)
			}
		})
	}
}
