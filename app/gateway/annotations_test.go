package gateway

import (
	"context"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// TestToolAnnotations: what the MCP server tells clients about each tool. A hint left out
// means the spec's default (destructive, open world), which made clients treat ops_plan,
// a record in Airlock, as destructive. Every tool says all four, and says them right.
func TestToolAnnotations(t *testing.T) {
	ws := t.TempDir()
	cs := connect(t, Options{Policy: testPolicy(t, ws), Broker: &recordingBroker{}})
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type hints struct{ readOnly, destructive, idempotent, openWorld bool }
	want := map[string]hints{
		api.ToolReadFile:    {readOnly: true, idempotent: true},
		api.ToolListDir:     {readOnly: true, idempotent: true},
		api.ToolSearchFiles: {readOnly: true, idempotent: true},
		api.ToolWriteFile:   {destructive: true, idempotent: true},
		api.ToolEditFile:    {destructive: true},
		api.ToolBash:        {destructive: true, openWorld: true},
		api.ToolWebFetch:    {readOnly: true, idempotent: true, openWorld: true},
		api.ToolOpsPlan:     {},
		api.ToolOpsDiff:     {},
		api.ToolOpsApprove:  {},
		api.ToolOpsApply:    {destructive: true, openWorld: true},
		api.ToolOpsVerify:   {idempotent: true, openWorld: true}, // a commit-confirm plan's verify sends its confirm
		api.ToolOpsJournal:  {readOnly: true, idempotent: true},
	}
	seen := map[string]bool{}
	for _, tool := range list.Tools {
		seen[tool.Name] = true
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("tool %s has no expected annotations in this test", tool.Name)
			continue
		}
		a := tool.Annotations
		if a == nil || a.Title == "" || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s leaves hints to the spec's defaults: %+v", tool.Name, a)
			continue
		}
		got := hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
		if got != w {
			t.Errorf("%s: hints %+v, want %+v", tool.Name, got, w)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("tool %s is not served", name)
		}
	}
	if len(ServedTools) != len(seen) {
		t.Errorf("ServedTools %v, the server lists %v", ServedTools, seen)
	}
	for _, name := range ServedTools {
		if !seen[name] {
			t.Errorf("ServedTools names %s, which the server does not serve", name)
		}
	}
}
