package shellcmd

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wordFrom converts a syntax word, taking Raw from src.
func wordFrom(src string, w *syntax.Word) Word {
	if w == nil {
		return Word{}
	}
	out := Word{Raw: slice(src, w.Pos(), w.End())}
	var b strings.Builder
	if literalParts(&b, w.Parts, false) {
		out.Value = b.String()
		out.Literal = true
	}
	return out
}

// literalWord builds a literal word whose text is both Raw and Value.
func literalWord(s string) Word { return Word{Raw: s, Value: s, Literal: true} }

func slice(src string, from, to syntax.Pos) string {
	a, b := int(from.Offset()), int(to.Offset())
	if a < 0 || b > len(src) || a > b {
		return ""
	}
	return src[a:b]
}

// literalParts appends the quote-removed value of parts to b and reports
// whether every part is literal.
func literalParts(b *strings.Builder, parts []syntax.WordPart, inDouble bool) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if inDouble {
				b.WriteString(unescapeDouble(p.Value))
			} else {
				b.WriteString(unescapeBare(p.Value))
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(unescapeANSIC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			if !literalParts(b, p.Parts, true) {
				return false
			}
		case *syntax.ExtGlob:
			b.WriteString(p.Op.String())
			if p.Pattern != nil {
				b.WriteString(p.Pattern.Value)
			}
			b.WriteString(")")
		default:
			return false
		}
	}
	return true
}

func unescapeBare(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeANSIC decodes the common escapes of $'...'.
func unescapeANSIC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteString(`\x`)
				continue
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 8)
			b.WriteByte(byte(v))
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
