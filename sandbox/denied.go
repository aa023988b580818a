package sandbox

import (
	"errors"
	"strings"
)

// Denial reasons of IsolationDeniedError.
const (
	ReasonWrite   = "write"
	ReasonNetwork = "network"
	ReasonBash    = "bash"
	ReasonRead    = "read"
)

// IsolationDeniedError is a denial by the sandbox: what was blocked (Path or
// Command), why, and the way out (Hint).
type IsolationDeniedError struct {
	// Reason is "write", "network", "bash" (a command the analysis cannot vouch for) or "read" (a hidden path).
	Reason string `json:"reason"`
	// Path is the path concerned, if any (as resolved).
	Path string `json:"path,omitempty"`
	// Command is the shell command or simple command concerned, if any.
	Command string `json:"command,omitempty"`
	// Why says which rule blocked it.
	Why string `json:"why"`
	// Hint is the way out: a different mode, network_access or writable_roots.
	Hint string `json:"hint"`
	// Grant is the extra access that would lift this denial for one call (an escalation
	// a person may allow), or nil when no grant can: a hidden path, a protected path, a
	// command or target the analysis cannot see.
	Grant *Grant `json:"grant,omitempty"`
}

func (e *IsolationDeniedError) Error() string {
	var b strings.Builder
	b.WriteString("sandbox denied ")
	b.WriteString(e.Reason)
	switch {
	case e.Path != "":
		b.WriteString(" of ")
		b.WriteString(e.Path)
	case e.Command != "":
		b.WriteString(" for ")
		b.WriteString(quoteShort(e.Command))
	}
	if e.Path != "" && e.Command != "" {
		b.WriteString(" (in ")
		b.WriteString(quoteShort(e.Command))
		b.WriteString(")")
	}
	if e.Why != "" {
		b.WriteString(": ")
		b.WriteString(e.Why)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// IsDenied returns the IsolationDeniedError in err's chain, if any.
func IsDenied(err error) (*IsolationDeniedError, bool) {
	var d *IsolationDeniedError
	ok := errors.As(err, &d)
	return d, ok
}

func quoteShort(s string) string {
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return "`" + s + "`"
}
