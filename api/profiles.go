package api

// Profile is a named set of permission settings: a sandbox mode, a network setting, an
// approval policy and reviewer, and tool tiers. Airlock ships some (built in) and the
// person may write their own in config.toml ([profiles.NAME]). A profile is chosen per
// configuration (profile = "NAME"), department, task or command (--profile,
// AIRLOCK_PROFILE), and is one layer of the one resolution, beneath the keys written
// at the same level. An empty field is "not set by this profile".
type Profile struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	// Warning is what choosing this profile gives up, in words (full access with
	// approval never: nothing confines or asks).
	Warning        string         `json:"warning,omitempty"`
	SandboxMode    string         `json:"sandbox_mode,omitempty"`
	Network        *NetworkAccess `json:"network,omitempty"`
	ApprovalPolicy string         `json:"approval_policy,omitempty"`
	Reviewer       string         `json:"approvals_reviewer,omitempty"`
	// Tiers are tool → P0 | P1 | P2, as in [permission.tiers].
	Tiers map[string]string `json:"tiers,omitempty"`
	// Source is "built-in" or the config.toml that defines it.
	Source string `json:"source"`
}

// ProfileBuiltIn is the Source of the profiles Airlock ships.
const ProfileBuiltIn = "built-in"

// Defaults are the profile's fields a department's defaults or a task's overrides
// also have: what a run records.
func (p Profile) Defaults() Defaults {
	return Defaults{SandboxMode: p.SandboxMode, Network: p.Network, ApprovalPolicy: p.ApprovalPolicy}
}

// ProfileList answers the profile list: every profile and the one config.toml chose.
type ProfileList struct {
	Profiles []Profile `json:"profiles"`
	// Current is config.toml's profile ("" when it names none).
	Current string `json:"current"`
}
