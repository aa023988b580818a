package api

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// FuzzShellJoin: a POSIX shell's parser reads ShellJoin's line back as exactly argv,
// whatever the arguments hold (quotes, newlines, $, globs, control bytes).
func FuzzShellJoin(f *testing.F) {
	for _, seed := range []string{"", "plain", "a b", "it's", `"$HOME"`, "*", "a\nb", "x\x01y", "--flag=v;rm -rf /", "~user"} {
		f.Add(seed, "tail")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsRune(a+b, 0) || !utf8.ValidString(a) || !utf8.ValidString(b) || strings.Contains(a+b, "\r\n") {
			// No argument holds a NUL byte; the parser reads UTF-8 only, and reads a
			// quoted CR LF as LF (a shell keeps both).
			t.Skip("outside what the parser reads back faithfully")
		}
		argv := []string{"cmd", a, b}
		line := ShellJoin(argv)
		file, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(line), "")
		if err != nil {
			t.Fatalf("%q does not parse: %v", line, err)
		}
		call, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
		if len(file.Stmts) != 1 || !ok {
			t.Fatalf("%q is not one simple command", line)
		}
		got, err := expand.Fields(&expand.Config{}, call.Args...)
		if err != nil || !slices.Equal(got, argv) {
			t.Fatalf("%q reads back as %q (%v), want %q", line, got, err, argv)
		}
	})
}
