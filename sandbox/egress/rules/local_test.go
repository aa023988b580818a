package rules

import (
	"net/netip"
	"testing"
)

// TestOwnAddressReason: every address of this machine's interfaces is refused, public
// ones included; a public address it does not hold is not; LocalPrefixes4 are exactly
// the IPv4 ranges LocalReason refuses.
func TestOwnAddressReason(t *testing.T) {
	own, err := OwnAddresses()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range own {
		if OwnAddressReason(a) == "" {
			t.Errorf("OwnAddressReason(%s) is empty: this machine's own address is not refused", a)
		}
	}
	if why := OwnAddressReason(netip.MustParseAddr("203.0.113.77")); why != "" && !IsOwnAddress(netip.MustParseAddr("203.0.113.77")) {
		t.Errorf("a public address is refused: %s", why)
	}
	for _, p := range LocalPrefixes4() {
		if !p.Addr().Is4() || LocalReason(p.Addr()) == "" {
			t.Errorf("LocalPrefixes4 holds %s, which LocalReason does not refuse", p)
		}
	}
	if len(LocalPrefixes4()) < 8 {
		t.Errorf("LocalPrefixes4 = %v", LocalPrefixes4())
	}
}
