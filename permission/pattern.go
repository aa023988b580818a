package permission

import (
	"strings"
	"unicode/utf8"
)

// Pattern is a compiled rule or grant pattern: `*` matches any run of characters
// (spaces and slashes included), `?` matches exactly one character, everything else
// matches itself. A pattern ending in " *" also matches the bare prefix, so
// "git status *" matches "git status" as well as "git status --short".
type Pattern struct {
	src    string
	prefix string // literal text before the first wildcard: a fast reject
	bare   string // for a trailing " *": the pattern without it ("" otherwise)
	glob   bool   // the pattern has a wildcard
}

// CompilePattern compiles a pattern. Every string is a valid pattern.
func CompilePattern(p string) Pattern {
	c := Pattern{src: p}
	i := strings.IndexAny(p, "*?")
	if i < 0 {
		c.prefix = p
		return c
	}
	c.glob = true
	c.prefix = p[:i]
	if strings.HasSuffix(p, " *") {
		c.bare = strings.TrimSuffix(p, " *")
	}
	return c
}

// String returns the pattern as written.
func (c Pattern) String() string { return c.src }

// Match reports whether s matches the whole pattern.
func (c Pattern) Match(s string) bool {
	if !c.glob {
		return s == c.src
	}
	if c.bare != "" && len(c.bare) < len(c.prefix) {
		// The only wildcard is the trailing " *": the bare prefix is literal.
		if s == c.bare {
			return true
		}
	}
	if !strings.HasPrefix(s, c.prefix) {
		return false
	}
	rest := s[len(c.prefix):]
	if c.bare != "" && len(c.bare) >= len(c.prefix) && globMatch(c.bare[len(c.prefix):], rest) {
		return true
	}
	return globMatch(c.src[len(c.prefix):], rest)
}

// globMatch matches s against p with `*` and `?`, in linear time with one backtrack
// point (the classic wildcard algorithm).
func globMatch(p, s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				_, w := utf8.DecodeRuneInString(s[si:])
				pi++
				si += w
				continue
			default:
				if p[pi] == s[si] {
					pi++
					si++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Backtrack: let the last star swallow one more character.
		_, w := utf8.DecodeRuneInString(s[starS:])
		starS += w
		pi, si = starP+1, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
