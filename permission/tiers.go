package permission

import "github.com/airlock-app/airlock/api"

// PostureCloudOps is the department posture for infrastructure work: bash asks every time
// (P2), the network is on, ops tools keep their default tiers.
const PostureCloudOps = "cloudops"

// DefaultTiers is the default tier table (README, Connecting agents). Tools not listed are P1.
func DefaultTiers() map[string]Tier {
	return map[string]Tier{
		api.ToolReadFile:      P0,
		api.ToolListDir:       P0,
		api.ToolSearchFiles:   P0,
		"memory_query":        P0,
		api.ToolOpsPlan:       P0,
		api.ToolOpsDiff:       P0,
		api.ToolOpsVerify:     P0,
		api.ToolOpsJournal:    P0,
		api.ToolBash:          P1,
		api.ToolExec:          P1,
		api.ToolWriteFile:     P1,
		api.ToolEditFile:      P1,
		api.ToolWebFetch:      P1,
		api.ToolWebSearch:     P1,
		api.ToolNetworkDomain: P1,
		"skill":               P1,
		api.ToolOpsApply:      P2,
		api.ToolOpsApprove:    P2,
	}
}

// PostureTiers returns the tiers a posture raises (never lowers). Unknown postures raise
// nothing.
func PostureTiers(posture string) map[string]Tier {
	if posture == PostureCloudOps {
		return map[string]Tier{api.ToolBash: P2, api.ToolExec: P2}
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
