package api

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// NetworkAccess is `network_access`: how much network a run gets. It is one
// three-valued setting everywhere (configuration, departments, tasks, flags, the
// environment, recorded policies).
//
// A NetworkAllowlist run gets a network namespace of its own whose only way out is
// Airlock's egress proxy (scheduled runs, an MCP session's bash, `airlock exec` with a
// running core). Where no proxy is connected (web_fetch, the micro-VM, ops commands, the
// Landlock fallback, `airlock exec` without a core) it runs with the network OFF, exactly
// as NetworkOff, and says so (AllowlistNotConnected): never more access than asked.
type NetworkAccess string

// The network_access values, from the strictest.
const (
	// NetworkOff gives the run no network at all.
	NetworkOff NetworkAccess = "off"
	// NetworkAllowlist gives the run only the egress proxy, which allows the [network]
	// table's domains.
	NetworkAllowlist NetworkAccess = "allowlist"
	// NetworkOn gives the run outgoing connectivity.
	NetworkOn NetworkAccess = "on"
)

// NetworkChoices names the accepted values, for error messages.
const NetworkChoices = "off, allowlist or on (also the booleans true/false, 1/0, yes/no for on and off)"

// ErrInvalidNetworkAccess is wrapped by every error ParseNetworkAccess and the JSON and
// database decoders return for a value that is none of the three.
var ErrInvalidNetworkAccess = errors.New("invalid network_access")

// ParseNetworkAccess parses a network_access value as written in a flag, the environment
// or a stored row: off, allowlist or on, and the booleans' spellings (true/false, 1/0,
// yes/no, enabled/disabled) for off and on. Empty is off.
func ParseNetworkAccess(s string) (NetworkAccess, error) {
	switch strings.TrimSpace(strings.ToLower(s)) {
	case "", "off", "false", "0", "no", "disabled":
		return NetworkOff, nil
	case "allowlist":
		return NetworkAllowlist, nil
	case "on", "true", "1", "yes", "enabled":
		return NetworkOn, nil
	}
	return "", fmt.Errorf("%w %q: valid choices are %s", ErrInvalidNetworkAccess, s, NetworkChoices)
}

// NetworkFromBool is the value of the old boolean setting: true is on, false is off.
func NetworkFromBool(on bool) NetworkAccess {
	if on {
		return NetworkOn
	}
	return NetworkOff
}

// Norm returns n with the zero value read as off.
func (n NetworkAccess) Norm() NetworkAccess {
	if n == "" {
		return NetworkOff
	}
	return n
}

// On reports whether n gives the run outgoing connectivity of its own. An allowlist
// is not on: until the egress proxy is connected it runs with the network off.
func (n NetworkAccess) On() bool { return n == NetworkOn }

// Rank orders the values by access: off 0, allowlist 1, on 2 (anything else 0).
func (n NetworkAccess) Rank() int {
	switch n {
	case NetworkAllowlist:
		return 1
	case NetworkOn:
		return 2
	}
	return 0
}

// Describe says what n gives a run, in words for status lines and the run's policy.
func (n NetworkAccess) Describe() string {
	switch n.Norm() {
	case NetworkAllowlist:
		return "allowlist (only the allowed domains, through Airlock's egress proxy)"
	case NetworkOn:
		return "on"
	}
	return "off"
}

// MarshalJSON writes the value's name ("off" for the zero value).
func (n NetworkAccess) MarshalJSON() ([]byte, error) { return json.Marshal(string(n.Norm())) }

// UnmarshalJSON accepts the names and, for rows and files the boolean setting wrote,
// true (on) and false (off). null leaves n unchanged.
func (n *NetworkAccess) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	switch s {
	case "null":
		return nil
	case "true":
		*n = NetworkOn
		return nil
	case "false":
		*n = NetworkOff
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("%w %s: valid choices are %s", ErrInvalidNetworkAccess, s, NetworkChoices)
	}
	v, err := ParseNetworkAccess(str)
	if err != nil {
		return err
	}
	*n = v
	return nil
}

// Value stores the name in the database.
func (n NetworkAccess) Value() (driver.Value, error) { return string(n.Norm()), nil }

// Scan reads a stored value: the names, and the 0/1 (or true/false) the boolean column
// held before the setting had three values.
func (n *NetworkAccess) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n = NetworkOff
		return nil
	case bool:
		*n = NetworkFromBool(v)
		return nil
	case int64:
		*n = NetworkFromBool(v != 0)
		return nil
	case float64:
		*n = NetworkFromBool(v != 0)
		return nil
	case []byte:
		return n.Scan(string(v))
	case string:
		p, err := ParseNetworkAccess(v)
		if err != nil {
			return err
		}
		*n = p
		return nil
	}
	return fmt.Errorf("%w: stored value of type %T", ErrInvalidNetworkAccess, src)
}

// GormDataType makes the column text (the boolean column it replaces is migrated).
func (NetworkAccess) GormDataType() string { return "string" }

// String is the value's name.
func (n NetworkAccess) String() string { return string(n.Norm()) }

// AllowlistNotConnected is what an allowlist gives where no egress proxy is connected:
// nothing.
const AllowlistNotConnected = "allowlist, but the egress proxy is not connected here: no network"

// RunNetwork is where a run connected through the egress proxy (network_access =
// "allowlist"): one row per destination domain, sorted by domain. Domains is empty for a
// run that made no connection, or ran without the proxy.
type RunNetwork struct {
	RunID   uint            `json:"run_id"`
	Domains []DomainTraffic `json:"domains"`
}

// DomainTraffic is one domain of a run's network summary: the ports asked for, how many
// connections and their verdicts (Asked counts those a person answered, whichever way),
// the bytes each way and the connections' total duration.
type DomainTraffic struct {
	Domain      string `json:"domain"`
	Ports       []int  `json:"ports"`
	Connections int    `json:"connections"`
	Allowed     int    `json:"allowed"`
	Refused     int    `json:"refused"`
	Asked       int    `json:"asked"`
	BytesUp     int64  `json:"bytes_up"`
	BytesDown   int64  `json:"bytes_down"`
	DurationMs  int64  `json:"duration_ms"`
	// LastReason is why the latest connection got its verdict ("allowed by
	// allowed_domains", "denied by the person", …).
	LastReason string `json:"last_reason"`
}
