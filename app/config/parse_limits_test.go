package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2/unstable"
)

func TestParseRefusesOversize(t *testing.T) {
	big := append([]byte("# padding\n"), make([]byte, MaxFileSize)...)
	for i := range big[10:] {
		big[10+i] = '#'
	}
	_, err := Parse("config.toml", big)
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(ce.Error(), "over the 4194304-byte limit") {
		t.Fatalf("Parse of %d bytes = %v, want a size problem", len(big), err)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); !errors.As(err, &ce) || ce.Path != path || !strings.Contains(ce.Problems[0].Message, "limit") {
		t.Fatalf("ReadFile of an oversize file = %v, want a size problem", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.toml")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile of a missing file = %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(path, []byte("approval_policy = \"never\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(path); err != nil || string(data) != "approval_policy = \"never\"\n" {
		t.Fatalf("ReadFile = %q, %v", data, err)
	}
}

// The positions found through the line index are those go-toml's Shape gives.
func TestKeyPositionsMatchShape(t *testing.T) {
	doc := []byte("a = 1\r\n\n[isolation]\n  backend = \"os\" # ü\n[[permission.rules]]\ntool = \"bash\"\n\t action = \"allow\"\n\"x.y\" = 2\n")
	lines := newLineStarts(doc)
	var p unstable.Parser
	p.Reset(doc)
	n := 0
	for p.NextExpression() {
		it := p.Expression().Key()
		for it.Next() {
			node := it.Node()
			want := p.Shape(node.Raw).Start
			line, col := lines.at(int(node.Raw.Offset))
			if line != want.Line || col != want.Column {
				t.Errorf("key %q at %d:%d, Shape says %d:%d", node.Data, line, col, want.Line, want.Column)
			}
			n++
		}
	}
	if n < 6 {
		t.Fatalf("only %d keys checked", n)
	}
}

// A config of 20,000 rules parses, a problem in its last rule is placed exactly, and the
// work per rule does not grow with the number of rules (allocations are counted, not
// time).
func TestManyRulesParse(t *testing.T) {
	data := manyRules(20000)
	f, err := Parse("config.toml", data)
	if err != nil || len(f.Permission.Rules) != 20000 {
		t.Fatalf("Parse: %d rules, %v", len(f.Permission.Rules), err)
	}
	bad := append(append([]byte{}, data...), "[[permission.rules]]\ntool = \"bash\"\naction = \"maybe\"\n"...)
	_, err = Parse("config.toml", bad)
	var ce *Error
	wantLine := strings.Count(string(data), "\n") + 1
	if !errors.As(err, &ce) || ce.Problems[0].Line != wantLine || !strings.Contains(ce.Problems[0].Message, "rule 20001") {
		t.Fatalf("Parse of a bad last rule = %v, want line %d", err, wantLine)
	}

	small, large := manyRules(2000), manyRules(20000)
	perRule := func(data []byte, n int) float64 {
		return testing.AllocsPerRun(2, func() { _, _ = Parse("config.toml", data) }) / float64(n)
	}
	a, b := perRule(small, 2000), perRule(large, 20000)
	if b > 1.5*a {
		t.Fatalf("allocations per rule grow with the rule count: %.1f at 2,000 rules, %.1f at 20,000", a, b)
	}
	t.Logf("allocations per rule: %.1f at 2,000 rules, %.1f at 20,000", a, b)
}
