package config

import (
	"regexp"
	"testing"
)

// bareKey is TOML's bare key, as the expression it replaced (compiled at every start).
func TestBareKey(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	for _, k := range []string{"", "a", "sandbox_mode", "writable-roots", "A9_-z", "a.b", "a b", "é", "a\n", "\na", `"a"`, "a=b", "ключ", "x\x00"} {
		if got, want := bareKey(k), re.MatchString(k); got != want {
			t.Errorf("bareKey(%q) = %v, want %v", k, got, want)
		}
		if got := encodeKey(k); bareKey(k) != (got == k) {
			t.Errorf("encodeKey(%q) = %q", k, got)
		}
	}
}
