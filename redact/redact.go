package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
)

// Marker replaces every credential.
const Marker = "[REDACTED]"

// rule finds one shape of credential and says what replaces it: usually the name of the
// variable, flag or header followed by Marker.
type rule struct {
	kind string
	// hints are lower-case strings one of which is in every match: a rule whose hints
	// are all absent is skipped (most text has none, and regexps are slow).
	hints []string
	re    *regexp.Regexp
	// replace returns the text that replaces a match (sub are the submatches), or
	// ok=false to leave the match alone.
	replace func(sub []string) (replacement string, ok bool)
}

// secretName matches names that look like they hold a credential: containing password,
// passphrase, secret, token, api key, access key, private key, credential, session or
// signing key, cookie or signature; or with pass, pat, auth, key or sig as a whole _-.
// separated part, or pwd as the last part of a longer name (MYSQL_PWD, but not PWD).
const secretName = `(?i:[A-Za-z0-9_.-]*(?:passw(?:or)?d|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|` +
	`private[_-]?key|credential|session[_-]?key|signing[_-]?key|account[_-]?key|cookie|signature)[A-Za-z0-9_.-]*|` +
	`(?:[A-Za-z0-9_.-]*[_.-])?(?:pass|pat|auth|key|sig)(?:[_.-][A-Za-z0-9_.-]*)?|` +
	`[A-Za-z0-9_.-]*[_.-]pwd)`

// flagName matches the names of flags whose value is a credential (without dashes).
const flagName = `(?i:[a-z0-9-]*(?:passw(?:or)?d|passphrase|token|secret|api-?key|access-key|private-key|` +
	`credential|storepass|keypass|auth-key)[a-z0-9-]*|pass)`

// notSecretFlag are flags with a credential-looking name whose value names where the
// credential is (a file, a variable, stdin), or that take no value at all.
var notSecretFlag = regexp.MustCompile(`(?i)^(?:no-|ask-|prompt-).*|.*-(?:file|stdin|env|path|prompt|command|cmd|helper)$`)

// variableRef is a value that only names a variable ($TOKEN, ${TOKEN}): not a secret.
var variableRef = regexp.MustCompile(`^["']?\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})["']?$`)

// countValue is a number (and, in JSON-like text, the comma or bracket after it): under
// a name like input_tokens it is a count, not a secret.
var countValue = regexp.MustCompile(`^-?[0-9]+(?:\.[0-9]+)?(?:[,}\]].*)?$`)

func keepGroup1(sub []string) (string, bool) { return sub[1] + Marker, true }

// quoted redacts a value, keeping its quotes so JSON and shell text stay well-formed.
func quoted(v string) string {
	if v == "" {
		return Marker
	}
	for _, q := range []string{`\"`, `"`, `'`} {
		if strings.HasPrefix(v, q) {
			if len(v) >= 2*len(q) && strings.HasSuffix(v, q) {
				return q + Marker + q
			}
			return q + Marker
		}
	}
	return Marker
}

func whole([]string) (string, bool) { return Marker, true }

func flagValue(sub []string) (string, bool) {
	if notSecretFlag.MatchString(sub[2]) || shellOperator(sub[3]) || variableRef.MatchString(sub[3]) {
		return "", false
	}
	return sub[1] + quoted(sub[3]), true
}

// shellOperator is a word that ends a command: never a flag's value.
func shellOperator(v string) bool {
	return v != "" && strings.ContainsRune("<>|;&", rune(v[0]))
}

// valuePattern is a value: quoted (a JSON-escaped quote, a double or a single quote, closed
// on the same line or running to its end) or a bare word up to a shell metacharacter.
const valuePattern = `(\\"(?:[^"\\\r\n]|\\[^"\r\n])*(?:\\")?|"[^"\r\n]*"?|'[^'\r\n]*'?|[^\s"'\x60;&|<>]+)`

var rules = []rule{
	{
		// A PEM private key block (PGP's too), or its unterminated start.
		kind: "private key block", hints: []string{"private key"},
		re: regexp.MustCompile(`-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)`),
		replace: func(sub []string) (string, bool) {
			return "-----BEGIN " + sub[1] + "-----\n" + Marker + "\n-----END " + sub[1] + "-----", true
		},
	},
	{
		// Authorization, Proxy-Authorization, Cookie and Set-Cookie headers: the whole value.
		kind: "Authorization or Cookie header", hints: []string{"authorization", "cookie"},
		re: regexp.MustCompile(`(?i)(\b(?:proxy-)?authorization|\b(?:set-)?cookie)(\\?"?[ \t]*:[ \t]*\\?"?)([^\r\n"'\\]*[^\s"'\\])`),
		replace: func(sub []string) (string, bool) {
			if sub[3] == Marker {
				return "", false
			}
			return sub[1] + sub[2] + Marker, true
		},
	},
	{
		// The whole word after Bearer: a token is base64url, and anything glued to it is
		// hidden with it.
		kind: "bearer token", hints: []string{"bearer"},
		re: regexp.MustCompile(`(?i)(\bbearer[ \t]+)([^\s"'\\,;)]+)`),
		replace: func(sub []string) (string, bool) {
			if sub[2] == Marker {
				return "", false
			}
			return sub[1] + Marker, true
		},
	},
	{
		// Basic credentials are base64 of user:password; ordinary words after "basic" are
		// left alone.
		kind: "basic credentials", hints: []string{"basic"},
		re: regexp.MustCompile(`(?i)(\bbasic[ \t]+)([^\s"'\\,;)]{6,})`),
		replace: func(sub []string) (string, bool) {
			v := sub[2]
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
				if b, err := enc.DecodeString(v); err == nil && strings.Contains(string(b), ":") {
					return sub[1] + Marker, true
				}
			}
			if v != Marker && strings.ContainsAny(v, "0123456789+/=") {
				return sub[1] + Marker, true
			}
			return "", false
		},
	},
	{
		// --password=v, -storepass=v, --api-key=v, --client-secret=v ...
		kind: "credential flag", hints: []string{"pass", "token", "secret", "key", "credential"},
		re:      regexp.MustCompile(`((?:^|[\s"'(=])--?(` + flagName + `)=)("[^"]*"|'[^']*'|[^\s"']+)`),
		replace: flagValue,
	},
	{
		// --password v, -storepass v ... After a space the value is not another flag.
		kind: "credential flag", hints: []string{"pass", "token", "secret", "key", "credential"},
		re:      regexp.MustCompile(`((?:^|[\s"'(=])--?(` + flagName + `)[ \t]+)("[^"]*"|'[^']*'|[^\s"'-][^\s"']*|-[^\s"'A-Za-z-][^\s"']*)`),
		replace: flagValue,
	},
	{
		// VAR=value (shell, env files), "name": "value" / name: value (JSON, YAML) and
		// name => value with a secret-looking name.
		kind: "secret assignment", hints: []string{"pass", "secret", "token", "key", "credential", "cookie", "signature", "pat", "auth", "sig", "pwd", "[redacted]"},
		re: regexp.MustCompile(`((?:^|[^A-Za-z0-9_.-])(?:\\?")?(` + secretName + `|\[REDACTED\])(?:\\?")?[ \t]*(?:=>|[=:])[ \t]*)` +
			valuePattern),
		replace: func(sub []string) (string, bool) {
			v := sub[3]
			if v == `""` || v == "''" || v == `\"\"` || variableRef.MatchString(v) {
				return "", false
			}
			if isCountName(sub[2]) && countValue.MatchString(v) {
				return "", false // "input_tokens":12, max_tokens=4096
			}
			return sub[1] + quoted(v), true
		},
	},
	{
		kind: "credentials in a URL", hints: []string{"://"},
		re: regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^\s:/@"'<>]*:)([^@\s"'<>]+)@`),
		replace: func(sub []string) (string, bool) {
			return sub[1] + Marker + "@", true
		},
	},
	{
		kind: "webhook URL", hints: []string{"hooks.slack.com", "discord"},
		re:      regexp.MustCompile(`(?i)(hooks\.slack\.com/services/|discord(?:app)?\.com/api/webhooks/)[A-Za-z0-9/_-]+`),
		replace: keepGroup1,
	},
	{
		// An AWS secret access key named as such in any syntax (covered by the assignment
		// rule too), or given positionally after its name.
		kind: "AWS secret key", hints: []string{"secret"},
		re: regexp.MustCompile(`(?i)(aws.?secret.?access.?key|secretaccesskey)((?:\\?")?\s*[:=]?\s*(?:\\?")?)([A-Za-z0-9/+=]{40})\b`),
		replace: func(sub []string) (string, bool) {
			return sub[1] + sub[2] + Marker, true
		},
	},
	{kind: "AWS access key", hints: []string{"akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "abia", "acca"}, re: regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[A-Z0-9]{16}\b`), replace: whole},
	{kind: "GitHub token", hints: []string{"gh", "github_pat_"}, re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{22,})`), replace: whole},
	{kind: "GitLab token", hints: []string{"gl"}, re: regexp.MustCompile(`\bgl(?:pat|dt|rt|ptt|soat|oas|cbt|ft|imt|agent)-[A-Za-z0-9_-]{20,}`), replace: whole},
	{kind: "Slack token", hints: []string{"xox", "xapp-"}, re: regexp.MustCompile(`\b(?:xox[abprseo]-[A-Za-z0-9-]{8,}|xapp-[0-9]-[A-Za-z0-9-]{10,})`), replace: whole},
	// OpenAI (sk-, sk-proj-, sk-svcacct-) and Anthropic (sk-ant-api03-, sk-ant-admin01-).
	{kind: "OpenAI or Anthropic key", hints: []string{"sk-"}, re: regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), replace: whole},
	{kind: "Stripe key", hints: []string{"k_live_", "k_test_", "whsec_"}, re: regexp.MustCompile(`\b(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{20,})`), replace: whole},
	{kind: "Google key", hints: []string{"aiza", "ya29."}, re: regexp.MustCompile(`\b(?:AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,})`), replace: whole},
	{kind: "npm token", hints: []string{"npm_"}, re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{30,}`), replace: whole},
	{kind: "PyPI token", hints: []string{"pypi-"}, re: regexp.MustCompile(`\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{20,}`), replace: whole},
	{kind: "Hugging Face token", hints: []string{"hf_"}, re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), replace: whole},
	{kind: "Docker token", hints: []string{"dckr_pat_"}, re: regexp.MustCompile(`\bdckr_pat_[A-Za-z0-9_-]{20,}`), replace: whole},
	{kind: "DigitalOcean token", hints: []string{"_v1_"}, re: regexp.MustCompile(`\bdo[por]_v1_[a-f0-9]{64}`), replace: whole},
	{kind: "Vault token", hints: []string{"hvs.", "hvb.", "hvr."}, re: regexp.MustCompile(`\bhv[sbr]\.[A-Za-z0-9_-]{24,}`), replace: whole},
	{kind: "SendGrid key", hints: []string{"sg."}, re: regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`), replace: whole},
	{kind: "Shopify token", hints: []string{"shp"}, re: regexp.MustCompile(`\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`), replace: whole},
	{kind: "Telegram bot token", hints: []string{":aa"}, re: regexp.MustCompile(`\b[0-9]{8,10}:AA[0-9A-Za-z_-]{33}`), replace: whole},
	{kind: "age secret key", hints: []string{"age-secret-key-"}, re: regexp.MustCompile(`AGE-SECRET-KEY-1[0-9A-Z]{58}`), replace: whole},
	{kind: "JWT", hints: []string{"eyj"}, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`), replace: whole},
}

// maxPasses bounds the passes String makes to reach text it no longer changes. One
// rule's replacement can expose another rule's match; a few passes settle it.
const maxPasses = 6

// String removes credentials from s before it is stored or shown (see the package
// documentation for what is found). String is idempotent.
func String(s string) string {
	out, _ := redact(s)
	return out
}

// Kinds lists the kinds of credential String would remove from s, for a caller that
// refuses text with credentials instead of storing it redacted.
func Kinds(s string) []string {
	_, kinds := redact(s)
	return kinds
}

func redact(s string) (string, []string) {
	var kinds []string
	for range maxPasses {
		out, k := pass(s)
		kinds = appendNew(kinds, k...)
		if out == s {
			break
		}
		s = out
	}
	return s, kinds
}

// pass applies every rule once, then the per-command flag rules.
func pass(s string) (string, []string) {
	var kinds []string
	lower := strings.ToLower(s)
	for _, r := range rules {
		if !hinted(lower, r.hints) {
			continue
		}
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
			lower = strings.ToLower(s)
		}
	}
	if out := commandFlagsInText(s); out != s {
		s = out
		kinds = append(kinds, commandFlagKind)
	}
	return s, kinds
}

func hinted(lower string, hints []string) bool {
	for _, h := range hints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return len(hints) == 0
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		seen := false
		for _, l := range list {
			seen = seen || l == it
		}
		if !seen {
			list = append(list, it)
		}
	}
	return list
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

// StringWithSecrets is String that also hides every exact value in secrets (the values
// a caller injected, which have no recognisable shape). Text already redacted is left
// as it is, so the result is idempotent too.
func StringWithSecrets(s string, secrets []string) string {
	values := sortedValues(secrets)
	if len(values) == 0 {
		return String(s)
	}
	// Shapes first: a value inside a key (an injected API key is one) must not break the
	// key's shape before it is seen.
	return String(hideValues(String(s), values))
}

// sortedValues keeps the non-empty values, longest first (so a value containing another
// is hidden whole).
func sortedValues(secrets []string) []string {
	var out []string
	for _, v := range secrets {
		if v == "" {
			continue
		}
		out = appendNew(out, v)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// hideValues replaces each value outside the markers already in s. Every boundary
// between the pieces left over is a marker: one that was there, or a hidden value.
func hideValues(s string, values []string) string {
	if len(values) == 0 {
		return s
	}
	pieces := strings.Split(s, Marker)
	for _, v := range values {
		var next []string
		for _, p := range pieces {
			next = append(next, strings.Split(p, v)...)
		}
		pieces = next
	}
	return strings.Join(pieces, Marker)
}
