package gateway

import (
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// The broker is told where a bash command will run: "sandbox" exactly when it goes to the
// micro-VM (so the core judges it by the VM's guarantees), nothing for a host command or
// for the file tools (which run on the host whatever the session's mode).
func TestBashRequestCarriesTheExecutionMode(t *testing.T) {
	vm, risky := idleVM, pipInstallRisk
	cases := []struct {
		name    string
		mode    sandbox.ExecutionMode
		micro   sandbox.MicroVM
		tool    string
		args    map[string]any
		wantTag string
	}{
		{"auto: an install goes to the VM", sandbox.ExecAuto, vm, api.ToolBash, map[string]any{"command": "pip install x; echo x > /root/a"}, "sandbox"},
		{"auto: ls on the host", sandbox.ExecAuto, vm, api.ToolBash, map[string]any{"command": "ls"}, ""},
		{"auto without a VM: not tagged (refused anyway)", sandbox.ExecAuto, nil, api.ToolBash, map[string]any{"command": "pip install x"}, ""},
		{"sandbox: every command goes to the VM", sandbox.ExecSandbox, vm, api.ToolBash, map[string]any{"command": "echo x > /root/a"}, "sandbox"},
		{"local: never tagged", sandbox.ExecLocal, vm, api.ToolBash, map[string]any{"command": "pip install x"}, ""},
		{"sandbox session, read_file runs on the host", sandbox.ExecSandbox, vm, api.ToolReadFile, map[string]any{"path": "x.txt"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			pol := testPolicy(t, ws)
			pol.ExecutionMode = tc.mode
			b := &recordingBroker{decide: func(r api.Request) api.Decision { return api.Decision{Verdict: api.Deny, Tier: "P1", Layer: "person"} }}
			cs := connect(t, Options{Policy: pol, Broker: b, MicroVM: everySession(tc.micro), Risk: risky})
			callText(t, cs, tc.tool, tc.args)
			if len(b.asked) != 1 {
				t.Fatalf("asked %d times", len(b.asked))
			}
			if got := b.asked[0].Context.Policy.ExecutionMode; got != tc.wantTag {
				t.Fatalf("execution mode on the request = %q, want %q", got, tc.wantTag)
			}
		})
	}
}
