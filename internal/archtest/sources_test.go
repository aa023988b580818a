package archtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// scanSources calls match on every line of the module's non-test Go files outside skip
// (directory names) and reports each line it flags, as file:line: text.
func scanSources(t *testing.T, skip []string, match func(rel, line string) bool) []string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
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
			if rel, _ := filepath.Rel(root, path); contains(skip, rel) {
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
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if match(rel, line) {
				found = append(found, fmt.Sprintf("%s:%d: %s", rel, i+1, strings.TrimSpace(line)))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestNoSurfaceResolvesOnItsOwn holds the code to the "one resolution" of
// docs/ARCHITECTURE.md: outside app/policy and the core's side of it (app/resolve.go), no
// code computes a sandbox policy or the permission settings itself — that is how the
// surfaces drifted apart.
func TestNoSurfaceResolvesOnItsOwn(t *testing.T) {
	allowed := map[string]string{
		"app/policy/policy.go":            "the one resolution",
		"app/resolve.go":                  "the core's side of it (the permission settings of a request)",
		"sandbox/bench/execbench/main.go": "a benchmark of the bare sandbox against raw bubblewrap",
	}
	call := regexp.MustCompile(`\b(sandbox\.Resolve|sandbox\.ResolveGlobal|permission\.Resolve)\(`)
	for _, f := range scanSources(t, nil, func(rel, line string) bool {
		_, ok := allowed[rel]
		return !ok && call.MatchString(line)
	}) {
		t.Errorf("resolves a policy on its own (call app/policy.Resolve, or the core's resolve.go): %s", f)
	}
}

// TestToolNamesAreDeclaredOnce: outside package api no production code spells a tool name
// as a string: every package refers to its constants (a name spelled in three places
// drifted before).
func TestToolNamesAreDeclaredOnce(t *testing.T) {
	quoted := make([]string, 0, len(api.Tools))
	for _, name := range api.Tools {
		if name == api.ToolBash || name == api.ToolExec {
			continue // also ordinary words in commands and argv ("bash -c", "exec")
		}
		quoted = append(quoted, regexp.QuoteMeta(`"`+name+`"`))
	}
	literal := regexp.MustCompile(strings.Join(quoted, "|"))
	for _, f := range scanSources(t, []string{"api"}, func(_, line string) bool {
		return !strings.Contains(line, "jsonschema:") && literal.MatchString(line)
	}) {
		t.Errorf("a tool name spelled out (use the api constant): %s", f)
	}
}

// TestEventTopicsAreDeclaredOnce: outside package api no production code spells an event
// topic as a string: publishers and subscribers use api's constants, whose payload types
// api.Events declares (the topics were listed twice, and drifted).
func TestEventTopicsAreDeclaredOnce(t *testing.T) {
	quoted := make([]string, 0, len(api.Events))
	for _, e := range api.Events {
		quoted = append(quoted, regexp.QuoteMeta(`"`+e.Topic+`"`))
	}
	literal := regexp.MustCompile(strings.Join(quoted, "|"))
	for _, f := range scanSources(t, []string{"api"}, func(_, line string) bool { return literal.MatchString(line) }) {
		t.Errorf("an event topic spelled out (use the api constant): %s", f)
	}
}
