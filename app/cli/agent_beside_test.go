package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// TestHookWithoutAgentBinary: with no airlock-agent beside airlock (the test binary has
// none), `airlock hook` still answers: ask for Claude Code, deny for Codex, which takes no
// ask and runs a call whose hook answered what it does not read.
func TestHookWithoutAgentBinary(t *testing.T) {
	for kind, want := range map[string]string{"claude": "ask", "codex": "deny"} {
		var out, errb bytes.Buffer
		root := NewRoot(&out, &errb, os.Getenv)
		root.SetArgs([]string{"hook", kind})
		if err := root.Execute(); err != nil {
			t.Fatalf("hook %s: %v", kind, err)
		}
		var a struct {
			HookSpecificOutput struct{ PermissionDecision string } `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out.Bytes(), &a); err != nil || a.HookSpecificOutput.PermissionDecision != want {
			t.Errorf("hook %s answered %q (%v), want %s", kind, out.String(), err, want)
		}
	}
}
