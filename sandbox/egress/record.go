package egress

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Verdict is the outcome for one destination.
type Verdict int

const (
	// Deny refuses the connection.
	Deny Verdict = iota
	// Allow lets the connection through (still subject to the local-address check).
	Allow
)

// String returns "allow" or "deny".
func (v Verdict) String() string {
	if v == Allow {
		return "allow"
	}
	return "deny"
}

// Reason says why a connection got its verdict.
type Reason string

// The reasons a Record carries.
const (
	ReasonAllowedByList   Reason = "allowed by allowed_domains"
	ReasonDeniedByList    Reason = "denied by denied_domains"
	ReasonAllowedByPerson Reason = "allowed by the person"
	ReasonDeniedByPerson  Reason = "denied by the person"
	ReasonNotListed       Reason = "not in allowed_domains"
	ReasonDecideFailed    Reason = "the request for a decision failed"
	ReasonLocalAddress    Reason = "resolves to a local address"
	ReasonResolveFailed   Reason = "could not be resolved"
	ReasonDialFailed      Reason = "the connection to the destination failed"
	ReasonInvalid         Reason = "not a valid destination"
	ReasonUnsupported     Reason = "not supported by the proxy"
)

// Asked reports whether the verdict came from a question to a person (Decide): its
// answer either way, or its failure.
func (r Reason) Asked() bool {
	return r == ReasonAllowedByPerson || r == ReasonDeniedByPerson || r == ReasonDecideFailed
}

// Protocol names the way a client asked for a connection.
type Protocol string

// The protocols the proxy speaks.
const (
	ProtoConnect Protocol = "http-connect"
	ProtoHTTP    Protocol = "http"
	ProtoSOCKS5  Protocol = "socks5"
)

// Record is one connection as the run's log and the audit see it. It is reported once,
// when the connection ends (at once for a refused one).
type Record struct {
	Start    time.Time
	Protocol Protocol
	// Domain is the normalised destination host (an IP literal for an address).
	Domain string
	Port   int
	// IP is the address the connection was made to (or the local one that got it
	// refused); zero when nothing was resolved.
	IP      netip.Addr
	Verdict Verdict
	Reason  Reason
	// Detail adds what Reason cannot say (the error, the kind of local address).
	Detail    string
	BytesUp   int64
	BytesDown int64
	Duration  time.Duration
}

// DomainSummary is one line of a run's per-domain view.
type DomainSummary struct {
	Domain      string
	Ports       []int
	Connections int
	Allowed     int
	Refused     int
	// Asked counts the connections a person answered (or whose question failed).
	Asked     int
	BytesUp   int64
	BytesDown int64
	Duration  time.Duration
	// LastReason is the reason of the latest connection (by start time).
	LastReason Reason
	last       time.Time
}

// Summary folds Records into per-domain totals; it is safe for concurrent use, so its
// Add can be (part of) Config.Log.
type Summary struct {
	mu sync.Mutex
	m  map[string]*DomainSummary
}

// Add counts one record.
func (s *Summary) Add(r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*DomainSummary{}
	}
	d := s.m[r.Domain]
	if d == nil {
		d = &DomainSummary{Domain: r.Domain}
		s.m[r.Domain] = d
	}
	if !slices.Contains(d.Ports, r.Port) {
		d.Ports = append(d.Ports, r.Port)
		slices.Sort(d.Ports)
	}
	d.Connections++
	if r.Verdict == Allow {
		d.Allowed++
	} else {
		d.Refused++
	}
	if r.Reason.Asked() {
		d.Asked++
	}
	d.BytesUp += r.BytesUp
	d.BytesDown += r.BytesDown
	d.Duration += r.Duration
	if !r.Start.Before(d.last) {
		d.last, d.LastReason = r.Start, r.Reason
	}
}

// Domains returns the totals sorted by domain.
func (s *Summary) Domains() []DomainSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]DomainSummary, 0, len(s.m))
	for _, d := range s.m {
		c := *d
		c.Ports = slices.Clone(d.Ports)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b DomainSummary) int {
		switch {
		case a.Domain < b.Domain:
			return -1
		case a.Domain > b.Domain:
			return 1
		}
		return 0
	})
	return out
}

// Summarize folds a finished list of records.
func Summarize(records []Record) []DomainSummary {
	var s Summary
	for _, r := range records {
		s.Add(r)
	}
	return s.Domains()
}

// LogLine is the record as one line of a run's log: destination, verdict and why, bytes
// each way and duration, e.g. "network: api.example.com:443 allow (allowed by
// allowed_domains), 517 B up, 4210 B down, 182ms".
func (r Record) LogLine() string {
	s := "network: " + net.JoinHostPort(r.Domain, strconv.Itoa(r.Port)) + " " + r.Verdict.String() + " (" + string(r.Reason)
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	return s + fmt.Sprintf("), %d B up, %d B down, %s", r.BytesUp, r.BytesDown, r.Duration.Round(time.Millisecond))
}
