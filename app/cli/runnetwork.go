package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
)

// printRunNetwork prints where an allowlist run connected, one domain a line; refused
// connections are counted in capitals so they stand out.
func printRunNetwork(w io.Writer, n api.RunNetwork) {
	if len(n.Domains) == 0 {
		fmt.Fprintln(w, "network    no connection through the egress proxy")
		return
	}
	fmt.Fprintln(w, "network    where the run connected, through the egress proxy:")
	printTable(w, n.Domains, "", []string{"  DOMAIN", "PORTS", "CONNECTIONS", "VERDICTS", "UP", "DOWN", "TIME", "LAST"}, func(d api.DomainTraffic) []any {
		ports := make([]string, len(d.Ports))
		for i, p := range d.Ports {
			ports[i] = strconv.Itoa(p)
		}
		return []any{"  " + d.Domain, strings.Join(ports, ","), d.Connections, verdictsText(d), humanBytes(d.BytesUp), humanBytes(d.BytesDown),
			(time.Duration(d.DurationMs) * time.Millisecond).String(), d.LastReason}
	})
}

// verdictsText is "2 allowed, 1 REFUSED, 1 asked".
func verdictsText(d api.DomainTraffic) string {
	var parts []string
	if d.Allowed > 0 {
		parts = append(parts, fmt.Sprintf("%d allowed", d.Allowed))
	}
	if d.Refused > 0 {
		parts = append(parts, fmt.Sprintf("%d REFUSED", d.Refused))
	}
	if d.Asked > 0 {
		parts = append(parts, fmt.Sprintf("%d asked", d.Asked))
	}
	return strings.Join(parts, ", ")
}
