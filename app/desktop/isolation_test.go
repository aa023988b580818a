package desktop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-app/airlock/permission"
)

// The core's isolation check knows an MCP session's extra writable roots (`airlock mcp
// --writable-root`): a write there is an ordinary P1 request, not a sandbox escalation;
// without the root it is one.
func TestIsolationKnowsTheSessionsWritableRoots(t *testing.T) {
	core, home := openCore(t)
	ws, extra := filepath.Join(home, "ws"), filepath.Join(home, "shared-cache")
	for _, d := range []string{ws, extra} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	params, _ := json.Marshal(map[string]string{"path": filepath.Join(extra, "cache.bin"), "content": "x"})
	req := permission.Request{Tool: "write_file", Params: params, Context: permission.Context{Cwd: ws, Workspace: ws,
		Policy: permission.PolicySummary{Mode: "workspace-write"}}}
	ctx := context.Background()
	if d := core.Broker.Check(ctx, req).Decision; d.Kind != permission.KindIsolationEscalation {
		t.Fatalf("write outside the workspace without the root: %+v; want an isolation escalation", d)
	}
	req.Context.Policy.WritableRoots = []string{ws, extra}
	if d := core.Broker.Check(ctx, req).Decision; d.Kind == permission.KindIsolationEscalation || d.InteractiveOnly {
		t.Fatalf("write in the session's writable root: %+v; want an ordinary request", d)
	}
}
