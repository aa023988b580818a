package rules

import (
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// localRanges are the destinations refused unless allow_local: everything that reaches
// this machine, its LAN or its provider's network rather than the internet, and
// addresses that are not a single unicast host. Documentation ranges (192.0.2.0/24 and
// the like) are not here: nothing routes them, locally or not.
var localRanges = func() []struct {
	p   netip.Prefix
	why string
} {
	type r = struct {
		p   netip.Prefix
		why string
	}
	m := func(s, why string) r { return r{netip.MustParsePrefix(s), why} }
	return []r{
		m("0.0.0.0/8", "unspecified (this network)"),
		m("10.0.0.0/8", "private (RFC 1918)"),
		m("100.64.0.0/10", "shared address space (CGNAT, RFC 6598)"),
		m("127.0.0.0/8", "loopback"),
		m("169.254.0.0/16", "link-local"),
		m("172.16.0.0/12", "private (RFC 1918)"),
		m("192.0.0.0/24", "IETF protocol assignments"),
		m("192.168.0.0/16", "private (RFC 1918)"),
		m("198.18.0.0/15", "benchmarking (RFC 2544)"),
		m("224.0.0.0/4", "multicast"),
		m("240.0.0.0/4", "reserved (and broadcast)"),
		m("::/96", "unspecified, loopback or IPv4-compatible"),
		m("64:ff9b:1::/48", "local-use NAT64"),
		m("100::/64", "discard-only"),
		m("2001::/32", "Teredo (embeds an IPv4 address)"),
		m("fc00::/7", "unique local (ULA)"),
		m("fe80::/10", "link-local"),
		m("fec0::/10", "site-local"),
		m("ff00::/8", "multicast"),
	}
}()

// LocalReason says why an address is local (refused unless allow_local), or "" when
// it is a public destination. IPv6 forms that carry an IPv4 address (IPv4-mapped,
// NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4 address.
func LocalReason(a netip.Addr) string {
	if !a.IsValid() {
		return "invalid address"
	}
	if a.Zone() != "" {
		return "zoned (interface-scoped) address"
	}
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(a):
			if why := LocalReason(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
				return "NAT64 of a " + why + " address"
			}
			return ""
		case b[0] == 0x20 && b[1] == 0x02:
			if why := LocalReason(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
				return "6to4 of a " + why + " address"
			}
			return ""
		}
	}
	for _, r := range localRanges {
		if r.p.Contains(a) {
			return r.why
		}
	}
	return ""
}

// LocalPrefixes4 are the IPv4 ranges LocalReason refuses: a sandbox with the network on
// gets a route refusing each inside its own network namespace.
func LocalPrefixes4() []netip.Prefix {
	var out []netip.Prefix
	for _, r := range localRanges {
		if r.p.Addr().Is4() {
			out = append(out, r.p)
		}
	}
	return out
}

// OwnAddressReason is LocalReason widened by this machine's own interface addresses and
// the networks they are on, whatever their range: a server listening on all interfaces
// answers on each address, the public ones too, and a LAN numbered from public space is
// still the LAN (OwnNetworks).
func OwnAddressReason(a netip.Addr) string {
	if why := LocalReason(a); why != "" {
		return why
	}
	a = a.Unmap().WithZone("")
	nets, err := cachedOwnNetworks()
	if err != nil {
		return "not told apart from this machine (its interfaces cannot be listed: " + err.Error() + ")"
	}
	for _, n := range nets {
		if !n.Contains(a) {
			continue
		}
		if n.IsSingleIP() {
			return "this machine's own address"
		}
		return "on " + n.String() + ", a network this machine is attached to (its LAN)"
	}
	return ""
}

// IsOwnAddress reports whether a is one of this machine's interface addresses (in the
// network namespace of this process), or true when they cannot be listed.
func IsOwnAddress(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	nets, err := cachedOwnNetworks()
	if err != nil {
		return true
	}
	for _, n := range nets {
		if n.IsSingleIP() && n.Addr() == a {
			return true
		}
	}
	return false
}

// ownNets caches OwnNetworks briefly: every destination is checked against them, and an
// address the machine gains is refused within ownNetsTTL.
var ownNets struct {
	mu   sync.Mutex
	at   time.Time
	nets []netip.Prefix
}

const ownNetsTTL = time.Second

func cachedOwnNetworks() ([]netip.Prefix, error) {
	ownNets.mu.Lock()
	defer ownNets.mu.Unlock()
	if ownNets.nets == nil || time.Since(ownNets.at) > ownNetsTTL {
		nets, err := OwnNetworks()
		if err != nil {
			return nil, err
		}
		ownNets.nets, ownNets.at = nets, time.Now()
	}
	return ownNets.nets, nil
}

// Attached networks wider than these are not taken as the LAN (a point-to-point or
// provider set-up can claim a huge prefix): only the address itself is.
const (
	minLANBits4 = 16
	minLANBits6 = 48
)

// OwnNetworks lists this machine's interface addresses, each as a single-address prefix,
// followed by the networks they are on (masked, no wider than /16 for IPv4 and /48 for
// IPv6), loopback aside.
func OwnNetworks() ([]netip.Prefix, error) {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var addrs, lans []netip.Prefix
	for _, ia := range ifs {
		n, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		a, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		a = a.Unmap()
		addrs = append(addrs, netip.PrefixFrom(a, a.BitLen()))
		ones, _ := n.Mask.Size()
		if a.Is4() && len(n.Mask) == net.IPv6len {
			ones -= 96
		}
		min := minLANBits4
		if a.Is6() {
			min = minLANBits6
		}
		if a.IsLoopback() || ones < min || ones >= a.BitLen() {
			continue
		}
		if p, err := a.Prefix(ones); err == nil && !slices.Contains(lans, p) {
			lans = append(lans, p)
		}
	}
	return append(addrs, lans...), nil
}

// OwnAddresses lists this machine's interface addresses (unmapped, without zones).
func OwnAddresses() ([]netip.Addr, error) {
	nets, err := OwnNetworks()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, n := range nets {
		if n.IsSingleIP() {
			out = append(out, n.Addr())
		}
	}
	return out, nil
}
