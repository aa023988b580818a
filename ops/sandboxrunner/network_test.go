package sandboxrunner

import (
	"testing"

	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/sandbox"
)

// TestOpsNetworkNeverWidens: an ops run gets the network in force (off, allowlist or on)
// only when its plan needs the network, and off otherwise; an allowlist never becomes on.
func TestOpsNetworkNeverWidens(t *testing.T) {
	for _, tt := range []struct {
		inForce sandbox.NetworkMode
		plan    bool
		want    sandbox.NetworkMode
	}{
		{sandbox.NetworkAllowlist, true, sandbox.NetworkAllowlist},
		{sandbox.NetworkAllowlist, false, sandbox.NetworkOff},
		{sandbox.NetworkOn, true, sandbox.NetworkOn},
		{sandbox.NetworkOn, false, sandbox.NetworkOff},
		{sandbox.NetworkOff, true, sandbox.NetworkOff},
	} {
		p := PolicyFor(sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: tt.inForce}, ops.RunSpec{Dir: "/srv", Network: tt.plan})
		if p.Network != tt.want {
			t.Errorf("in force %q, plan needs network %v: %q, want %q", tt.inForce, tt.plan, p.Network, tt.want)
		}
	}
}
