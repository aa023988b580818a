package permission

import "regexp"

// secretShapes are credentials that must not reach the audit table.
var secretShapes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?i)\b([A-Z0-9_]*(?:PASSWORD|PASSWD|TOKEN|SECRET|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)[A-Z0-9_]*)=("[^"]*"|'[^']*'|\S+)`), "$1=***"},
	{regexp.MustCompile(`(?i)(--?(?:password|passwd|token|secret|api-key|access-key)(?:=|\s+))("[^"]*"|'[^']*'|\S+)`), "$1***"},
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`), "$1 ***"},
	{regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`), "***"},
	{regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,})\b`), "***"},
	{regexp.MustCompile(`(://[^:/@\s]+:)[^@\s]+@`), "$1***@"},
}

// Redact removes credential shapes from text before it is stored.
func Redact(s string) string {
	for _, r := range secretShapes {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}
