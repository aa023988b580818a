package permission

import (
	"context"
	"encoding/json"
	"testing"
)

// TestForkBombIsP2: a fork bomb asks every time, interactive-only, whether an agent's
// bash runs it or a scheduled run's own command is `bash -c` of it.
func TestForkBombIsP2(t *testing.T) {
	ctx := context.Background()
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	argv, _ := json.Marshal(map[string]any{"argv": []string{"bash", "-c", ":(){ :|:& };:"}})
	for name, req := range map[string]Request{
		"bash":                bash(":(){ :|:& };:"),
		"bash, renamed":       bash("bomb(){ bomb | bomb & }; bomb"),
		"bash -c":             bash("bash -c 'f(){ f|f& };f'"),
		"python":              bash("python3 -c 'import os\nwhile True: os.fork()'"),
		"scheduled run (own)": {Tool: ToolExec, Params: argv, Context: Context{Run: "1", Cwd: "/work", TaskArgv: []string{"bash", "-c", ":(){ :|:& };:"}, Policy: PolicySummary{Mode: "workspace-write"}}},
	} {
		d := b.Check(ctx, req).Decision
		if d.Verdict != Ask || d.Tier != P2 || !d.InteractiveOnly {
			t.Errorf("%s: %+v, want P2, asked of a person every time", name, d)
		}
	}
}
