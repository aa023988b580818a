package permission

import (
	"strings"
	"testing"
)

// A profile's approval policy, reviewer and tiers sit just beneath the keys of the
// level that chose it: file profile < file < env profile < env < flag profile < flags.
func TestProfileSettingsLayers(t *testing.T) {
	demo := ProfileSettings{Name: "demo", Settings: Settings{ApprovalPolicy: "untrusted", Permission: PermissionSection{Tiers: map[string]string{"bash": "P2", "read_file": "P2"}}}}
	cases := []struct {
		name     string
		src      Sources
		policy   ApprovalPolicy
		from     string
		bashTier Tier
		bashFrom string
	}{
		{"file profile", Sources{FileProfile: demo}, PolicyUntrusted, FromProfile, P2, FromProfile},
		{"file keys over it", Sources{FileProfile: demo, File: Settings{ApprovalPolicy: "on-request", Permission: PermissionSection{Tiers: map[string]string{"bash": "P1"}}}}, PolicyOnRequest, FromFile, P1, FromFile},
		{"env profile over file keys", Sources{EnvProfile: demo, File: Settings{ApprovalPolicy: "on-request"}}, PolicyUntrusted, FromProfile, P2, FromProfile},
		{"env over env profile", Sources{EnvProfile: demo, LookupEnv: func(k string) (string, bool) { return "never", k == EnvApprovalPolicy }}, PolicyNever, FromEnv, P2, FromProfile},
		{"flag profile over env", Sources{FlagProfile: demo, LookupEnv: func(k string) (string, bool) { return "never", k == EnvApprovalPolicy }}, PolicyUntrusted, FromProfile, P2, FromProfile},
		{"flags over flag profile", Sources{FlagProfile: demo, Flags: Flags{ApprovalPolicy: "on-failure"}}, PolicyOnFailure, FromFlag, P2, FromProfile},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.src.LookupEnv == nil {
				c.src.LookupEnv = func(string) (string, bool) { return "", false }
			}
			e, err := Resolve(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if e.ApprovalPolicy != c.policy || e.ApprovalPolicyFrom != c.from || e.Tiers["bash"] != c.bashTier || e.TiersFrom["bash"] != c.bashFrom || e.Profile != "demo" {
				t.Fatalf("%s from %s, bash %s from %s, profile %q", e.ApprovalPolicy, e.ApprovalPolicyFrom, e.Tiers["bash"], e.TiersFrom["bash"], e.Profile)
			}
		})
	}
	// approve-for-me without a reviewer command says which profile needs one.
	_, err := Resolve(Sources{FileProfile: ProfileSettings{Name: "approve-for-me", Settings: Settings{ApprovalsReviewer: "auto_review"}},
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), "profile approve-for-me") || !strings.Contains(err.Error(), "[reviewer] command") {
		t.Fatalf("approve-for-me without a reviewer: %v", err)
	}
}

// A run's profile only tightens: its raised tiers and stricter policy hold, what it
// would lower is ignored and said so.
func TestRunProfileOnlyTightens(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	run := ProfileSettings{Name: "mixed", Settings: Settings{ApprovalPolicy: "untrusted", Permission: PermissionSection{Tiers: map[string]string{"bash": "P2", "write_file": "P0"}}}}
	e, err := Resolve(Sources{RunProfile: run, LookupEnv: none})
	if err != nil {
		t.Fatal(err)
	}
	if e.Tiers["bash"] != P2 || e.ApprovalPolicy != PolicyUntrusted {
		t.Fatalf("bash %s, policy %s: the raises did not hold", e.Tiers["bash"], e.ApprovalPolicy)
	}
	if _, lowered := e.Tiers["write_file"]; lowered {
		t.Fatalf("a run's profile lowered write_file to %s", e.Tiers["write_file"])
	}
	if len(e.IgnoredFromProjects) != 1 || !strings.Contains(e.IgnoredFromProjects[0], "a run's profile may only tighten") {
		t.Fatalf("ignored: %v", e.IgnoredFromProjects)
	}
	loose := ProfileSettings{Name: "full-access", Settings: Settings{ApprovalPolicy: "never"}}
	if e, _ := Resolve(Sources{RunProfile: loose, LookupEnv: none}); e.ApprovalPolicy != PolicyOnRequest {
		t.Fatalf("a run's profile loosened the approval policy to %s", e.ApprovalPolicy)
	}
}
