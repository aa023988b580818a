package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/internal/vartmp"
)

// needJournalKey skips without a Secret Service (the ops journal's key lives in the
// keyring, with no file fallback); run under scripts/with-test-keyring.sh.
// AIRLOCK_REQUIRE_KEYRING=1 makes that a failure.
func needJournalKey(t *testing.T, c *Core) {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("AIRLOCK_REQUIRE_KEYRING") == "1" {
		skip = t.Fatalf
	}
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		skip("no session bus (run under scripts/with-test-keyring.sh)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Secrets.Check(ctx); err != nil {
		skip("no Secret Service answers (run under scripts/with-test-keyring.sh): %v", err)
	}
}

// Every ops route, called as the CLI and the MCP server call it (localapi.Call with the
// route and types of package api), walks a plan from its file to a rejection and the
// journal that records it: the body's fields, the query's and the answers' agree
// between the client and the core because both are api's.
func TestOpsRoutesThroughTheTypedClient(t *testing.T) {
	base := vartmp.Dir(t, "ops-routes-")
	c, _ := runCoreAt(t, base)
	needJournalKey(t, c)
	work := filepath.Join(base, "work")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "app.conf"), []byte("port=80\n"), 0o644)
	os.WriteFile(filepath.Join(work, "new.conf"), []byte("port=8080\n"), 0o644)
	plan, _ := json.Marshal(map[string]any{
		"target": map[string]any{"provider": "file", "device": "app.conf"}, "intent": "serve on 8080", "workdir": ".",
		"apply":  map[string]any{"argv": []string{"cp", "new.conf", "app.conf"}},
		"inputs": []string{"new.conf"},
		"diff":   map[string]any{"argv": []string{"diff", "-u", "app.conf", "new.conf"}},
		"steps":  []map[string]any{{"description": "cp", "effect": "replace file", "reversibility": "reversible", "blast_radius": "low"}},
		"verify": []map[string]any{{"command": "cat app.conf", "expect_text": "8080"}},
	})
	ctx := context.Background()
	cl := localapi.NewClient(c.Paths.Socket)

	p, err := localapi.Call(ctx, cl, api.OpsCreatePlan, api.PlanSubmission{Data: string(plan), BaseDir: work, By: "test"})
	if err != nil {
		t.Fatal(err)
	}
	// The relative workdir is the base_dir's: the core read the body's field.
	if p.Status != api.PlanDraft || p.Plan.Workdir != work || p.CreatedBy != "test" || len(p.Hash) != 64 {
		t.Fatalf("opened %+v", p)
	}
	for _, tt := range []struct {
		filter api.PlanFilter
		want   bool
	}{
		{api.PlanFilter{}, true},
		{api.PlanFilter{Project: p.Project, Status: api.PlanDraft}, true},
		{api.PlanFilter{Status: api.PlanApplied}, false},
		{api.PlanFilter{Project: "name:other"}, false},
	} {
		list, err := localapi.Call(ctx, cl, api.OpsListPlans, tt.filter)
		found := slices.ContainsFunc(list, func(s api.PlanSummary) bool { return s.ID == p.ID })
		if err != nil || found != tt.want {
			t.Errorf("list %+v = %+v, %v; want the plan %v", tt.filter, list, err, tt.want)
		}
	}
	if got, err := localapi.Call(ctx, cl, api.OpsGetPlan, api.None{}, p.ID); err != nil || got.Hash != p.Hash || !got.Intact {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if _, err := localapi.Call(ctx, cl, api.OpsGetPlan, api.None{}, "op-missing"); !errors.Is(err, &api.Error{Code: api.CodeNotFound}) {
		t.Fatalf("get a missing plan = %v; want not_found", err)
	}
	d, err := localapi.Call(ctx, cl, api.OpsDiff, api.DiffInput{Run: true, By: "test"}, p.ID)
	if err != nil || d.Status != api.PlanDiffed || d.Diff == nil || d.PlanID != p.ID {
		t.Fatalf("diff = %+v, %v", d, err)
	}
	pr, err := localapi.Call(ctx, cl, api.OpsApprovalPrompt, api.None{}, p.ID)
	if err != nil || pr.Hash != p.Hash || pr.ApplyCommand != "cp new.conf app.conf" {
		t.Fatalf("prompt = %+v, %v", pr, err)
	}
	// Over the API without proof of a person, nothing is approved.
	if _, err := localapi.Call(ctx, cl, api.OpsApprove, api.ApproveBody{ConfirmHashPrefix: p.Hash[:8]}, p.ID); !errors.Is(err, &api.Error{Code: api.CodeNotProven}) &&
		!errors.Is(err, &api.Error{Code: api.CodeNotInteractive}) {
		t.Fatalf("approve without proof = %v", err)
	}
	if _, err := localapi.Call(ctx, cl, api.OpsApply, api.ApplyInput{Token: "not-a-token"}, p.ID); !errors.Is(err, &api.Error{Code: api.CodeBadToken}) {
		t.Fatalf("apply with a made-up token = %v; want bad_token", err)
	}
	rj, err := localapi.Call(ctx, cl, api.OpsReject, api.RejectBody{Reason: "not tonight"}, p.ID)
	if err != nil || rj.Status != api.PlanRejected {
		t.Fatalf("reject = %+v, %v", rj, err)
	}
	if _, err := localapi.Call(ctx, cl, api.OpsVerify, api.VerifyInput{}, p.ID); !errors.Is(err, &api.Error{Code: api.CodeWrongStatus}) {
		t.Fatalf("verify a rejected plan = %v; want wrong_status", err)
	}
	// Without a project the plan's is used; the plan_id and verify query fields arrive.
	j, err := localapi.Call(ctx, cl, api.OpsJournal, api.JournalInput{PlanID: p.ID, Verify: true})
	if err != nil || j.Project != p.Project || j.Verification == nil || !j.Verification.OK {
		t.Fatalf("journal = %+v, %v", j, err)
	}
	var events []string
	for _, e := range j.Entries {
		if e.PlanID != p.ID {
			t.Errorf("entry of another plan: %+v", e)
		}
		events = append(events, e.Event)
		if e.Event == "rejected" {
			var detail struct {
				Reason string `json:"reason"`
			}
			if json.Unmarshal(e.Detail, &detail) != nil || detail.Reason != "not tonight" || e.Actor != "cli" {
				t.Errorf("rejected entry = %+v", e)
			}
		}
	}
	if !slices.Contains(events, "planned") || !slices.Contains(events, "diff_attached") || !slices.Contains(events, "rejected") {
		t.Errorf("journal events = %v", events)
	}
	only, err := localapi.Call(ctx, cl, api.OpsJournal, api.JournalInput{Project: p.Project, Status: api.PlanRejected})
	if err != nil || len(only.Entries) != 1 || only.Entries[0].Event != "rejected" || only.Verification != nil {
		t.Fatalf("journal of rejected entries = %+v, %v", only, err)
	}
	projects, err := localapi.Call(ctx, cl, api.OpsProjects, api.None{})
	if err != nil || !slices.Contains(projects, p.Project) {
		t.Fatalf("projects = %v, %v", projects, err)
	}
}
