package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoSurfaceResolvesOnItsOwn holds the code to the "one resolution" of docs/ARCHITECTURE.md: outside this
// package and the core's side of it (app/resolve.go), no code computes a sandbox policy or
// the permission settings itself — that is how the surfaces drifted apart.
func TestNoSurfaceResolvesOnItsOwn(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]string{
		"app/policy/policy.go":            "the one resolution",
		"app/resolve.go":                  "the core's side of it (the permission settings of a request)",
		"sandbox/bench/execbench/main.go": "a benchmark of the bare sandbox against raw bubblewrap",
	}
	call := regexp.MustCompile(`\b(sandbox\.Resolve|sandbox\.ResolveGlobal|permission\.Resolve)\(`)
	var found []string
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", "frontend", "tools", "build":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := call.FindString(line); m != "" && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				if _, ok := allowed[rel]; !ok {
					found = append(found, fmt.Sprintf("%s:%d: %s", rel, i+1, strings.TrimSpace(line)))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("resolves a policy on its own (call app/policy.Resolve, or the core's resolve.go): %s", f)
	}
}
