// Package egress is the egress proxy behind network_access = "allowlist": the only way
// out of a run's network namespace.
//
// One listener speaks both HTTP proxying (CONNECT tunnels for TLS and plain http://
// requests, through github.com/elazarl/goproxy) and SOCKS5 (CONNECT only, through
// github.com/armon/go-socks5); the first byte of a connection tells them apart (0x05 is
// SOCKS5). Every destination goes through one decision:
//
//  1. The host is normalised (see NormalizeHost): case folded, one trailing dot
//     dropped, IDNA mapped to its ASCII (punycode) form; an IP literal is its own
//     "domain" in canonical form, and names that only look like numbers ("127.1",
//     "0x7f.1") are refused because resolvers disagree about what they mean.
//  2. denied_domains win over everything, then allowed_domains. A rule "*.example.com"
//     matches example.com itself and every name below it; a rule may carry a port
//     ("example.com:443") and then matches that port only, otherwise every port. IP
//     literals match only rules that name the same address, never a wildcard.
//  3. An unlisted destination is handed to Config.Decide, and the client's connection
//     waits for the answer; without Decide it is refused, and under
//     Config.AllowUnlisted (network_access = true) it is let through unasked. A local IP
//     literal is refused before anyone is asked (no answer could let it through).
//     Nothing is resolved before the destination is allowed, so a refused name never
//     leaks through a DNS query.
//  4. The name is resolved once. If any address is local (loopback, RFC 1918 and
//     ULA, link-local, CGNAT, unspecified, multicast, reserved, and those same
//     addresses embedded in IPv6 forms; see LocalReason) or is one of this machine's
//     own interface addresses or on a network they are on, public ones too
//     (rules.OwnAddressReason), the destination is refused
//     unless allow_local, whatever the lists say. The connection is then made to
//     exactly the addresses that were checked, never to the name, so a second DNS
//     answer (rebinding) cannot redirect it.
//
// Every connection, refused or not, is reported once to Config.Log as a Record when it
// ends; Summary folds records into a per-domain view.
//
// ListenInNetns opens the proxy's listener inside a sandbox's network namespace;
// Proxy.DialContext gives a connection made in this process (the MCP web_fetch) the
// same decision without a listener.
package egress
