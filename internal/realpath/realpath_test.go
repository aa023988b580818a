package realpath

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// chain makes links l1 -> first, l2 -> l1, … ln -> l(n-1) in dir and returns ln: a
// path that takes n links to resolve.
func chain(t *testing.T, dir, first string, n int) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	target := first
	for i := 1; i <= n; i++ {
		name := "l" + strconv.Itoa(i)
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		target = name
	}
	return filepath.Join(dir, target)
}

func TestResolve(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	for _, d := range []string{filepath.Join(ws, "sub"), filepath.Join(base, "outside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ target, name string }{
		{"../outside", "ws/up"},         // relative, out of ws
		{base + "/outside", "ws/abs"},   // absolute
		{"sub", "ws/sublink"},           // stays inside
		{"missing/x", "ws/dangling"},    // target does not exist
		{"loop-b", "ws/loop-a"},         // a loop
		{"loop-a", "ws/loop-b"},         //
		{".", "ws/self"},                // one link a time, many times in one path
		{"sublink/..", "ws/parentlink"}, // `..` after a link goes where the link leads
	} {
		if err := os.Symlink(l.target, filepath.Join(base, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	c40 := chain(t, filepath.Join(base, "c40"), "../ws", MaxLinks)
	c41 := chain(t, filepath.Join(base, "c41"), "../ws", MaxLinks+1)
	selfs := func(n int) string { return ws + strings.Repeat("/self", n) }

	tests := []struct {
		name    string
		path    string
		opt     Options
		want    string
		exists  bool
		loopErr bool
	}{
		{"plain", ws + "/sub", Options{}, ws + "/sub", true, false},
		{"dots and slashes", ws + "//./sub/../sub/", Options{}, ws + "/sub", true, false},
		{"relative link out", ws + "/up/x", Options{}, base + "/outside/x", false, false},
		{"absolute link", ws + "/abs", Options{}, base + "/outside", true, false},
		{"dotdot after a link", ws + "/up/../ws/file", Options{}, ws + "/file", true, false},
		{"link to link/..", ws + "/parentlink/file", Options{}, ws + "/file", true, false},
		{"missing rest kept as written", ws + "/new/a/../b", Options{}, ws + "/new/b", false, false},
		{"below a file", ws + "/file/x", Options{}, ws + "/file/x", false, false},
		{"dangling link", ws + "/dangling", Options{}, ws + "/missing/x", false, false},
		{"final link kept", ws + "/up", Options{NoFollowFinal: true}, ws + "/up", true, false},
		{"final link kept, inner followed", ws + "/sublink/../up", Options{NoFollowFinal: true}, ws + "/up", true, false},
		{"trailing slash follows", ws + "/up/", Options{NoFollowFinal: true}, base + "/outside", true, false},
		{"from a base", ws + "/sublink", Options{Base: ws}, ws + "/sub", true, false},
		{"a base is not used across ..", ws + "/sub/../up", Options{Base: ws}, base + "/outside", true, false},
		{"40 links in a chain", c40 + "/file", Options{}, ws + "/file", true, false},
		{"41 links in a chain", c41 + "/file", Options{}, "", false, true},
		{"40 links along the path", selfs(40) + "/file", Options{}, ws + "/file", true, false},
		{"41 links along the path", selfs(41) + "/file", Options{}, "", false, true},
		{"loop", ws + "/loop-a/x", Options{}, "", false, true},
		{"loop as the final link", ws + "/loop-a", Options{}, "", false, true},
		{"loop not followed at the end", ws + "/loop-a", Options{NoFollowFinal: true}, ws + "/loop-a", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, exists, err := Resolve(tc.path, tc.opt)
			if tc.loopErr {
				if !errors.Is(err, syscall.ELOOP) {
					t.Fatalf("Resolve(%s) = %q, %v; want an error that is ELOOP", tc.path, got, err)
				}
				return
			}
			if err != nil || got != tc.want || exists != tc.exists {
				t.Fatalf("Resolve(%s) = %q, %v, %v; want %q, %v", tc.path, got, exists, err, tc.want, tc.exists)
			}
		})
	}
}

func TestResolveNeedsAnAbsolutePath(t *testing.T) {
	for _, p := range []string{"", "rel/x", "./x"} {
		if _, _, err := Resolve(p, Options{}); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
			t.Errorf("Resolve(%q) = %v, want a clear error", p, err)
		}
	}
}

// FuzzResolve: whatever follows, a resolution that succeeds is absolute and clean.
func FuzzResolve(f *testing.F) {
	dir := f.TempDir()
	_ = os.MkdirAll(filepath.Join(dir, "a/b"), 0o755)
	_ = os.Symlink("../..", filepath.Join(dir, "a/b/up"))
	_ = os.Symlink("loop", filepath.Join(dir, "a/loop"))
	for _, s := range []string{"a/b", "a/b/up/x", "a/../..", "a/loop/x", "./a//b/", "a/b/../../../../etc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		got, _, err := Resolve(filepath.Join(dir, "x")+"/../"+rel, Options{})
		if err != nil {
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("Resolve gave a non-clean path %q", got)
		}
	})
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		path, root string
		want       bool
	}{
		{"/ws", "/ws", true},
		{"/ws/a/b", "/ws", true},
		{"/wsx", "/ws", false}, // a sibling that shares the prefix
		{"/", "/ws", false},
		{"/etc", "/", true},
		{"/", "/", true},
		{"ws", "/", false}, // not absolute: not resolved, so nowhere
	} {
		if got := Within(tc.path, tc.root); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.path, tc.root, got, tc.want)
		}
	}
}
