package egress

import (
	"net/netip"

	"github.com/airlock-app/airlock/sandbox/egress/rules"
)

// LocalReason says why an address is local (refused unless allow_local), or "" when
// it is a public destination (rules.LocalReason).
func LocalReason(a netip.Addr) string { return rules.LocalReason(a) }

// localReason is what the proxy refuses unless allow_local: LocalReason and this
// machine's own addresses and the networks they are on, public ones included
// (rules.OwnAddressReason).
var localReason = rules.OwnAddressReason
