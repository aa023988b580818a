package config

import (
	"fmt"
	"strings"
	"testing"
)

// manyRules renders a config.toml with n permission rules (about 80 bytes each).
func manyRules(n int) []byte {
	var b strings.Builder
	b.WriteString("approval_policy = \"on-request\"\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "[[permission.rules]]\ntool = \"bash\"\npattern = \"tool-%d run *\"\naction = \"allow\"\n\n", i)
	}
	return []byte(b.String())
}

// BenchmarkParseManyRules parses a config of 20,000 rules (it took a minute when every
// key's position was found by counting lines from the start of the file).
func BenchmarkParseManyRules(b *testing.B) {
	data := manyRules(20000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse("config.toml", data); err != nil {
			b.Fatal(err)
		}
	}
}
