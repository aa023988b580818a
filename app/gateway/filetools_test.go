package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/internal/capped"
)

func TestReplaceExact(t *testing.T) {
	tests := []struct {
		name, content, old, new string
		all                     bool
		want                    string
		n                       int
		err                     string
	}{
		{"one occurrence", "a\nb\nc\n", "b", "B", false, "a\nB\nc\n", 1, ""},
		{"not found", "a\nb\n", "z", "Z", false, "", 0, "was not found"},
		{"whitespace must match", "\tfunc main() {\n", "    func main() {", "x", false, "", 0, "whitespace and indentation included"},
		{"not unique names the lines", "x\ny\nx\n", "x", "X", false, "", 0, "occurs 2 times (lines 1, 3)"},
		{"replace all", "x\ny\nx\n", "x", "X", true, "X\ny\nX\n", 2, ""},
		{"empty old", "abc", "", "x", false, "", 0, "old_string is empty"},
		{"no change", "abc", "b", "b", false, "", 0, "nothing would change"},
		{"multi-line", "a\nb\nc\n", "a\nb\n", "ab\n", false, "ab\nc\n", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, err := replaceExact(tt.content, tt.old, tt.new, tt.all)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want || n != tt.n {
				t.Fatalf("= %q, %d, %v; want %q, %d", got, n, err, tt.want, tt.n)
			}
		})
	}
}

func TestEditFileOnDisk(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(p, []byte("one\ntwo\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := editFile(plainOpen, p, "three", "3", false); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("missing text: err = %v", err)
	}
	if _, err := editFile(plainOpen, filepath.Join(dir, "absent.txt"), "a", "b", false); err == nil || !strings.Contains(err.Error(), "create it with write_file") {
		t.Fatalf("absent file: err = %v", err)
	}
	if n, err := editFile(plainOpen, p, "two", "2", false); err != nil || n != 1 {
		t.Fatalf("edit: %d, %v", n, err)
	}
	got, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(got) != "one\n2\n" || st.Mode().Perm() != 0o640 {
		t.Fatalf("file = %q mode %v; the edit must keep the mode", got, st.Mode().Perm())
	}
}

func TestGlobRegexp(t *testing.T) {
	tests := []struct {
		glob, path string
		match      bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "main.gox", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/main.go", true},
		{"src/*.ts", "src/a.ts", true},
		{"src/*.ts", "src/x/a.ts", false},
		{"*.{ts,js}", "a.js", true},
		{"*.{ts,js}", "a.rs", false},
		{"a?c", "abc", true},
		{"a.c", "abc", false},
	}
	for _, tt := range tests {
		re, err := globRegexp(tt.glob)
		if err != nil {
			t.Fatalf("%s: %v", tt.glob, err)
		}
		if re.MatchString(tt.path) != tt.match {
			t.Errorf("glob %q on %q: match %v, want %v", tt.glob, tt.path, !tt.match, tt.match)
		}
	}
	if _, err := globRegexp("*.{ts"); err == nil {
		t.Fatal("an unclosed { must be an error")
	}
}

func TestReadLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	_ = os.WriteFile(p, []byte("1\n2\n3\n4\n"), 0o644)
	got, err := readLines(nil, p, 2, 2)
	if err != nil || got != "2\n3\n[lines 2–3 of 4; call read_file with offset=4 for more]\n" {
		t.Fatalf("= %q, %v", got, err)
	}
	if got, _ := readLines(nil, p, 0, 0); got != "1\n2\n3\n4\n" {
		t.Fatalf("whole file = %q", got)
	}
	if _, err := readLines(nil, p, 9, 1); err == nil || !strings.Contains(err.Error(), "has 4 lines") {
		t.Fatalf("past the end: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "b")
	_ = os.WriteFile(bin, []byte{0x7f, 'E', 'L', 'F', 0, 0}, 0o644)
	if _, err := readLines(nil, bin, 0, 0); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Fatalf("binary: %v", err)
	}
}

func TestSearchFiles(t *testing.T) {
	dir := t.TempDir()
	for p, c := range map[string]string{"a.go": "package a\nfunc Main() {}\n", "sub/b.go": "func helper() {}\n", "c.txt": "func not go\n", ".git/x.go": "func hidden() {}\n"} {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		_ = os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
	}
	got, err := searchFiles(context.Background(), nil, searchFilesIn{Path: dir, Glob: "*.go", Regex: `^func`})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "a.go") + ":2: func Main() {}\n" + filepath.Join(dir, "sub/b.go") + ":1: func helper() {}\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	got, _ = searchFiles(context.Background(), nil, searchFilesIn{Path: dir, Glob: "sub/**"})
	if got != filepath.Join(dir, "sub/b.go")+"\n" {
		t.Fatalf("glob with a slash: %q", got)
	}
}

func TestShownOutput(t *testing.T) {
	c := capped.NewBuffer(5)
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v: it must take everything, or the command blocks", s, n, err)
		}
	}
	if got := shownOutput(c); got != "abcde\n[output cut at 5 of 10 bytes]" {
		t.Fatalf("= %q", got)
	}
}
