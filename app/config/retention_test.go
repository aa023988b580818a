package config

import (
	"errors"
	"strings"
	"testing"
)

// The retention and backlog keys of [dispatch]: their defaults are listed by `airlock
// config show`, written values are layered, and a value that makes no sense is a mistake
// with its line and the way out.
func TestDispatchRetentionKeys(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      map[string]any // effective values
		problem   string         // "" when the file is valid
	}{
		{"defaults", "", map[string]any{"dispatch.run_max_age": "2160h", "dispatch.run_max_count": 10000, "dispatch.max_backlog": 10}, ""},
		{"written", "[dispatch]\nrun_max_age = \"48h\"\nrun_max_count = 50\nmax_backlog = 3\n",
			map[string]any{"dispatch.run_max_age": "48h", "dispatch.run_max_count": int64(50), "dispatch.max_backlog": int64(3)}, ""},
		{"age not a duration", "[dispatch]\nrun_max_age = \"90 days\"\n", nil, "at least an hour"},
		{"age too short", "[dispatch]\nrun_max_age = \"10m\"\n", nil, "at least an hour"},
		{"count zero", "[dispatch]\nrun_max_count = 0\n", nil, "keep at least 1 run record per task"},
		{"backlog zero", "[dispatch]\nmax_backlog = 0\n", nil, "between 1 and 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("config.toml", []byte(tc.src))
			if tc.problem != "" {
				var ce *Error
				if !errors.As(err, &ce) || !strings.Contains(ce.Error(), tc.problem) || ce.Problems[0].Line != 2 {
					t.Fatalf("Parse = %v, want a problem on line 2 saying %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := Effective(f, "config.toml", func(string) string { return "" }, nil)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]any{}
			for _, s := range got {
				seen[s.Key] = s.Value
			}
			for k, v := range tc.want {
				if g, ok := seen[k]; !ok || !sameNumber(g, v) {
					t.Errorf("%s = %v (%T), want %v", k, g, g, v)
				}
			}
		})
	}
}

// sameNumber compares values as the TOML decoder and the defaults write them (int, int64).
func sameNumber(a, b any) bool {
	toInt := func(v any) (int64, bool) {
		switch n := v.(type) {
		case int:
			return int64(n), true
		case int64:
			return n, true
		}
		return 0, false
	}
	x, okA := toInt(a)
	y, okB := toInt(b)
	if okA && okB {
		return x == y
	}
	return a == b
}
