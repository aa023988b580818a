package redact

import (
	"regexp"
	"strings"
)

const commandFlagKind = "password flag"

// family says how a program takes a password on its command line besides the long
// flags every rule covers.
type family struct {
	// attached are short flags whose value is glued to them (mysql -pSECRET).
	attached []string
	// separate are short flags whose value may also be the next word (sshpass -p SECRET).
	separate []string
	// after, when set, is the part of the value that is secret: what follows its first
	// occurrence (curl -u user:SECRET, smbclient -U user%SECRET, openssl -passin pass:SECRET).
	after string
	// needsWord, when set, is a word that must come first (docker login -p, not docker
	// run -p 8080:80).
	needsWord string
}

var families = map[string]family{}

func init() {
	for _, p := range []string{"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mysqlpump", "mysqlsh", "mariadb", "mariadb-dump", "mariadb-admin"} {
		families[p] = family{attached: []string{"-p"}}
	}
	families["sshpass"] = family{separate: []string{"-p"}}
	for _, p := range []string{"docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "crane"} {
		families[p] = family{separate: []string{"-p"}, needsWord: "login"}
	}
	families["redis-cli"] = family{separate: []string{"-a"}}
	for _, p := range []string{"mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport"} {
		families[p] = family{separate: []string{"-p"}}
	}
	families["sqlcmd"] = family{separate: []string{"-P"}}
	families["bcp"] = family{separate: []string{"-P"}}
	families["curl"] = family{separate: []string{"-u", "--user", "-U", "--proxy-user"}, after: ":"}
	families["smbclient"] = family{separate: []string{"-U", "--user"}, after: "%"}
	families["openssl"] = family{separate: []string{"-passin", "-passout", "-pass"}, after: "pass:"}
}

// commandFlags finds the words of a command line that are passwords by the program's own
// flags: it returns, for each word, its replacement, or "" to keep it. newCommand[i]
// says that word i starts a new command (after a newline or a shell operator).
func commandFlags(words []string, newCommand []bool) []string {
	out := make([]string, len(words))
	var fam *family
	sawWord := false
	for i := 0; i < len(words); i++ {
		w := words[i]
		if newCommand[i] {
			fam, sawWord = nil, false
		}
		if f, ok := families[program(w)]; ok {
			fam, sawWord = &f, f.needsWord == ""
			continue
		}
		if fam == nil {
			continue
		}
		if !sawWord {
			sawWord = unquote(w) == fam.needsWord
			continue
		}
		for _, fl := range fam.attached {
			if v, ok := strings.CutPrefix(w, fl); ok && v != "" {
				if r, changed := secretPart(v, fam.after); changed {
					out[i] = fl + r
				}
			}
		}
		for _, fl := range fam.separate {
			switch {
			case w == fl && i+1 < len(words) && !newCommand[i+1]:
				if r, changed := secretPart(words[i+1], fam.after); changed {
					out[i+1] = r
				}
				i++
			case strings.HasPrefix(w, fl+"="):
				if r, changed := secretPart(w[len(fl)+1:], fam.after); changed {
					out[i] = fl + "=" + r
				}
			case len(fl) == 2 && strings.HasPrefix(w, fl) && len(w) > 2:
				if r, changed := secretPart(w[2:], fam.after); changed {
					out[i] = fl + r
				}
			}
		}
		if strings.HasSuffix(w, ";") {
			fam, sawWord = nil, false
		}
	}
	return out
}

// program is the command name a word stands for: its base name, without quotes.
func program(w string) string {
	w = unquote(w)
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		w = w[i+1:]
	}
	return w
}

func unquote(w string) string {
	return strings.Trim(w, `"'`)
}

// secretPart redacts value v (or the part of it after sep), keeping its quotes. changed
// is false when there is nothing to hide: no sep, an empty or already redacted secret,
// a variable reference or a shell operator.
func secretPart(v, sep string) (string, bool) {
	if shellOperator(v) {
		return v, false
	}
	lead, rest := "", v
	if sep != "" {
		i := strings.Index(v, sep)
		if i < 0 {
			return v, false
		}
		lead, rest = v[:i+len(sep)], v[i+len(sep):]
	}
	open := ""
	if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		open, rest = rest[:1], rest[1:]
	}
	closing := ""
	if strings.HasSuffix(rest, `"`) || strings.HasSuffix(rest, "'") {
		closing, rest = rest[len(rest)-1:], rest[:len(rest)-1]
	}
	if rest == "" || rest == Marker || variableRef.MatchString(rest) {
		return v, false
	}
	if strings.HasPrefix(lead, `"`) || strings.HasPrefix(lead, "'") {
		// The quote opened before sep (curl -u 'bob:pw'): keep the closing one.
		return lead + Marker + closing, true
	}
	return lead + open + Marker + closing, true
}

var wordRe = regexp.MustCompile(`\S+`)

// commandFlagsInText applies commandFlags to the words of free text.
func commandFlagsInText(s string) string {
	if !mayHaveCommandFlags(s) {
		return s
	}
	idx := wordRe.FindAllStringIndex(s, -1)
	words := make([]string, len(idx))
	newCmd := make([]bool, len(idx))
	prevEnd := 0
	for i, m := range idx {
		words[i] = s[m[0]:m[1]]
		gap := s[prevEnd:m[0]]
		newCmd[i] = i == 0 || strings.ContainsAny(gap, "\n\r") || isOperator(words[max(i-1, 0)])
		prevEnd = m[1]
	}
	repl := commandFlags(words, newCmd)
	var b strings.Builder
	last := 0
	for i, m := range idx {
		if repl[i] == "" {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(repl[i])
		last = m[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isOperator(w string) bool {
	switch w {
	case ";", "&&", "||", "|", "&", "|&":
		return true
	}
	return false
}

// mayHaveCommandFlags is a cheap test that s names one of the programs.
func mayHaveCommandFlags(s string) bool {
	for _, p := range []string{"mysql", "mariadb", "sshpass", "login", "redis-cli", "mongo", "sqlcmd", "bcp", "curl", "smbclient", "openssl"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
