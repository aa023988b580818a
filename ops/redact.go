package ops

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// Redacted replaces every credential [Redact] removes.
const Redacted = "[REDACTED]"

// redactionRule finds one shape of credential and says what replaces it: usually the name
// of the variable, flag or header followed by [Redacted].
type redactionRule struct {
	kind string
	re   *regexp.Regexp
	// replace returns the text that replaces a match (sub are the submatches), or
	// ok=false to leave the match alone.
	replace func(sub []string) (replacement string, ok bool)
}

// secretNamePattern matches names that look like they hold a credential: containing
// password, passphrase, secret, token, api key, access key, private key, credential,
// session or signing key; or with pass, pat, auth or key as a whole _-. separated part.
const secretNamePattern = `(?i:[A-Za-z0-9_.-]*(?:passw(?:or)?d|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|` +
	`private[_-]?key|credential|session[_-]?key|signing[_-]?key)[A-Za-z0-9_.-]*|` +
	`(?:[A-Za-z0-9_.-]*[_.-])?(?:pass|pat|auth|key)(?:[_.-][A-Za-z0-9_.-]*)?)`

func keepGroup1(sub []string) (string, bool) { return sub[1] + Redacted, true }

// keepQuotes redacts the value in group 2, keeping its quotes so JSON and shell text stay
// well-formed.
func keepQuotes(sub []string) (string, bool) { return sub[1] + quoted(sub[2]), true }

func quoted(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[:1] + Redacted + v[:1]
	}
	return Redacted
}

func whole([]string) (string, bool) { return Redacted, true }

var redactionRules = []redactionRule{
	{
		// A PEM private key block, or its unterminated start.
		kind: "private key block",
		re:   regexp.MustCompile(`-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY)-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[\s\S]*)`),
		replace: func(sub []string) (string, bool) {
			return "-----BEGIN " + sub[1] + "-----\n" + Redacted + "\n-----END " + sub[1] + "-----", true
		},
	},
	{
		// Authorization and Proxy-Authorization headers: the whole value.
		kind:    "Authorization header",
		re:      regexp.MustCompile(`(?i)((?:proxy-)?authorization\s*:\s*)([^\r\n"']*[^\s"'])`),
		replace: keepGroup1,
	},
	{
		kind:    "bearer token",
		re:      regexp.MustCompile(`(?i)(\bbearer\s+)([A-Za-z0-9\-._~+/]+=*)`),
		replace: keepGroup1,
	},
	{
		// --password v, --password=v, --api-key v, --token=v, --client-secret v ...
		kind: "credential flag",
		re: regexp.MustCompile(`(?i)(--[a-z0-9-]*(?:passw(?:or)?d|passphrase|token|secret|api-?key|access-key|private-key|credential)[a-z0-9-]*(?:=|[ \t]+))` +
			`("[^"]*"|'[^']*'|[^\s"'-][^\s"']*)`),
		replace: keepQuotes,
	},
	{
		// VAR=value (shell, env files) and "name": "value" / name: value (JSON, YAML) with a
		// secret-looking name.
		kind: "secret assignment",
		re: regexp.MustCompile(`((?:^|[^A-Za-z0-9_.-])"?(` + secretNamePattern + `)"?[ \t]*[=:][ \t]*)` +
			`("[^"\r\n]*"|'[^'\r\n]*'|[^\s"',;}]+)`),
		replace: func(sub []string) (string, bool) {
			if sub[3] == `""` || sub[3] == "''" {
				return "", false
			}
			return sub[1] + quoted(sub[3]), true
		},
	},
	{
		kind:    "credentials in a URL",
		re:      regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)@`),
		replace: func(sub []string) (string, bool) { return sub[1] + Redacted + "@", true },
	},
	{
		kind:    "AWS access key",
		re:      regexp.MustCompile(`\b((?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16})\b`),
		replace: whole,
	},
	{
		// An AWS secret access key named as such in any syntax (covered by the assignment
		// rule too), or given positionally after an access key id.
		kind:    "AWS secret key",
		re:      regexp.MustCompile(`(?i)(aws.?secret.?access.?key|secretaccesskey)("?\s*[:=]?\s*"?)([A-Za-z0-9/+=]{40})\b`),
		replace: func(sub []string) (string, bool) { return sub[1] + sub[2] + Redacted, true },
	},
	{
		kind:    "GitHub token",
		re:      regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`),
		replace: whole,
	},
	{
		kind:    "Slack token",
		re:      regexp.MustCompile(`\bxox[abprse]-[A-Za-z0-9-]{8,}`),
		replace: whole,
	},
}

// Redact removes credentials from s before it is stored or shown: inline VAR=value
// assignments of secret-looking names (and "name": "value" in JSON or YAML), the values of
// --password/--token/--secret/--api-key style flags (`--x v` and `--x=v`), Authorization
// headers, bearer tokens, credentials in URLs, AWS access key ids and secret keys, GitHub
// tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), Slack tokens (xoxa-, xoxb-, xoxp-,
// xoxr-, xoxs-, xoxe-) and PEM private key blocks. Each is replaced by [Redacted], keeping
// the name so the reader sees what was there. Redact is idempotent.
func Redact(s string) string {
	out, _ := redact(s)
	return out
}

// redactionKinds lists the kinds of credential found in s.
func redactionKinds(s string) []string {
	_, kinds := redact(s)
	return kinds
}

func redact(s string) (string, []string) {
	var kinds []string
	for _, r := range redactionRules {
		found := false
		s = replaceAllSubmatchFunc(r.re, s, func(sub []string) string {
			repl, ok := r.replace(sub)
			if !ok || repl == sub[0] {
				return sub[0]
			}
			found = true
			return repl
		})
		if found {
			kinds = append(kinds, r.kind)
		}
	}
	return s, kinds
}

// replaceAllSubmatchFunc is regexp.ReplaceAllStringFunc with the submatches handed over.
func replaceAllSubmatchFunc(re *regexp.Regexp, s string, f func([]string) string) string {
	idx := re.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		sub := make([]string, len(m)/2)
		for i := range sub {
			if m[2*i] >= 0 {
				sub[i] = s[m[2*i]:m[2*i+1]]
			}
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(f(sub))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

var secretKey = regexp.MustCompile(`^(?:` + secretNamePattern + `)$`)

// redactedJSON encodes v as JSON with every string redacted and the value of every
// secret-looking key replaced, so the result is still valid JSON.
func redactedJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return json.Marshal(redactTree(tree))
}

func redactTree(v any) any {
	switch x := v.(type) {
	case string:
		return Redact(x)
	case []any:
		for i := range x {
			x[i] = redactTree(x[i])
		}
		return x
	case map[string]any:
		for k, val := range x {
			switch val.(type) {
			case string, json.Number:
				if secretKey.MatchString(k) && val != "" {
					x[k] = Redacted
					continue
				}
			}
			x[k] = redactTree(val)
		}
		return x
	}
	return v
}
