package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Problem is one mistake in the file, with where it is (the wire type).
type Problem = api.ConfigProblem

// Error is a config file that cannot be used, with every problem found in it (the wire
// type).
type Error = api.ConfigError

// MaxFileSize is the largest config.toml that is read, by the daemon, the desktop and
// the CLI alike: a larger one is a mistake (or an attack on the parser).
const MaxFileSize = maxFileSize

// tooLarge is the problem of a file over MaxFileSize.
func tooLarge(path string, size int64) *Error {
	return &Error{Path: path, Problems: []Problem{{Message: fmt.Sprintf(
		"the file is %d bytes, over the %d-byte limit for a config file: is it the right file? (rules are matched by pattern: a few wildcards replace thousands of exact rules)", size, MaxFileSize)}}}
}

// ReadFile reads config.toml, refusing (with an *Error) a file over MaxFileSize without
// reading it whole. A missing file gives an error matching fs.ErrNotExist.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > MaxFileSize {
		return nil, tooLarge(path, info.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(path, int64(len(data)))
	}
	return data, nil
}

// Parse decodes and validates config.toml. Every problem names its line and column.
// Data over MaxFileSize is refused before it is decoded.
func Parse(path string, data []byte) (File, error) {
	if len(data) > MaxFileSize {
		return File{}, tooLarge(path, int64(len(data)))
	}
	var f File
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return File{}, decodeError(path, err)
	}
	positions := keyPositions(data)
	var problems []Problem
	for _, v := range validate(f) {
		line, col := positions.find(v.key)
		if valueKeys[v.key] {
			if pos, ok := positions[v.key+valueSuffix]; ok {
				line, col = pos[0], pos[1]
			}
		}
		problems = append(problems, Problem{Line: line, Column: col, Key: v.key, Message: v.message})
	}
	if len(problems) > 0 {
		return File{}, &Error{Path: path, Problems: problems}
	}
	return f, nil
}

func decodeError(path string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		e := &Error{Path: path}
		for _, de := range strict.Errors {
			row, col := de.Position()
			key := strings.Join(de.Key(), ".")
			e.Problems = append(e.Problems, Problem{Line: row, Column: col, Key: key,
				Message: fmt.Sprintf("unknown key %q: check its spelling against the README's Configuration section (airlock config show lists every key)", key)})
		}
		return e
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return &Error{Path: path, Problems: []Problem{{Line: row, Column: col, Key: strings.Join(de.Key(), "."), Message: de.Error()}}}
	}
	return &Error{Path: path, Problems: []Problem{{Message: err.Error()}}}
}

type violation struct{ key, message string }

// valueKeys are the keys whose violations are in the value (a value of the wrong kind):
// their position points at the value.
var valueKeys = map[string]bool{"sandbox_workspace_write.network_access": true, "profile": true}

// choices are the accepted values of the enumerated keys. The domain packages parse the
// same names; these lists only let the file be checked with positions before use.
var choices = map[string][]string{
	"sandbox_mode":       {"read-only", "workspace-write", "full-access", "danger-full-access"},
	"approval_policy":    {"untrusted", "on-request", "on-failure", "never"},
	"approvals_reviewer": {"user", "auto_review"},
	"execution_mode":     {"local", "sandbox", "auto"},
	"isolation.backend":  {"auto", "os", "app"},
	// tty is the named weaker choice: a terminal is forged by `script` in one line.
	"approvals.terminal_proof": {"os", "tty"},
	// file is only ever chosen here, never a fallback (package app/secrets).
	"secrets.store": {"keyring", "file"},
}

// owned are the keys whose values the sandbox parses: config checks them with the
// sandbox's own parser, so the file, the environment and the sandbox accept exactly the
// same spellings.
var owned = map[string]func(string) (string, error){
	"sandbox_mode": func(s string) (string, error) { m, err := sandbox.ParseMode(s); return string(m), err },
	"execution_mode": func(s string) (string, error) {
		m, err := sandbox.ParseExecutionMode(s)
		return string(m), err
	},
	"isolation.backend": func(s string) (string, error) { b, err := sandbox.ParseBackend(s); return string(b), err },
}

func checkChoice(out []violation, key string, v *string) []violation {
	if v == nil {
		return out
	}
	if parse, ok := owned[key]; ok {
		if _, err := parse(*v); err != nil {
			return append(out, violation{key, fmt.Sprintf("%s = %q is not one of %s", key, *v, strings.Join(choices[key], ", "))})
		}
		return out
	}
	for _, c := range choices[key] {
		if *v == c {
			return out
		}
	}
	return append(out, violation{key, fmt.Sprintf("%s = %q is not one of %s", key, *v, strings.Join(choices[key], ", "))})
}

func checkDuration(out []violation, key, v string) []violation {
	if v == "" {
		return out
	}
	if _, err := time.ParseDuration(v); err != nil {
		return append(out, violation{key, fmt.Sprintf("%s = %q is not a duration (write it like \"30s\", \"5m\" or \"24h\")", key, v)})
	}
	return out
}

func validate(f File) []violation {
	var out []violation
	out = checkChoice(out, "sandbox_mode", f.SandboxMode)
	out = checkChoice(out, "approval_policy", f.ApprovalPolicy)
	out = checkChoice(out, "approvals_reviewer", f.ApprovalsReviewer)
	out = checkChoice(out, "execution_mode", f.ExecutionMode)
	out = checkChoice(out, "isolation.backend", f.Isolation.Backend)
	out = checkChoice(out, "approvals.terminal_proof", f.Approvals.TerminalProof)
	out = checkChoice(out, "secrets.store", f.Secrets.Store)
	out = append(out, validateProfiles(f.Profiles, true)...)
	if f.Profile != nil && *f.Profile != "" {
		if p, err := LookupProfile(f, "", *f.Profile); err != nil {
			out = append(out, violation{"profile", fmt.Sprintf("profile = %q is not a profile: %s", *f.Profile, knownProfiles(f))})
		} else if p.Reviewer == "auto_review" && len(f.Reviewer.Command) == 0 && f.ApprovalsReviewer == nil {
			out = append(out, violation{"profile", fmt.Sprintf("profile = %q hands your questions to a reviewer command, and [reviewer] command is not set: add [reviewer] command = [\"/path/to/reviewer\"], or choose a profile that asks you (ask)", *f.Profile)})
		}
	}
	if v := f.SandboxWorkspaceWrite.NetworkAccess; v != nil {
		if _, ok := networkValue(v); !ok {
			out = append(out, violation{"sandbox_workspace_write.network_access", fmt.Sprintf("sandbox_workspace_write.network_access = %s is not one of false (no network), \"allowlist\" (only the domains of [network]) or true (the network on)", tomlText(v))})
		}
	}
	for _, l := range []struct {
		key     string
		entries []string
	}{{"network.allowed_domains", f.Network.AllowedDomains}, {"network.denied_domains", f.Network.DeniedDomains}} {
		for i, e := range l.entries {
			if err := sandbox.ValidateNetworkRule(e); err != nil {
				out = append(out, violation{l.key, fmt.Sprintf("%s entry %d (%q): %v; write a domain (\"example.com\"), a wildcard (\"*.example.com\", the apex included) or an address, optionally with \":port\"", l.key, i+1, e, err)})
			}
		}
	}
	if s := f.Approvals.PAMService; s != nil && !validPAMService(*s) {
		out = append(out, violation{"approvals.pam_service", fmt.Sprintf("approvals.pam_service = %q: name a service of /etc/pam.d (letters, digits, '.', '_' and '-'), or leave it out to use airlock, sudo or login", *s)})
	}
	for tool, tier := range f.Permission.Tiers {
		if tier != "P0" && tier != "P1" && tier != "P2" {
			out = append(out, violation{"permission.tiers." + tool, fmt.Sprintf("tier of %q is %q: use P0 (silent), P1 (asks once) or P2 (asks every time)", tool, tier)})
		}
	}
	for i, r := range f.Permission.Rules {
		key := fmt.Sprintf("permission.rules[%d]", i)
		switch {
		case r.Tool == "":
			out = append(out, violation{key, fmt.Sprintf("rule %d has no tool: name the tool it applies to (for example tool = \"bash\")", i+1)})
		case r.Action != "allow" && r.Action != "ask" && r.Action != "deny":
			out = append(out, violation{key, fmt.Sprintf("rule %d: action %q is not one of allow, ask, deny", i+1, r.Action)})
		}
	}
	for name, hooks := range map[string][]Hook{"hooks.before_tool_use": f.Hooks.BeforeToolUse, "hooks.after_tool_use": f.Hooks.AfterToolUse} {
		for i, h := range hooks {
			key := fmt.Sprintf("%s[%d]", name, i)
			if len(h.Command) == 0 {
				out = append(out, violation{key, fmt.Sprintf("%s entry %d has no command: give the program and its arguments as a list", name, i+1)})
			}
			out = checkDuration(out, key, h.Timeout)
		}
	}
	out = checkDuration(out, "reviewer", f.Reviewer.Timeout)
	if f.Permission.RequestTimeout != "0" {
		out = checkDuration(out, "permission.request_timeout", f.Permission.RequestTimeout)
	}
	if c := f.Dispatch.Concurrency; c != nil && (*c < 1 || *c > 64) {
		out = append(out, violation{"dispatch.concurrency", fmt.Sprintf("dispatch.concurrency = %d: choose between 1 and 64 runs at once", *c)})
	}
	if f.Dispatch.LogMaxAge != nil {
		out = checkDuration(out, "dispatch.log_max_age", *f.Dispatch.LogMaxAge)
	}
	if v := f.Dispatch.RunMaxAge; v != nil {
		if d, err := time.ParseDuration(*v); err != nil || d < time.Hour {
			out = append(out, violation{"dispatch.run_max_age", fmt.Sprintf("dispatch.run_max_age = %q: write how long run records are kept, at least an hour (for example \"2160h\" for 90 days)", *v)})
		}
	}
	if c := f.Dispatch.RunMaxCount; c != nil && *c < 1 {
		out = append(out, violation{"dispatch.run_max_count", fmt.Sprintf("dispatch.run_max_count = %d: keep at least 1 run record per task (the default is 10000)", *c)})
	}
	if c := f.Dispatch.MaxBacklog; c != nil && (*c < 1 || *c > 10000) {
		out = append(out, violation{"dispatch.max_backlog", fmt.Sprintf("dispatch.max_backlog = %d: choose between 1 and 10000 runs of one task waiting their turn (the default is 10)", *c)})
	}
	for _, key := range []struct {
		name string
		v    *string
	}{{"dispatch.log_max_total", f.Dispatch.LogMaxTotal}, {"dispatch.run_log_cap", f.Dispatch.RunLogCap}} {
		if key.v != nil {
			if _, err := ParseSize(*key.v); err != nil {
				out = append(out, violation{key.name, fmt.Sprintf("%s: %v", key.name, err)})
			}
		}
	}
	if m := f.Limits.Memory; m != nil {
		if _, err := api.ParseMemoryLimit(*m); err != nil {
			out = append(out, violation{"limits.memory", fmt.Sprintf("limits.memory = %q: %v", *m, err)})
		}
	}
	if n := f.Limits.Pids; n != nil {
		if _, err := api.CheckPidsLimit(*n); err != nil {
			out = append(out, violation{"limits.pids", fmt.Sprintf("limits.pids: %v", err)})
		}
	}
	if c := f.Limits.CPU; c != nil {
		if _, err := api.ParseCPULimit(*c); err != nil {
			out = append(out, violation{"limits.cpu", fmt.Sprintf("limits.cpu = %q: %v", *c, err)})
		}
	}
	if a := f.API.TCPAddress; a != nil && *a != "" && !isLoopbackAddress(*a) {
		out = append(out, violation{"api.tcp_address", fmt.Sprintf("api.tcp_address = %q: the API only listens on loopback (127.0.0.1:PORT or [::1]:PORT)", *a)})
	}
	return out
}

// tomlText writes a decoded value as it would appear in the file, for messages.
func tomlText(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// valueSuffix marks the position of a key's value in positions.
const valueSuffix = "="

// positions maps a dotted key ("isolation.backend", "permission.rules[1]") to where it
// was written.
type positions map[string][2]int

func (p positions) find(key string) (int, int) {
	for k := key; k != ""; {
		if pos, ok := p[k]; ok {
			return pos[0], pos[1]
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0, 0
}

// lineStarts indexes the offsets at which lines start, so that a position is found by
// binary search. (unstable.Parser.Shape counts the newlines from the start of the
// document on every call, which made checking a config of many rules quadratic: 20 000
// rules took a minute.)
type lineStarts []int

func newLineStarts(data []byte) lineStarts {
	out := lineStarts{0}
	for i, c := range data {
		if c == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// at returns the 1-based line and byte column of offset, as unstable.Parser.Shape does.
func (ls lineStarts) at(offset int) (int, int) {
	i := sort.Search(len(ls), func(i int) bool { return ls[i] > offset }) - 1
	return i + 1, offset - ls[i] + 1
}

// keyPositions walks the document once to learn where each key and table was written.
func keyPositions(data []byte) positions {
	out := positions{}
	lines := newLineStarts(data)
	var p unstable.Parser
	p.Reset(data)
	table := ""
	arrayCount := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			name, first := joinKey(e.Key())
			table = name
			if e.Kind == unstable.ArrayTable {
				table = fmt.Sprintf("%s[%d]", name, arrayCount[name])
				arrayCount[name]++
			}
			if first != nil {
				line, col := lines.at(int(first.Raw.Offset))
				out[table] = [2]int{line, col}
			}
		case unstable.KeyValue:
			name, first := joinKey(e.Key())
			full := name
			if table != "" {
				full = table + "." + name
			}
			if first != nil {
				line, col := lines.at(int(first.Raw.Offset))
				out[full] = [2]int{line, col}
			}
			// The value's own position, for a mistake in the value (valuePos).
			if v := e.Value(); v != nil && v.Raw.Length > 0 {
				line, col := lines.at(int(v.Raw.Offset))
				out[full+valueSuffix] = [2]int{line, col}
			}
		}
	}
	return out
}

func joinKey(it unstable.Iterator) (string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		parts = append(parts, string(n.Data))
	}
	return strings.Join(parts, "."), first
}

// validPAMService reports whether s is a plain PAM service name: a file name in
// /etc/pam.d, never a path.
func validPAMService(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
