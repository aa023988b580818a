package cli

import (
	"bytes"
	"testing"
)

func TestPrintTable(t *testing.T) {
	type item struct {
		name string
		n    any
	}
	row := func(it item) []any { return []any{it.name, it.n, "end"} }
	header := []string{"NAME", "N", "LAST"}
	for _, tc := range []struct {
		name  string
		items []item
		empty string
		want  string
	}{
		{"empty list prints only the empty line", nil, "Nothing yet.", "Nothing yet.\n"},
		{"no empty line: the header alone", []item{}, "", "NAME  N  LAST\n"},
		{"rows align under the header", []item{{"a", 1}, {"longer-name", 12.5}}, "Nothing yet.",
			"NAME         N     LAST\n" +
				"a            1     end\n" +
				"longer-name  12.5  end\n"},
		{"cells print as %v does, a nil as <nil>", []item{{"x", nil}, {"y", []string{"p", "q"}}}, "",
			"NAME  N      LAST\n" +
				"x     <nil>  end\n" +
				"y     [p q]  end\n"},
		{"widths count characters, not bytes; an empty cell keeps its column", []item{{"ü", "wide — dash"}, {"b", ""}}, "",
			"NAME  N            LAST\n" +
				"ü     wide — dash  end\n" +
				"b                  end\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			printTable(&b, tc.items, tc.empty, header, row)
			if b.String() != tc.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tc.want)
			}
		})
	}
}
