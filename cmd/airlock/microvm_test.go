package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
)

// vmInstance is an instance whose HOME is private too, so that its default workspace
// root (~/Airlock) is a temporary directory runs may start in without authorization.
type vmInstance struct {
	*instance
	person string // its HOME
}

func newVMInstance(t *testing.T) *vmInstance {
	in := newInstance(t)
	home := filepath.Join(t.TempDir(), "person")
	os.MkdirAll(filepath.Join(home, "Airlock"), 0o755)
	in.env = []string{"HOME=" + home}
	return &vmInstance{instance: in, person: home}
}

// TestExecSandboxModeWithoutTheMicroVM: a clear error with the ways out, exit 125.
func TestExecSandboxModeWithoutTheMicroVM(t *testing.T) {
	in := newVMInstance(t)
	ws, err := os.MkdirTemp("/var/tmp", "airlock-exec-vm-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	_, stderr, code := in.run("exec", "--cwd", ws, "--execution-mode", "sandbox", "--", "true")
	if code != 125 || !strings.Contains(stderr, "airlock sandbox install") || !strings.Contains(stderr, "--execution-mode local") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// auto: a package install is refused without the micro-VM; ls runs on the host.
	_, stderr, code = in.run("exec", "--cwd", ws, "--execution-mode", "auto", "--", "pip", "install", "requests")
	if code != 125 || !strings.Contains(stderr, "auto: package install `pip install requests` should run in the micro-VM") {
		t.Fatalf("auto install: exit %d: %s", code, stderr)
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		if _, stderr, code = in.run("exec", "--cwd", ws, "--execution-mode", "auto", "--", "ls"); code != 0 {
			t.Fatalf("auto ls: exit %d: %s", code, stderr)
		}
	}
}

// TestSandboxInstallThroughTheDaemonThenRunInTheVM: with a daemon running, `airlock
// sandbox install` asks it (progress from its events) against artifacts served over HTTP;
// then `airlock exec --execution-mode sandbox` boots a one-off VM, and a dispatch task in
// sandbox mode runs in the daemon's warm VM.
func TestSandboxInstallThroughTheDaemonThenRunInTheVM(t *testing.T) {
	imageDir := os.Getenv("AIRLOCK_SANDBOX_IMAGE")
	if imageDir == "" {
		imageDir, _ = filepath.Abs(filepath.Join("..", "..", "build", "sandbox-image"))
	}
	if _, reason := vm.FindImage(imageDir); reason != "" {
		t.Skip(reason)
	}
	if _, err := os.Stat(filepath.Join(imageDir, "manifest.json")); err != nil {
		t.Skip("no manifest.json in " + imageDir + ": run `make sandbox-image`")
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(imageDir)))
	defer srv.Close()

	in := newVMInstance(t)
	// For the allowlist run below: the test's server is on this machine's loopback.
	cfg := filepath.Join(in.home, "config", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	// The hook's workspace is a root from the first start: a root added to config.toml
	// later waits for the person's confirmation.
	agentWS := agentWorkspace(t, "airlock-hook-vm-")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[network]\nallowed_domains = [\"127.0.0.1\"]\nask_unknown = false\nallow_local = true\n"+
		"[workspace]\nroots = [\"~/Airlock\", %q]\n", agentWS)), 0o600)
	logs := in.startDaemon().Stdout.(*bytes.Buffer)

	out, stderr, code := in.run("sandbox", "install", "--manifest", srv.URL+"/manifest.json")
	if code != 0 || !strings.Contains(stderr, "installing through the running Airlock") || !strings.Contains(stderr, "100%") || !strings.Contains(out, "sandbox ready") {
		t.Fatalf("install: exit %d\n%s\n%s\ndaemon:\n%s", code, out, stderr, logs.String())
	}
	hostKernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")

	ws := filepath.Join(in.person, "Airlock", "proj")
	os.MkdirAll(ws, 0o755)
	out, stderr, code = in.run("exec", "--cwd", ws, "--execution-mode", "sandbox", "--", "sh", "-c", "uname -r; echo from-vm > made.txt; echo gone > /root/x")
	if code != 0 || strings.TrimSpace(out) == strings.TrimSpace(string(hostKernel)) || strings.TrimSpace(out) == "" {
		t.Fatalf("exec in the VM: exit %d %q %s", code, out, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "made.txt")); string(b) != "from-vm\n" {
		t.Fatalf("workspace file: %q", b)
	}

	// Under an allowlist the one-off VM's network is the daemon's egress proxy: the
	// allowed server is reached through it, an unlisted domain is refused, and a direct
	// connection (QEMU's host address) gets nothing.
	var hits atomic.Int32
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "reached %s\n", r.URL.Path)
	}))
	defer web.Close()
	port := web.Listener.Addr().(*net.TCPAddr).Port
	fetch := fmt.Sprintf(`import socket, urllib.request, urllib.error
for u in ("http://127.0.0.1:%[1]d/allowed", "http://unknown.test/"):
    try:
        print(urllib.request.urlopen(u, timeout=60).read().decode().strip())
    except urllib.error.HTTPError as e:
        print(e.read().decode().strip())
try:
    socket.create_connection(("10.0.2.2", %[1]d), timeout=5); print("direct connected")
except Exception as e:
    print("direct unreachable:", e)
`, port)
	out, stderr, code = in.run("exec", "--cwd", ws, "--execution-mode", "sandbox", "--network", "allowlist", "--", "python3", "-c", fetch)
	if code != 0 || !strings.Contains(out, "reached /allowed") || !strings.Contains(out, "Airlock refused the connection to unknown.test:80") ||
		!strings.Contains(out, "direct unreachable") || hits.Load() != 1 {
		t.Fatalf("exec in the VM under an allowlist: exit %d (%d requests)\n%s\n%s", code, hits.Load(), out, stderr)
	}

	// The one-off VM has an ask-only channel the daemon serves for it: the command's rm
	// -rf waits for the person, tagged with the sandbox's directory whatever it claims,
	// and gets their deny; nothing there lists approvals.
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	os.WriteFile(filepath.Join(ws, "probe.py"), []byte(execAskProbe), 0o644)
	done := make(chan string, 1)
	go func() {
		out, stderr, code := in.run("exec", "--cwd", ws, "--execution-mode", "sandbox", "--", "python3", "probe.py")
		done <- fmt.Sprintf("exit %d\n%s\n%s", code, out, stderr)
	}()
	pending := in.waitPendingWithin(1, 3*time.Minute) // a boot under TCG takes a while
	if rc := pending[0]["request"].(map[string]any)["context"].(map[string]any); rc["cwd"] != ws || !strings.HasPrefix(fmt.Sprint(rc["session"]), "exec-") {
		t.Errorf("the request from the VM is not tagged with the sandbox's identity: %v", rc)
	}
	if _, stderr, code := in.run("approvals", "deny", pending[0]["id"].(string), "--reason", "not from exec"); code != 0 {
		t.Fatalf("deny: %s", stderr)
	}
	checkAskProbe(t, "airlock exec in the micro-VM", <-done, "not from exec", ws, sandbox.MicroVMAskAddr)

	out, stderr, code = in.run("exec", "--cwd", ws, "--execution-mode", "auto", "--", "sh", "-c", "pip install nothing-here >/dev/null 2>&1; uname -r")
	if code != 0 || strings.TrimSpace(out) == strings.TrimSpace(string(hostKernel)) || !strings.Contains(stderr, "airlock: running in the micro-VM (auto: package install") {
		t.Fatalf("exec auto: exit %d %q %s", code, out, stderr)
	}

	if _, stderr, code := in.run("task", "add", "--name", "in-vm", "--cwd", ws, "--execution-mode", "sandbox", "--", "sh", "-c", "uname -r > task-kernel.txt; test -e /root/x && echo x-present || echo x-gone"); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", "in-vm"); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		out, _, _ := in.run("runs", "list", "--json", "--task", "in-vm")
		var runs []map[string]any
		json.Unmarshal([]byte(out), &runs)
		if len(runs) == 1 && (runs[0]["status"] == "succeeded" || runs[0]["status"] == "failed") {
			log, _, _ := in.run("runs", "logs", fmt.Sprint(runs[0]["id"]))
			if runs[0]["status"] != "succeeded" || !strings.Contains(log, "airlock: running in the micro-VM (execution_mode sandbox)") || !strings.Contains(log, "x-gone") {
				t.Fatalf("run: %v\n%s\ndaemon: %s", runs[0], log, logs.String())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never ended: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "task-kernel.txt")); strings.TrimSpace(string(b)) == strings.TrimSpace(string(hostKernel)) || len(b) == 0 {
		t.Fatalf("task ran on the host: %q", b)
	}

	// Claude Code's hook, the real `airlock hook claude` brought into the workspace,
	// asks from a scheduled run's VM through the VM's channel.
	in.hookInsideARunAsks(agentWS, "vm-agent", sandbox.MicroVMAskAddr, 3*time.Minute, "--execution-mode", "sandbox")

	// The MCP server's bash in the session's VM asks through the VM's channel as well.
	in.bin = withAgent // airlock mcp is airlock-agent's
	in.mcpBashAsks(in.mcpSession("--cwd", ws, "--execution-mode", "sandbox"), ws, sandbox.MicroVMAskAddr, 3*time.Minute)
}
