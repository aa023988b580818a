package api

import (
	"encoding/json"
	"strings"
)

// ParamMap decodes the request parameters into a map; invalid or empty params give nil.
func (r Request) ParamMap() map[string]any {
	if len(r.Params) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(r.Params, &m); err != nil {
		return nil
	}
	return m
}

// Argv returns the request's argv when its params carry one ({"argv": [...]}).
func (r Request) Argv() []string { return ArgvOf(r.ParamMap()) }

// ArgvOf is the "argv" of decoded params, nil when there is none or it is not strings.
func ArgvOf(p map[string]any) []string {
	raw, ok := p["argv"].([]any)
	if !ok {
		return nil
	}
	argv := make([]string, 0, len(raw))
	for _, a := range raw {
		s, ok := a.(string)
		if !ok {
			return nil
		}
		argv = append(argv, s)
	}
	return argv
}

// IsShell reports whether the request runs a shell command (bash or exec tools, or any
// tool whose params carry "command" or "argv").
func (r Request) IsShell() bool { return IsShellCall(r.Tool, r.ParamMap()) }

// IsShellCall is IsShell of a tool and its decoded params.
func IsShellCall(tool string, p map[string]any) bool {
	if tool == ToolBash || tool == ToolExec {
		return true
	}
	if _, ok := p["command"].(string); ok {
		return true
	}
	return ArgvOf(p) != nil
}

// Command returns the shell command line of a shell request: params "command", or
// params "argv" quoted for the shell. It is "" for other tools.
func (r Request) Command() string { return CommandOf(r.ParamMap()) }

// CommandOf is Command of decoded params.
func CommandOf(p map[string]any) string {
	if c, ok := p["command"].(string); ok {
		return c
	}
	if argv := ArgvOf(p); argv != nil {
		return ShellJoin(argv)
	}
	return ""
}

// Subject is the text rules and grants match against: the command for shell tools, the
// path, url or query for the usual tools, or the canonical JSON of the params otherwise.
func (r Request) Subject() string { return SubjectOf(r.ParamMap()) }

// SubjectOf is Subject of decoded params.
func SubjectOf(p map[string]any) string {
	if c := CommandOf(p); c != "" {
		return c
	}
	for _, k := range []string{"path", "url", "dir", "directory", "query", "plan_id", "planId", "name"} {
		if s, ok := p[k].(string); ok {
			return s
		}
	}
	if p == nil {
		return ""
	}
	b, _ := json.Marshal(p) // map keys are sorted: canonical
	return string(b)
}

// ShellJoin quotes argv for a POSIX shell so that parsing the result yields argv again.
func ShellJoin(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ShellQuote(a))
	}
	return b.String()
}

// ShellQuote quotes s as one word for a POSIX shell (and bash): as it is when it holds
// nothing a shell reads specially, else in single quotes, which take every byte.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,+@%", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
