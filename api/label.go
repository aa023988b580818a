package api

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of the labels a caller supplies (Label's max, in characters).
const (
	LabelDescription = 64  // Caller.Description: "hook:claude", "mcp:codex"
	LabelName        = 128 // Session, Run, Task, Department: names, escaped but never cut below this
	LabelReason      = 500 // Escalation.Reason and Denial
	LabelSummary     = 200 // a request's one-line summary: its tool and subject
)

// Label makes s fit on one line of a popup, a notification or a menu: newlines, other
// control characters, bidirectional overrides and invisible format characters are
// written as escapes (\n, \x1b, \u202e), invalid UTF-8 as \xff, and what exceeds max
// characters is cut with "…". A label cannot split a line, reorder what follows it or
// hide text; the subject of a decision (a command) keeps its exact text in the
// request's parameters, and only its summary passes through here.
func Label(s string, max int) string {
	if max < 1 {
		max = 1
	}
	clean := true
	for i, r := range s {
		if r == utf8.RuneError || !labelSafe(r) || i >= max {
			clean = false
			break
		}
	}
	if clean && utf8.RuneCountInString(s) <= max {
		return s
	}
	var b strings.Builder
	n := 0
	put := func(piece string) bool {
		c := utf8.RuneCountInString(piece)
		if n+c > max-1 {
			return false
		}
		b.WriteString(piece)
		n += c
		return true
	}
	rest := s
	for len(rest) > 0 {
		r, size := utf8.DecodeRuneInString(rest)
		var piece string
		switch {
		case r == utf8.RuneError && size <= 1:
			piece = fmt.Sprintf(`\x%02x`, rest[0])
		case r == '\n':
			piece = `\n`
		case r == '\r':
			piece = `\r`
		case r == '\t':
			piece = `\t`
		case !labelSafe(r) && r < 0x100:
			piece = fmt.Sprintf(`\x%02x`, r)
		case !labelSafe(r):
			piece = fmt.Sprintf(`\u%04x`, r)
		default:
			piece = rest[:size]
		}
		rest = rest[size:]
		if len(rest) == 0 && n+utf8.RuneCountInString(piece) <= max {
			b.WriteString(piece)
			return b.String()
		}
		if !put(piece) {
			b.WriteString("…")
			return b.String()
		}
	}
	return b.String()
}

// labelSafe reports whether r may stand as itself in a label: printable (a space is,
// other spaces and separators are not) and not a format character (bidirectional
// overrides and isolates, zero-width characters, the byte order mark).
func labelSafe(r rune) bool {
	return r == ' ' || (unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r))
}

// CleanLabels makes every label r's caller supplied fit Label: the caller's
// description, the session, run, task and department names, and the escalation's
// reason and denial. The parameters (the command a decision is about) are left exact.
// The core calls it where a request enters.
func (r *Request) CleanLabels() {
	c := &r.Context
	c.Caller.Description = Label(c.Caller.Description, LabelDescription)
	c.Session = Label(c.Session, LabelName)
	c.Run = Label(c.Run, LabelName)
	c.Task = Label(c.Task, LabelName)
	c.Department = Label(c.Department, LabelName)
	if r.Escalation != nil {
		e := *r.Escalation
		e.Reason = Label(e.Reason, LabelReason)
		e.Denial = Label(e.Denial, LabelReason)
		r.Escalation = &e
	}
}
