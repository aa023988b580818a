package gateway

import (
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// TestBashRunsUnderTheLimits: an MCP bash call runs in a cgroup of its own with the
// session's [limits]; one that reaches the pids limit is ended with everything it
// started, and the answer says which limit.
func TestBashRunsUnderTheLimits(t *testing.T) {
	ws := t.TempDir()
	pol := testPolicy(t, ws)
	pol.Limits = sandbox.Limits{Memory: "256MiB", Pids: 16, CPU: "100%"}
	allow := &recordingBroker{decide: func(r api.Request) api.Decision {
		return api.Decision{Verdict: api.Allow, Tier: "P0", Layer: "tier", Params: r.Params}
	}}
	cs := connect(t, Options{Policy: pol, Broker: allow})

	res, text := callText(t, cs, api.ToolBash, map[string]any{"command": "grep -E 'pids|memory' /proc/self/cgroup"})
	if res.IsError || !strings.Contains(text, "airlock-run-") {
		t.Fatalf("the command ran outside a cgroup of its own: %q", text)
	}
	res, text = callText(t, cs, api.ToolBash, map[string]any{"command": "for i in $(seq 64); do sleep 30 & done; wait"})
	if !res.IsError || !strings.Contains(text, "ended: the pids limit (16) was reached") {
		t.Fatalf("64 processes under pids = 16: %v %q", res.IsError, text)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["limit"] != sandbox.LimitPids {
		t.Fatalf("structured content %v, want limit pids", res.StructuredContent)
	}
}
