package sandbox

import (
	"slices"
	"testing"
)

// TestNestedNetwork: a sandbox nested in an Airlock sandbox gets the whole network only
// when both are on, and otherwise TCP to the enclosing namespace's services alone: its
// ask-only channel always, its egress proxy only when that one is an allowlist and the
// nested one is not off.
func TestNestedNetwork(t *testing.T) {
	ask, proxy := addrPort(AskAddr), addrPort(EgressAddr)
	for _, c := range []struct {
		inner, outer NetworkMode
		all          bool
		ports        []uint16
	}{
		{NetworkOn, NetworkOn, true, nil},
		{NetworkOn, NetworkAllowlist, false, []uint16{ask, proxy}},
		{NetworkAllowlist, NetworkAllowlist, false, []uint16{ask, proxy}},
		{NetworkOff, NetworkAllowlist, false, []uint16{ask}},
		{NetworkAllowlist, NetworkOff, false, []uint16{ask}},
		{NetworkOn, NetworkOff, false, []uint16{ask}},
		{NetworkAllowlist, NetworkOn, false, []uint16{ask}},
	} {
		all, ports := nestedNetwork(c.inner, c.outer)
		if all != c.all || !slices.Equal(ports, c.ports) {
			t.Errorf("%s inside %s: all %v ports %v, want %v %v", c.inner, c.outer, all, ports, c.all, c.ports)
		}
	}
}

// TestEnclosingSandboxNeedsAUserNamespace: the variable alone, on the host, is not an
// enclosing sandbox (this test runs in the initial user namespace).
func TestEnclosingSandboxNeedsAUserNamespace(t *testing.T) {
	if inUserNamespace() {
		t.Skip("the test itself runs in a user namespace")
	}
	t.Setenv(EnvEnclosingNetwork, "allowlist")
	if _, ok := Enclosing(); ok {
		t.Error("ESCAPE: the environment alone made the host look like an enclosing sandbox")
	}
}
