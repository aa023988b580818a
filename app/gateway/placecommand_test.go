package gateway

import (
	"strings"
	"testing"

	"github.com/airlock-app/airlock/sandbox"
)

func TestPlaceCommandHonoursTheExecutionMode(t *testing.T) {
	vm, risky := idleVM, pipInstallRisk
	cases := []struct {
		name     string
		mode     sandbox.ExecutionMode
		micro    sandbox.MicroVM
		command  string
		wantMode sandbox.ExecutionMode
		where    string // substring; "" = none
		refuse   string // substring; "" = runs
	}{
		{"local stays local", sandbox.ExecLocal, vm, "pip install x", sandbox.ExecLocal, "", ""},
		{"sandbox runs in the VM", sandbox.ExecSandbox, vm, "ls", sandbox.ExecSandbox, "micro-VM (execution_mode sandbox)", ""},
		{"sandbox without a VM is refused", sandbox.ExecSandbox, nil, "ls", "", "", "airlock sandbox install"},
		{"auto: ls on the host", sandbox.ExecAuto, vm, "ls -la", sandbox.ExecLocal, "", ""},
		{"auto: an install in the VM", sandbox.ExecAuto, vm, "pip install x", sandbox.ExecSandbox, "auto: package install", ""},
		{"auto: an install without a VM is refused", sandbox.ExecAuto, nil, "pip install x", "", "", "not installed here"},
		{"auto: ls without a VM runs on the host", sandbox.ExecAuto, nil, "ls", sandbox.ExecLocal, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{opts: Options{Policy: sandbox.Policy{ExecutionMode: tc.mode}, MicroVM: everySession(tc.micro), Risk: risky}}
			pol, where, refuse := s.placeCommand(s.opts.Policy, tc.command)
			if tc.refuse != "" {
				if !strings.Contains(refuse, tc.refuse) {
					t.Fatalf("refuse %q, want %q", refuse, tc.refuse)
				}
				return
			}
			if refuse != "" || pol.ExecutionMode != tc.wantMode || (tc.where == "") != (where == "") || !strings.Contains(where, tc.where) {
				t.Fatalf("mode %s where %q refuse %q", pol.ExecutionMode, where, refuse)
			}
			if where != "" && !strings.Contains(where, "vanish") {
				t.Errorf("where does not say writes vanish: %q", where)
			}
		})
	}
}
