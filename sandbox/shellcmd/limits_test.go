package shellcmd

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseLimits(t *testing.T) {
	deep := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	refused := []struct {
		name, src string
		want      error
	}{
		{"too long", "echo " + strings.Repeat("a", MaxSourceBytes), ErrTooLarge},
		{"58 KiB of $(", deep("$(", "x", ")", 29<<10), ErrTooDeep},
		{"quoted $(", deep(`echo "$(`, "x", `)"`, MaxNesting), ErrTooDeep},
		{"backticks", deep("echo \"`", "x", "`\"", MaxNesting), ErrTooDeep},
		{"subshells", deep("(", "x", ")", MaxNesting+1), ErrTooDeep},
		{"groups", deep("{ ", "x; ", "}; ", MaxNesting+1), ErrTooDeep},
		{"ifs", deep("if true; then ", "x", "; fi", MaxNesting+1), ErrTooDeep},
		{"whiles", deep("while ", "x", "; do :; done", MaxNesting+1), ErrTooDeep},
		{"parameter expansions", deep("${a:-", "x", "}", MaxNesting+1), ErrTooDeep},
		{"arithmetic", "echo " + deep("$((", "1", "))", MaxNesting), ErrTooDeep},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.src)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), "parse shell command") {
				t.Fatalf("error %q does not say what failed", err)
			}
		})
	}
	// What people write stays well inside the limits, quotes and here-documents with
	// brackets included.
	accepted := []string{
		deep("$(", "x", ")", MaxNesting-1),
		deep("(", "x", ")", MaxNesting),
		"echo '" + strings.Repeat("(", 1000) + "'",
		`echo "` + strings.Repeat(`\(`, 1000) + `"`,
		"echo " + strings.Repeat(`\(`, 1000),
		"cat > f.json <<'EOF'\n" + strings.Repeat(`{"a": [1, {"b": 2}]}, `, 2000) + "\nEOF",
		"case $x in a) echo a;; b) echo b;; *) echo c;; esac",
		"for i in 1 2 3; do if [ $i -gt 1 ]; then echo \"$(date) $i\"; fi; done",
		"echo for if while case; grep -r 'if (x) {' . # don't (",
		"x=$'it\\'s (' ; echo \"$x\"",
		"echo " + strings.Repeat("a", MaxSourceBytes-10),
	}
	for _, src := range accepted {
		if _, err := Parse(src); err != nil {
			t.Errorf("Parse(%.60q…) = %v, want it parsed", src, err)
		}
	}
}

// A literal script a shell runs that is over the limits, or does not parse, is reported
// on the command, so that callers know what was not seen.
func TestNestedError(t *testing.T) {
	deep := strings.Repeat("$(", 100) + strings.Repeat(")", 100)
	s, err := Parse(`sh -c '` + deep + `'`)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(s.Commands[0].NestedError, ErrTooDeep) {
		t.Fatalf("NestedError = %v, want ErrTooDeep", s.Commands[0].NestedError)
	}
	s, _ = Parse("bash -c 'rm -rf ~\n('")
	if s.Commands[0].NestedError == nil || errors.Is(s.Commands[0].NestedError, ErrTooDeep) {
		t.Fatalf("NestedError = %v, want a parse error", s.Commands[0].NestedError)
	}
	s, _ = Parse("bash -c 'ls'")
	if s.Commands[0].NestedError != nil {
		t.Fatalf("NestedError = %v for a good script", s.Commands[0].NestedError)
	}
}

func TestEvaluations(t *testing.T) {
	tests := []struct {
		src  string
		want []string // kind:text:vars of each evaluation
	}{
		{`echo $((x + 1))`, []string{"arithmetic:x + 1:x"}},
		{`(( a[i] ))`, []string{"arithmetic:a[i]:a,a,i", "arithmetic:i:i"}},
		{`let y=x+1`, []string{"arithmetic:y=x+1:y,x"}},
		{`for ((i=0; i<n; i++)); do :; done`, []string{"arithmetic:i=0:i", "arithmetic:i<n:i,n", "arithmetic:i++:i"}},
		{`[[ -v $x ]]`, []string{"name:$x:x"}},
		{`[[ -v 'a[$(id)]' ]]`, []string{"name:'a[$(id)]':"}},
		{`[[ $x -eq 1 ]]`, []string{"arithmetic:$x:x", "arithmetic:1:"}},
		{`[[ $x == 1 ]]`, nil},
		{`echo ${!ref}`, []string{"name:${!ref}:ref"}},
		{`echo ${s:off:2}`, []string{"arithmetic:off:off", "arithmetic:2:"}},
		{`echo $((1+2)) "$x"`, []string{"arithmetic:1+2:"}},
		{`sh -c 'echo $((y))'`, []string{"arithmetic:y:y"}},
	}
	for _, tt := range tests {
		s, err := Parse(tt.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.src, err)
		}
		var got []string
		for _, e := range s.Evaluations {
			got = append(got, string(e.Kind)+":"+e.Text.Raw+":"+strings.Join(e.Vars, ","))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q) evaluations = %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestPipesAndHeredocs(t *testing.T) {
	s, err := Parse("echo a | base64 -d | sudo sh; cat <<'EOF' | (cat; bash)\nrm -rf ~\nEOF\nls")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		prog  string
		piped bool
		from  int
	}
	var got []row
	for _, c := range s.Commands {
		got = append(got, row{c.Program(), c.PipedIn, c.PipedFrom})
	}
	want := []row{{"echo", false, 0}, {"base64", true, 1}, {"sh", true, 2}, {"cat", false, 0}, {"cat", true, 0}, {"bash", true, 0}, {"ls", false, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pipes = %+v, want %+v", got, want)
	}
	body := s.Commands[3].Redirects[0].Body
	if !body.Literal || body.Value != "rm -rf ~\n" {
		t.Fatalf("heredoc body = %+v", body)
	}
	s, _ = Parse("bash <<EOF\nrm $x\nEOF")
	if b := s.Commands[0].Redirects[0].Body; b.Literal {
		t.Fatalf("heredoc with an expansion is literal: %+v", b)
	}
}

func TestDeclCommands(t *testing.T) {
	s, err := Parse(`export A=1 B; declare -n r=x; local y="$z"`)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, c := range s.Commands {
		row := argv(c)
		for _, a := range c.Assigns {
			row = append(row, a.Name+"="+a.Value.Raw)
		}
		got = append(got, row)
	}
	want := [][]string{{"export", "B", "A=1"}, {"declare", "-n", "r=x"}, {"local", `y="$z"`}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decl commands = %q, want %q", got, want)
	}
}

func TestParseText(t *testing.T) {
	s, err := ParseText(`a[$(rm -rf ~)]` + "`id`")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Commands {
		if !c.Substituted {
			t.Errorf("%q not marked substituted", c.Source)
		}
		got = append(got, strings.Join(argv(c), " "))
	}
	if want := []string{"rm -rf ~", "id"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseText commands = %q, want %q", got, want)
	}
	if _, err := ParseText(strings.Repeat("$(", 1000)); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("ParseText of deep text = %v, want ErrTooDeep", err)
	}
}
