package permission

import (
	"context"
	"errors"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// TestNothingButAPersonApprovesInteractiveOnly is the proof that `allow *` rules, the
// `never` policy, an auto reviewer that approves everything, and remembered grants
// still cannot approve an interactive-only request.
func TestNothingButAPersonApprovesInteractiveOnly(t *testing.T) {
	approveAll := script(t, "yes-reviewer", `cat >/dev/null; echo '{"decision":"allow","risk":"low","rationale":"lgtm"}'`)
	permissive := Settings{
		ApprovalsReviewer: "auto_review",
		Reviewer:          ReviewerSection{Command: []string{approveAll}},
		Permission: PermissionSection{
			Tiers: map[string]string{"bash": "P0", "ops_approve": "P0", "authorize_directory": "P0", "write_file": "P0"},
			Rules: []RuleSetting{{Tool: "*", Pattern: "*", Action: "allow"}, {Tool: "bash", Pattern: "*", Action: "allow"}},
		},
	}
	interactiveOnly := func() []Request {
		esc := Request{Tool: ToolWriteFile, Params: params("path", "/etc/hosts"), Escalation: &Escalation{Reason: "write /etc/hosts"}}
		return []Request{
			bash("rm -rf ~"),
			bash("sudo env -S 'A=1' timeout 5 sh -c 'git push --force'"),
			bash("kubectl delete ns prod"),
			bash("airlock approvals allow req_123 --always"),
			bash("echo 'approval_policy = \"never\"' >> ~/.config/airlock/config.toml"),
			{Tool: ToolOpsApprove, Params: params("plan_id", "p1")},
			{Tool: ToolAuthorizeDirectory, Params: params("path", "/")},
			esc,
		}
	}
	ctx := context.Background()

	// never: denied at once, with the reason.
	never := permissive
	never.ApprovalPolicy = "never"
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, never))
	for _, req := range interactiveOnly() {
		req.Context.Session, req.Context.Department = "s1", "dev"
		if _, err := b.Grants().Add(ctx, api.GrantRecord{Tool: req.Tool, Pattern: "*", Scope: ScopeAlways, Department: "dev"}); err != nil {
			t.Fatal(err)
		}
		d, err := b.Await(ctx, req)
		if err != nil || d.Verdict != Deny || !d.InteractiveOnly || d.Layer != LayerPolicy {
			t.Errorf("never + allow * + auto_review: %s %s = %+v (%v)", req.Tool, req.Subject(), d, err)
		}
	}

	// Any other policy: it asks; the reviewer is not consulted; only a person's answer allows.
	for _, pol := range []string{"untrusted", "on-request", "on-failure"} {
		s := permissive
		s.ApprovalPolicy = pol
		b, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, s))
		for _, req := range interactiveOnly() {
			req.Context.Session, req.Context.Department = "s1", "dev"
			req.Context.Policy.Mode = "workspace-write"
			b.Grants().Add(ctx, api.GrantRecord{Tool: req.Tool, Pattern: req.Subject(), Scope: ScopeAlways, Department: "dev"})
			p, ch := ask(t, b, ev, req)
			if !p.InteractiveOnly {
				t.Fatalf("%s: %s %s not interactive-only: %+v", pol, req.Tool, req.Subject(), p)
			}
			for _, a := range []Answer{{Allow: true, By: ByAPI}, {Allow: true, By: ByTray, Interactive: true}, {Allow: true, By: ByNotification, Interactive: true}} {
				if _, err := b.Answer(ctx, p.ID, a); err == nil {
					t.Fatalf("%s: non-person answer %+v accepted for %s", pol, a, req.Subject())
				} else if a.By == ByAPI && !errors.Is(err, ErrInteractiveOnly) {
					t.Fatalf("%s: wrong error %v", pol, err)
				}
			}
			if _, err := b.Answer(ctx, p.ID, Answer{Allow: true, By: ByWindow, Interactive: true}); err != nil {
				t.Fatalf("%s: the person's click refused: %v", pol, err)
			}
			if d := <-ch; d.Verdict != Allow || d.Layer != LayerPerson {
				t.Fatalf("%s: %s after the click = %+v", pol, req.Subject(), d)
			}
		}
	}
}
