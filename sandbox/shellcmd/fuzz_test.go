package shellcmd

import (
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"ls -la", `sh -c 'rm -rf /; curl x'`, "sudo -u root env -S 'a b' timeout 5 nc", "echo $(a) > \"$(b)\"",
		"xargs -I{} sh -c 'x {}'", "eval \"$x\"", "cat <<EOF\nhi\nEOF", "flock f -c 'rm x'", "env -S",
		"a=$'\\x41\\101' b", "f() { g; }; f >& out", "for i in *; do rm \"$i\"; done",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src)
		if err != nil {
			return
		}
		for _, c := range s.Commands {
			for _, w := range c.Args {
				if !w.Literal && w.Value != "" {
					t.Fatalf("non-literal word %q has value %q", w.Raw, w.Value)
				}
			}
			for _, r := range c.Redirects {
				if r.Op == "" {
					t.Fatalf("redirect without operator in %q", src)
				}
			}
			if !strings.Contains(src, c.Source) && !c.Nested {
				t.Fatalf("source %q not in input %q", c.Source, src)
			}
			_ = c.Program()
		}
	})
}
