package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/permission/preflight/vmrisk"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
)

// TestBashHonoursAutoWithTheMicroVM boots the real micro-VM (skips, saying so, without an
// image): under execution_mode auto an agent's package install runs in the session's warm
// VM, twice in the same VM, and `uname -r` runs on the host.
func TestBashHonoursAutoWithTheMicroVM(t *testing.T) {
	base, reason := vm.FindImage(filepath.Join("..", "..", "build", "sandbox-image"))
	if reason != "" {
		t.Skip(reason)
	}
	ws, err := os.MkdirTemp("/var/tmp", "airlock-gateway-vm-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	pool := vm.NewPool(base, time.Minute, nil, nil)
	defer pool.Close()
	pol := testPolicy(t, ws)
	pol.ExecutionMode = sandbox.ExecAuto
	b := &recordingBroker{decide: func(api.Request) api.Decision { return api.Decision{Verdict: api.Allow, Tier: "P1", Layer: "grant"} }}
	cs := connect(t, Options{Policy: pol, Broker: b, MicroVM: everySession(pool.SandboxExec),
		Risk: func(c string) string { return vmrisk.Reason(c, pol.Cwd, "/root") }})
	host, _ := os.ReadFile("/proc/sys/kernel/osrelease")

	for i := range 2 {
		res, text := callText(t, cs, api.ToolBash, map[string]any{"command": "pip install nothing-here >/dev/null 2>&1; echo run-" + string(rune('0'+i)) + " >> /root/runs; cat /root/runs; uname -r"})
		if res.IsError && !strings.Contains(text, "exit code 0") {
			t.Fatalf("bash in the VM: %s", text)
		}
		if strings.Contains(text, strings.TrimSpace(string(host))) || !strings.Contains(text, "ran in the micro-VM (auto: package install") || !strings.Contains(text, "vanish") {
			t.Fatalf("not run in the micro-VM: %s", text)
		}
		if i == 1 && !strings.Contains(text, "run-0") {
			t.Errorf("the second command did not find the first one's file: not the same warm VM: %s", text)
		}
	}
	if pool.Warm() != 1 {
		t.Errorf("%d VMs for one session", pool.Warm())
	}
	_, text := callText(t, cs, api.ToolBash, map[string]any{"command": "uname -r"})
	if !strings.Contains(text, strings.TrimSpace(string(host))) || strings.Contains(text, "micro-VM") {
		t.Fatalf("uname -r did not run on the host: %s", text)
	}
}
