package desktop

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/permission"
)

func TestApprovalViewCarriesWhatThePersonNeeds(t *testing.T) {
	created := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	p := permission.PendingRequest{
		ID: "r1", Summary: "git push --force origin main", Tier: permission.P2, Kind: "bash_destructive",
		InteractiveOnly: true, Reasons: []string{"data loss"}, CreatedAt: created,
		Request: permission.Request{Tool: "bash", Params: json.RawMessage(`{"command":"git push --force origin main"}`),
			Context: permission.Context{Run: "412", Task: "release-train", Department: "platform", Cwd: "/home/ana/code/platform",
				Policy: permission.PolicySummary{Mode: "workspace-write", Network: api.NetworkOn}}},
	}
	got := approvalView(p)
	want := api.Approval{ID: "r1", Tool: "bash", Summary: "git push --force origin main", Tier: "P2", Kind: "bash_destructive",
		InteractiveOnly: true, Reasons: []string{"data loss"}, Scopes: []string{}, Params: "{\n  \"command\": \"git push --force origin main\"\n}",
		CreatedAt: created, Run: "412", Task: "release-train",
		Department: "platform", Cwd: "/home/ana/code/platform", Mode: "workspace-write", Network: api.NetworkOn}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("view = %s\nwant   %s", gotJSON, wantJSON)
	}
}

// No reasons is an empty list, so the window never sees null where it expects a list.
func TestApprovalViewReasonsNeverNull(t *testing.T) {
	raw, _ := json.Marshal(approvalView(permission.PendingRequest{ID: "r2"}))
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if r, ok := m["reasons"].([]any); !ok || len(r) != 0 {
		t.Errorf("reasons = %#v, want []", m["reasons"])
	}
}
