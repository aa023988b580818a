package shellcmd

import (
	"errors"
	"fmt"
)

// Limits on what Parse analyses. Hostile input must cost bounded work: a command is
// measured by one linear scan before anything is parsed, and refused past these.
const (
	// MaxSourceBytes is the longest command line (or nested script) that is parsed.
	MaxSourceBytes = 256 << 10
	// MaxNesting is the deepest nesting of substitutions, quotes, subshells, groups and
	// compound commands that is parsed. Every level repeats the text inside it in the
	// words of the level above, so deep nesting is what makes analysis grow with the
	// square of the length; no command a person writes comes close.
	MaxNesting = 64
)

var (
	// ErrTooLarge is returned (wrapped) for a command longer than MaxSourceBytes.
	ErrTooLarge = errors.New("the command is too long to check")
	// ErrTooDeep is returned (wrapped) for a command nested deeper than MaxNesting.
	ErrTooDeep = errors.New("the command is nested too deeply to check")
)

// checkLimits refuses src before any per-level work is done on it.
func checkLimits(src string) error {
	if len(src) > MaxSourceBytes {
		return fmt.Errorf("%w: %d bytes, over the limit of %d (split it, or put it in a script file)", ErrTooLarge, len(src), MaxSourceBytes)
	}
	if d := nesting(src, MaxNesting); d > MaxNesting {
		return fmt.Errorf("%w: more than %d levels of $( ), quotes, ( ), { } or if/while/for/case", ErrTooDeep, MaxNesting)
	}
	return nil
}

// nesting returns the maximum nesting depth of src, stopping as soon as it exceeds
// limit. It is a conservative lexical estimate (single quotes and backslashes are
// honoured; every (, $(, ${, {, `, double quote and compound keyword in command position
// opens a level), linear in len(src) and allocation-free up to limit levels.
func nesting(src string, limit int) int {
	const (
		code = iota
		dquote
		backtick
	)
	var stackBuf [MaxNesting + 2]byte
	stack := stackBuf[:0]
	mode := func() byte {
		if len(stack) == 0 {
			return code
		}
		switch stack[len(stack)-1] {
		case '"':
			return dquote
		case '`':
			return backtick
		}
		return code
	}
	max := 0
	push := func(c byte) bool {
		if len(stack) >= limit {
			max = limit + 1
			return false
		}
		stack = append(stack, c)
		if len(stack) > max {
			max = len(stack)
		}
		return true
	}
	pop := func(c byte) {
		if len(stack) > 0 && stack[len(stack)-1] == c {
			stack = stack[:len(stack)-1]
		}
	}
	cmdPos := true
	for i := 0; i < len(src); i++ {
		c := src[i]
		m := mode()
		if m == dquote {
			switch c {
			case '\\':
				i++
			case '"':
				pop('"')
			case '`':
				if !push('`') {
					return max
				}
			case '$':
				if i+1 < len(src) && (src[i+1] == '(' || src[i+1] == '{') {
					if !push(src[i+1]) {
						return max
					}
					i++
					cmdPos = src[i] == '('
				}
			}
			continue
		}
		switch c {
		case '\\':
			i++
			cmdPos = false
		case '\'':
			j := i + 1
			if i > 0 && src[i-1] == '$' { // $'…' honours \' inside
				for j < len(src) && src[j] != '\'' {
					if src[j] == '\\' {
						j++
					}
					j++
				}
			} else {
				for j < len(src) && src[j] != '\'' {
					j++
				}
			}
			i = j
			cmdPos = false
		case '"':
			if !push('"') {
				return max
			}
			cmdPos = false
		case '`':
			if m == backtick {
				pop('`')
				cmdPos = false
			} else {
				if !push('`') {
					return max
				}
				cmdPos = true
			}
		case '(', '{':
			if !push(c) {
				return max
			}
			cmdPos = true
		case ')':
			pop('(')
			cmdPos = false
		case '}':
			pop('{')
			cmdPos = false
		case ';', '&', '|', '\n':
			cmdPos = true
		case ' ', '\t':
		case '#':
			if i == 0 || src[i-1] == ' ' || src[i-1] == '\t' || src[i-1] == '\n' || src[i-1] == ';' {
				for i < len(src) && src[i] != '\n' {
					i++
				}
				cmdPos = true
			} else {
				cmdPos = false
			}
		default:
			j := i
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			if j == i {
				cmdPos = false
				continue
			}
			word := src[i:j]
			i = j - 1
			if !cmdPos {
				continue
			}
			switch word {
			case "if", "while", "until", "for", "select", "case":
				if !push('k') {
					return max
				}
			case "fi", "done", "esac":
				pop('k')
				cmdPos = false
			case "then", "do", "else", "elif", "!", "time":
			default:
				cmdPos = false
			}
		}
	}
	return max
}

func isWordByte(c byte) bool {
	return c == '_' || c == '!' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
