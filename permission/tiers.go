package permission

// PostureCloudOps is the department posture for infrastructure work: bash asks every time
// (P2), the network is on, ops tools keep their default tiers.
const PostureCloudOps = "cloudops"

// DefaultTiers is the default tier table (README, Connecting agents). Tools not listed are P1.
func DefaultTiers() map[string]Tier {
	return map[string]Tier{
		"read_file":    P0,
		"list_dir":     P0,
		"search_files": P0,
		"memory_query": P0,
		"ops_plan":     P0,
		"ops_diff":     P0,
		"ops_verify":   P0,
		"ops_journal":  P0,
		"bash":         P1,
		"exec":         P1,
		"write_file":   P1,
		"edit_file":    P1,
		"web_fetch":    P1,
		"skill":        P1,
		"ops_apply":    P2,
		"ops_approve":  P2,
	}
}

// PostureTiers returns the tiers a posture raises (never lowers). Unknown postures raise
// nothing.
func PostureTiers(posture string) map[string]Tier {
	if posture == PostureCloudOps {
		return map[string]Tier{"bash": P2, "exec": P2}
	}
	return nil
}

// PostureNetwork reports whether a posture turns the network on (cloudops does), for the
// caller that builds the sandbox policy.
func PostureNetwork(posture string) bool { return posture == PostureCloudOps }

// TierTable is the effective tool → tier table: the defaults overlaid by configuration.
type TierTable struct {
	tiers map[string]Tier
}

// NewTierTable overlays configured tiers on the defaults.
func NewTierTable(configured map[string]Tier) TierTable {
	t := DefaultTiers()
	for tool, tier := range configured {
		t[tool] = tier
	}
	return TierTable{tiers: t}
}

// For returns the tier of a tool under a posture. Unknown tools are P1: they ask.
// ops_apply and ops_approve never drop below P2, whatever the configuration says.
func (t TierTable) For(tool, posture string) Tier {
	tier, ok := t.tiers[tool]
	if !ok {
		tier = P1
	}
	if raised, ok := PostureTiers(posture)[tool]; ok {
		tier = tier.Max(raised)
	}
	if tool == ToolOpsApply || tool == ToolOpsApprove {
		tier = tier.Max(P2)
	}
	return tier
}

// Map returns a copy of the table.
func (t TierTable) Map() map[string]Tier {
	m := make(map[string]Tier, len(t.tiers))
	for k, v := range t.tiers {
		m[k] = v
	}
	return m
}
