package api

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestToolNamesAreDeclaredOnce: outside this package no production code spells a tool
// name as a string: every package refers to these constants (a name spelled in three
// places drifted before).
func TestToolNamesAreDeclaredOnce(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, 0, len(Tools))
	for _, name := range Tools {
		if name == ToolBash || name == ToolExec {
			continue // also ordinary words in commands and argv ("bash -c", "exec")
		}
		quoted = append(quoted, regexp.QuoteMeta(`"`+name+`"`))
	}
	literal := regexp.MustCompile(strings.Join(quoted, "|"))
	var found []string
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", "frontend", "tools", "build", "api":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for i, line := range strings.Split(string(data), "\n") {
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "//") || strings.Contains(line, "jsonschema:") {
				continue
			}
			if m := literal.FindString(line); m != "" {
				found = append(found, fmt.Sprintf("%s:%d: %s", rel, i+1, trimmed))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("a tool name spelled out (use the api constant): %s", f)
	}
}
