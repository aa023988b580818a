package permission

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

func env(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

func TestResolvePrecedence(t *testing.T) {
	file := Settings{ApprovalPolicy: "untrusted"}
	cases := []struct {
		name     string
		env      map[string]string
		flags    Flags
		file     Settings
		want     ApprovalPolicy
		wantFrom string
	}{
		{"default", nil, Flags{}, Settings{}, PolicyOnRequest, FromDefault},
		{"file", nil, Flags{}, file, PolicyUntrusted, FromFile},
		{"env over file", map[string]string{EnvApprovalPolicy: "never"}, Flags{}, file, PolicyNever, FromEnv},
		{"flag over env", map[string]string{EnvApprovalPolicy: "never"}, Flags{ApprovalPolicy: "on-failure"}, file, PolicyOnFailure, FromFlag},
	}
	for _, c := range cases {
		e, err := Resolve(Sources{File: c.file, LookupEnv: env(c.env), Flags: c.flags})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if e.ApprovalPolicy != c.want || e.ApprovalPolicyFrom != c.wantFrom {
			t.Errorf("%s: got %s from %s, want %s from %s", c.name, e.ApprovalPolicy, e.ApprovalPolicyFrom, c.want, c.wantFrom)
		}
	}
}

func TestResolveErrorsNameKeyAndValues(t *testing.T) {
	cases := []struct {
		src  Sources
		want []string
	}{
		{Sources{File: Settings{ApprovalPolicy: "sometimes"}, FilePath: "/c.toml"}, []string{"/c.toml", "approval_policy", "sometimes", "untrusted, on-request, on-failure or never"}},
		{Sources{LookupEnv: env(map[string]string{EnvApprovalPolicy: "yolo"})}, []string{"AIRLOCK_APPROVAL_POLICY", "yolo", "on-request"}},
		{Sources{Flags: Flags{ApprovalPolicy: "x"}}, []string{"--approval-policy", "never"}},
		{Sources{File: Settings{ApprovalsReviewer: "robot"}}, []string{"approvals_reviewer", "user or auto_review"}},
		{Sources{File: Settings{ApprovalsReviewer: "auto_review"}}, []string{"[reviewer] command"}},
		{Sources{File: Settings{Permission: PermissionSection{Tiers: map[string]string{"bash": "P3"}}}}, []string{"[permission.tiers] bash", "P0, P1 or P2"}},
		{Sources{File: Settings{Permission: PermissionSection{Rules: []RuleSetting{{Tool: "bash", Pattern: "x", Action: "permit"}}}}}, []string{"[[permission.rules]] #1", "allow, ask or deny"}},
		{Sources{File: Settings{Hooks: HooksSection{BeforeToolUse: []HookSetting{{}}}}}, []string{"[[hooks.before_tool_use]] #1 command"}},
		{Sources{File: Settings{Hooks: HooksSection{AfterToolUse: []HookSetting{{Command: []string{"/x"}, Timeout: "soon"}}}}}, []string{"after_tool_use", "timeout", "soon"}},
		{Sources{File: Settings{Permission: PermissionSection{RequestTimeout: "-1s"}}}, []string{"request_timeout"}},
	}
	for _, c := range cases {
		if c.src.LookupEnv == nil {
			c.src.LookupEnv = env(nil)
		}
		_, err := Resolve(c.src)
		if err == nil {
			t.Errorf("Resolve(%+v) succeeded, want an error", c.src)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not mention %q", err, w)
			}
		}
	}
}

func TestResolveProjectPolicyOnlyTightens(t *testing.T) {
	strict := true
	project := Settings{
		ApprovalPolicy:    "never",
		ApprovalsReviewer: "auto_review",
		Permission: PermissionSection{
			Tiers: map[string]string{"bash": "P2", "write_file": "P0"},
			Rules: []RuleSetting{{Tool: "bash", Pattern: "*", Action: "allow"}, {Tool: "bash", Pattern: "curl *", Action: "deny"}},
		},
		Hooks:    HooksSection{BeforeToolUse: []HookSetting{{Command: []string{"/evil"}}}},
		Reviewer: ReviewerSection{Command: []string{"/evil-reviewer"}},
		Ops:      OpsSection{Strict: &strict},
	}
	src := Sources{Projects: []ProjectPolicy{{Path: "/repo/.airlock/policy.toml", Settings: project}}, LookupEnv: env(nil)}
	e, err := Resolve(src)
	if err != nil {
		t.Fatal(err)
	}
	if e.ApprovalPolicy != PolicyOnRequest {
		t.Errorf("project loosened approval_policy to %s", e.ApprovalPolicy)
	}
	if e.Reviewer != ReviewerUser || len(e.ReviewerCommand) != 0 || len(e.BeforeHooks) != 0 || e.OpsStrict {
		t.Errorf("project reviewer/hooks/strict were applied: %+v", e)
	}
	if e.Tiers["bash"] != P2 || e.TiersFrom["bash"] != FromProject {
		t.Errorf("project tier raise not kept: %v", e.Tiers)
	}
	if _, ok := e.Tiers["write_file"]; ok {
		t.Errorf("project tier lowering kept: %v", e.Tiers)
	}
	if len(e.Rules) != 1 || e.Rules[0].Action != ActionDeny || e.Rules[0].Trusted {
		t.Errorf("project rules = %+v, want only the untrusted deny", e.Rules)
	}
	if len(e.IgnoredFromProjects) < 6 {
		t.Errorf("ignored list too short for the UI: %v", e.IgnoredFromProjects)
	}
	// Stricter approval policies from a project are kept.
	src.Projects[0].Settings = Settings{ApprovalPolicy: "untrusted"}
	if e, _ := Resolve(src); e.ApprovalPolicy != PolicyUntrusted {
		t.Errorf("project tightening to untrusted ignored: %s", e.ApprovalPolicy)
	}
	// AIRLOCK_TRUST_PROJECT_CONFIG=1 trusts it.
	src.Projects[0].Settings = project
	src.TrustProject = true
	e, err = Resolve(src)
	if err != nil {
		t.Fatal(err)
	}
	if e.ApprovalPolicy != PolicyNever || !e.OpsStrict || len(e.BeforeHooks) != 1 || len(e.Rules) != 2 {
		t.Errorf("trusted project not applied: %+v", e)
	}
}

func TestSettingsDecodeFromConfigTOML(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("testdata", "settings.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var s Settings
	if err := toml.Unmarshal(doc, &s); err != nil {
		t.Fatal(err)
	}
	e := effective(t, s)
	if e.ApprovalPolicy != PolicyOnFailure || e.Reviewer != ReviewerAuto || !e.OpsStrict || e.Tiers["bash"] != P2 ||
		len(e.Rules) != 1 || !e.Rules[0].Trusted || len(e.BeforeHooks) != 1 || e.BeforeHooks[0].Timeout.String() != "3s" ||
		e.RequestTimeout.String() != "10m0s" || e.ReviewerCommand[0] != "/usr/local/bin/my-reviewer" {
		t.Fatalf("decoded settings wrong: %+v", e)
	}
}
