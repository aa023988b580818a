package vm

import (
	"testing"

	"github.com/airlock-app/airlock/sandbox"
)

// TestGuestNetworkFollowsThePolicy: the micro-VM gets a network device only when the
// policy's network is on; an allowlist (its egress proxy not yet connected) gets none,
// exactly as off.
func TestGuestNetworkFollowsThePolicy(t *testing.T) {
	ws := t.TempDir()
	for n, want := range map[sandbox.NetworkMode]bool{sandbox.NetworkOff: false, sandbox.NetworkAllowlist: false, sandbox.NetworkOn: true} {
		_, network, _, err := GuestRequest(sandbox.ExecRequest{Policy: sandbox.Policy{Cwd: ws, Network: n}, Argv: []string{"true"}})
		if err != nil || network != want {
			t.Errorf("network %q: the VM's network %v (%v), want %v", n, network, err, want)
		}
	}
}
