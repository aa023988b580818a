package api

import "strings"

// Grant is the extra access one call gets when a person allows its escalation:
// these paths writable, or the network on, and nothing else. It is
// never remembered: the policy of the next call is the policy in force.
type Grant struct {
	// Writable are real absolute paths (files or directories) made writable.
	Writable []string `json:"writable,omitempty"`
	// Network turns the network on.
	Network bool `json:"network,omitempty"`
	// Readable are credential paths the application layer lets one file-tool call read
	// (read_file, list_dir, search_files run outside the sandbox). The OS layer keeps
	// hiding them: a sandboxed command never gets a Readable grant.
	Readable []string `json:"readable,omitempty"`
}

// IsZero reports whether g grants nothing.
func (g Grant) IsZero() bool { return len(g.Writable) == 0 && !g.Network && len(g.Readable) == 0 }

// String says what g gives, for the person who is asked.
func (g Grant) String() string {
	var parts []string
	if len(g.Writable) > 0 {
		parts = append(parts, strings.Join(g.Writable, ", ")+" writable")
	}
	if g.Network {
		parts = append(parts, "the network on")
	}
	if len(g.Readable) > 0 {
		parts = append(parts, strings.Join(g.Readable, ", ")+" readable")
	}
	if len(parts) == 0 {
		return "nothing more"
	}
	return strings.Join(parts, " and ") + ", for this one call"
}
