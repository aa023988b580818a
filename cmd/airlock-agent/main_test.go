package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests build airlock and airlock-agent side by side, as `make build-cli` does, and
// drive the agent commands through `airlock`, which execs airlock-agent for them.

var airlock string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "airlock-agent-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	airlock = filepath.Join(dir, "airlock")
	for out, pkg := range map[string]string{airlock: "../airlock", filepath.Join(dir, "airlock-agent"): "."} {
		build := exec.Command("go", "build", "-o", out, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", pkg, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	c := exec.Command(airlock, args...)
	c.Env = append(os.Environ(), "AIRLOCK_HOME="+filepath.Join(t.TempDir(), "home"))
	c.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// `airlock hook claude` reaches the hook adapter in airlock-agent: with no core running
// it answers ask with the adapter's reason, not the "could not answer" of an `airlock`
// that found no agent beside it.
func TestHookRunsInTheAgent(t *testing.T) {
	out, stderr, code := run(t, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf ~"},"cwd":"/tmp","session_id":"s"}`,
		"hook", "claude", "--wait", "1s")
	var v struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("hook claude: exit %d, stdout %q, stderr %q", code, out, stderr)
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
		{"mcp help", []string{"mcp", "--help"}, 0, "airlock mcp [--cwd DIR] [--department NAME] [--posture P] [flags]", ""},
		{"mcp help shows the sandbox flags", []string{"mcp", "--help"}, 0, "--execution-mode string", ""},
		{"mcp help shows the global flag", []string{"mcp", "--help"}, 0, "--json", ""},
		{"hook help", []string{"hook", "claude", "--help"}, 0, "--mcp-server string", ""},
		{"unknown flag", []string{"mcp", "--bogus"}, 2, "", "airlock: unknown flag: --bogus"},
		{"unknown posture", []string{"mcp", "--posture", "x"}, 1, "", `airlock: unknown posture "x": the postures are cloudops (or none)`},
		{"argument", []string{"hook", "claude", "extra"}, 2, "", `airlock: unknown command "extra" for "airlock hook claude"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := run(t, "", tc.args...)
			if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("airlock %s: exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)",
					strings.Join(tc.args, " "), code, tc.code, out, tc.stdout, stderr, tc.stderr)
			}
		})
	}
}

// airlock-agent is the one executable of the command line that links the MCP SDK.
func TestAgentLinksTheMCPSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "github.com/modelcontextprotocol/go-sdk/mcp\n") {
		t.Fatal("airlock-agent does not link the MCP SDK: the MCP server is not in it")
	}
}
