package ops

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// shellControl are the characters an assertion may never contain, quoted or not: an
// assertion is one command, never a list, pipeline, substitution or redirection.
const shellControl = ";&|`$<>\n\r\x00"

// ReadOnlyCommand is a verify assertion's command after parsing and the allowlist check.
type ReadOnlyCommand struct {
	Argv    []string // executed directly, without a shell
	Program string   // the base name of Argv[0]
}

// ParseReadOnlyCommand parses one assertion command line and checks it against the
// read-only allowlist (see allowlist.go for what each program may do).
//
// Syntax: words separated by spaces or tabs; 'single quotes' keep everything literally;
// "double quotes" keep everything except \" and \\; outside quotes a backslash escapes
// the next character. There is no expansion of any kind: no variables, no globs, no ~.
// Refused anywhere, even quoted: ; & | ` $ < > newline, carriage return, NUL. Refused
// unquoted: ( ) { } (they mean shell grouping). The program is a bare name (found on
// PATH) or an absolute path in /bin, /usr/bin, /usr/local/bin, /sbin or /usr/sbin.
func ParseReadOnlyCommand(line string) (ReadOnlyCommand, error) {
	if i := strings.IndexAny(line, shellControl); i >= 0 {
		return ReadOnlyCommand{}, fmt.Errorf("contains %q: shell control characters (; & | ` $ < > newline) are refused; "+
			"an assertion is a single read-only command, and each check can be its own assertion", line[i:i+1])
	}
	argv, err := splitWords(line)
	if err != nil {
		return ReadOnlyCommand{}, err
	}
	if len(argv) == 0 {
		return ReadOnlyCommand{}, errors.New("is empty: give a read-only command such as `sqlite3 -readonly db.sqlite .schema`")
	}
	prog := argv[0]
	if strings.Contains(prog, "/") {
		dir := path.Dir(prog)
		switch dir {
		case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin":
		default:
			return ReadOnlyCommand{}, fmt.Errorf("program %q: give a bare program name (found on PATH) or an absolute path in a system bin directory", prog)
		}
		if path.Clean(prog) != prog {
			return ReadOnlyCommand{}, fmt.Errorf("program %q: path is not clean", prog)
		}
		prog = path.Base(prog)
	}
	check, ok := readOnlyPrograms[prog]
	if !ok {
		return ReadOnlyCommand{}, fmt.Errorf("program %q is not on the read-only allowlist (%s)", prog, strings.Join(allowlistedPrograms(), ", "))
	}
	if err := check(argv[1:]); err != nil {
		return ReadOnlyCommand{}, fmt.Errorf("%s: %w", prog, err)
	}
	return ReadOnlyCommand{Argv: argv, Program: prog}, nil
}

// splitWords splits a command line into words with the quoting described on
// [ParseReadOnlyCommand].
func splitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("has an unterminated single quote")
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			closed := false
			for i++; i < len(line); i++ {
				d := line[i]
				if d == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\') {
					cur.WriteByte(line[i+1])
					i++
					continue
				}
				if d == '"' {
					closed = true
					break
				}
				cur.WriteByte(d)
			}
			if !closed {
				return nil, errors.New("has an unterminated double quote")
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(line) {
				return nil, errors.New("ends with a lone backslash")
			}
			cur.WriteByte(line[i+1])
			i++
			inWord = true
		case c == '(' || c == ')' || c == '{' || c == '}':
			return nil, fmt.Errorf("contains an unquoted %q: shell grouping is refused; quote it if it is part of an argument (e.g. SQL)", string(c))
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
