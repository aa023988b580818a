package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CLI refuses an oversize config.toml as the daemon does, with a sentence that says
// what is wrong, instead of reading and parsing it.
func TestOversizeConfigRefusedByTheCLI(t *testing.T) {
	in := newInstance(t)
	cfg := filepath.Join(in.home, "config", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	rule := []byte("[[permission.rules]]\ntool = \"bash\"\npattern = \"npm run x *\"\naction = \"allow\"\n\n")
	if err := os.WriteFile(cfg, bytes.Repeat(rule, (5<<20)/len(rule)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, _ := in.run("config", "show")
	if !strings.Contains(out+stderr, "over the 4194304-byte limit for a config file") {
		t.Fatalf("config show did not refuse the oversize file:\nstdout %.500s\nstderr %.500s", out, stderr)
	}
	_, stderr, code := in.run("exec", "--", "true")
	if code == 0 || !strings.Contains(stderr, "over the 4194304-byte limit") {
		t.Fatalf("exec with an oversize config: exit %d, stderr %.500s", code, stderr)
	}
}
