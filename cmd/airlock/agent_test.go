package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// The agent commands run in airlock-agent, which airlock execs when it finds it beside
// itself (withAgent).

// `airlock hook claude` reaches the hook adapter in airlock-agent: with no core running
// it answers ask with the adapter's reason, not the "could not answer" of an airlock
// that found no agent beside it (TestHookWithoutTheAgentAsks).
func TestHookRunsInTheAgent(t *testing.T) {
	in := newInstance(t)
	in.bin = withAgent
	c := in.cmd("hook", "claude", "--wait", "1s")
	c.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf ~"},"cwd":"/tmp","session_id":"s"}`)
	out, err := c.Output()
	var v struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err != nil || json.Unmarshal(out, &v) != nil {
		t.Fatalf("hook claude: %v, stdout %q", err, out)
	}
	if got := v.HookSpecificOutput; got.PermissionDecision != "ask" || !strings.Contains(got.PermissionDecisionReason, "Airlock could not decide") ||
		!strings.Contains(got.PermissionDecisionReason, "no Airlock app or daemon is running") {
		t.Fatalf("hook claude answered %+v, want ask from the adapter because no core runs", got)
	}
}

// The agent commands parse their own flags and fail as the rest of the command line does.
func TestAgentCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // a line the output must hold
		stderr string
	}{
		{"mcp help", []string{"mcp", "--help"}, 0, "airlock mcp [--cwd DIR] [--department NAME] [--posture P] [--http 127.0.0.1:PORT] [flags]", ""},
		{"mcp help shows the token command", []string{"mcp", "--help"}, 0, "  token       Print the bearer token", ""},
		{"mcp help shows the sandbox flags", []string{"mcp", "--help"}, 0, "--execution-mode string", ""},
		{"mcp help shows the global flag", []string{"mcp", "--help"}, 0, "--json", ""},
		{"hook help", []string{"hook", "claude", "--help"}, 0, "--mcp-server string", ""},
		{"unknown flag", []string{"mcp", "--bogus"}, 2, "", "airlock: unknown flag: --bogus"},
		{"unknown posture", []string{"mcp", "--posture", "x"}, 1, "", `airlock: unknown posture "x": the postures are cloudops (or none)`},
		{"argument", []string{"hook", "claude", "extra"}, 2, "", `airlock: unknown command "extra" for "airlock hook claude"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newInstance(t)
			in.bin = withAgent
			out, stderr, code := in.run(tc.args...)
			if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("airlock %s: exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)",
					strings.Join(tc.args, " "), code, tc.code, out, tc.stdout, stderr, tc.stderr)
			}
		})
	}
}

// airlock-agent is the one executable of the command line that links the MCP SDK
// (TestCLILinksNoCore keeps it out of airlock).
func TestAgentLinksTheMCPSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../airlock-agent").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "github.com/modelcontextprotocol/go-sdk/mcp\n") {
		t.Fatal("airlock-agent does not link the MCP SDK: the MCP server is not in it")
	}
}
