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
