package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/vartmp"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
)

// askProbe is a process inside a run's sandbox that talks to its ask-only channel
// ($AIRLOCK_ASK_SOCKET) as an agent's hook would, lying about who it is, and then tries
// what the channel must not do: answer, list, authorize, approve.
const askProbe = `
import json, os, urllib.request, urllib.error
addr = os.environ.get("AIRLOCK_ASK_SOCKET", "")
print("channel", addr)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request("http://" + addr + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with opener.open(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
lie = {"run": "999", "session": "someone-else", "task": "other", "department": "ops", "cwd": "/",
       "policy": {"mode": "full-access", "network": "on", "approval_policy": "never"},
       "caller": {"description": "hook:claude"}}
st, d = call("POST", "/v1/permission/await", {"tool": "read_file", "params": {"path": os.getcwd() + "/notes.txt"}, "context": lie})
print("read", st, d.get("verdict"))
st, d = call("POST", "/v1/permission/await", {"tool": "bash", "params": {"command": "rm -rf build"}, "context": lie})
print("rm", st, d.get("verdict"), "|".join(d.get("reasons") or []))
for method, path, body in [("GET", "/v1/approvals", None), ("POST", "/v1/approvals/x/answer", {"allow": True}),
                           ("GET", "/v1/grants", None), ("POST", "/v1/authorize", {"path": "/"}), ("GET", "/v1/status", None)]:
    st, d = call(method, path, body)
    print("refused" if st == 403 and d.get("code") == "sandboxed_caller" else "SERVED", method, path, st)
`

// checkAskProbeOutput checks what askProbe printed: it reached the channel (at
// sandbox.AskAddr, or channel), its read was allowed and its rm -rf denied, and
// everything else it tried was refused.
func checkAskProbeOutput(t *testing.T, out string, channel ...string) {
	t.Helper()
	addr := sandbox.AskAddr
	if len(channel) > 0 {
		addr = channel[0]
	}
	for _, want := range []string{"channel " + addr, "read 200 allow", "rm 200 deny"} {
		if !strings.Contains(out, want) {
			t.Errorf("the probe's output lacks %q", want)
		}
	}
	if strings.Contains(out, "SERVED") || strings.Count(out, "refused ") != 5 {
		t.Errorf("ESCAPE: the ask-only channel served more than asking")
	}
}

// TestAskOnlyChannelOfAScheduledRun: a process inside a real scheduled run's sandbox
// reaches the run's ask-only channel (AIRLOCK_ASK_SOCKET, in the sandbox's own network
// namespace) while the core's socket stays hidden. Its requests are the run's — its run,
// task, directory and policy, whatever it claims — a read is allowed at once, an rm -rf
// waits for the person and gets their deny; and nothing on the channel lists, answers or
// authorizes anything.
func TestAskOnlyChannelOfAScheduledRun(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	for _, network := range []string{"false", `"allowlist"`, "true"} {
		t.Run("network_access="+network, func(t *testing.T) {
			base := vartmp.Dir(t, "airlock-ask-")
			cfg := filepath.Join(base, "airlock", "config", "config.toml")
			os.MkdirAll(filepath.Dir(cfg), 0o700)
			os.WriteFile(cfg, []byte("[sandbox_workspace_write]\nnetwork_access = "+network+"\n"), 0o600)
			askOnlyChannelOfARun(t, base)
		})
	}
}

func askOnlyChannelOfARun(t *testing.T, base string) {
	c, _ := runCoreAt(t, base)
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(filepath.Join(repo, "build"), 0o755)
	os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("notes\n"), 0o644)
	tk := createTask(t, c, dispatch.TaskSpec{Name: "asker", Cwd: repo, Argv: []string{"python3", "-c", askProbe}})
	asked := answerNext(t, c, false)
	got, log := runTask(t, c, tk.Name)
	t.Logf("run log:\n%s", log)
	if got.Status != dispatch.StatusSucceeded {
		t.Fatalf("run %s (%s)", got.Status, got.Reason)
	}
	checkAskProbeOutput(t, log)
	p, ok := <-asked
	if !ok {
		t.Fatal("the rm -rf never waited for a person")
	}
	want := strconv.FormatUint(uint64(got.ID), 10)
	ctxt := p.Request.Context
	if p.Request.Tool != "bash" || ctxt.Run != want || ctxt.Task != "asker" || ctxt.Session != "" || ctxt.Cwd != repo ||
		ctxt.Policy.Mode != "workspace-write" || !strings.Contains(ctxt.Caller.Description, "sandbox of run "+want) {
		t.Errorf("the pending request is not tagged with the run's identity: %+v", p.Request)
	}
}

// TestAskFromARunWaitsForThePerson: a request an agent inside a scheduled run raises on
// its ask-only channel makes the run wait for the person, not look stuck: it shows under
// runs waiting for you with the question, its no-progress watchdog (here 3 s) does not
// end it while the person takes their time, and the answer resumes it.
func TestAskFromARunWaitsForThePerson(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	c, _ := runCoreAt(t, vartmp.Dir(t, "airlock-ask-wait-"))
	ctx := context.Background()
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo")
	os.MkdirAll(filepath.Join(repo, "build"), 0o755)
	tk := createTask(t, c, dispatch.TaskSpec{Name: "agent", Cwd: repo, NoProgressTimeout: 3 * time.Second,
		Argv: []string{"python3", "-c", askProbe}})
	r, err := c.Dispatch.RunNow(ctx, tk.Name)
	if err != nil {
		t.Fatal(err)
	}
	var pending []permission.PendingRequest
	waitFor(t, func() bool {
		pending = c.Broker.Pending()
		return len(pending) == 1
	})
	// The person takes longer than the watchdog's timeout. (A shorter timeout ended the
	// run under load before python had even asked.)
	time.Sleep(4500 * time.Millisecond)
	waiting, err := c.Dispatch.Runs(ctx, dispatch.RunFilter{Waiting: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(waiting) != 1 || waiting[0].ID != r.ID || waiting[0].Status != dispatch.StatusRunning || waiting[0].WaitingFor != pending[0].ID ||
		!strings.Contains(waiting[0].Reason, "rm -rf build") {
		t.Fatalf("the run does not show as waiting for the person: %+v", waiting)
	}
	if _, err := c.Broker.Answer(ctx, pending[0].ID, permission.Answer{Allow: false, By: permission.ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	var got dispatch.Run
	waitFor(t, func() bool { got, _ = c.Dispatch.Run(ctx, r.ID); return dispatch.Finished(got.Status) })
	if got.Status != dispatch.StatusSucceeded || got.WaitingFor != "" {
		b, _ := os.ReadFile(got.LogPath)
		t.Fatalf("run %s (%s), waiting for %q\n%s", got.Status, got.Reason, got.WaitingFor, b)
	}
}

// TestAskOnlyChannelOfAnOpsCommand: an ops command's sandbox (an apply, and a read-only
// verify) has an ask-only channel too: its requests are that plan step's session in its
// directory whatever it claims, an rm -rf waits for the person and gets their deny, and
// nothing on the channel lists, answers or authorizes anything.
func TestAskOnlyChannelOfAnOpsCommand(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	c, _ := runCoreAt(t, vartmp.Dir(t, "airlock-ops-ask-"))
	work := filepath.Join(c.getenv("HOME"), "Airlock", "infra")
	os.MkdirAll(filepath.Join(work, "build"), 0o755)
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("notes\n"), 0o644)
	for _, step := range []struct {
		purpose  string
		readOnly bool
		mode     string
	}{{"apply", false, "workspace-write"}, {"verify", true, "read-only"}} {
		t.Run(step.purpose, func(t *testing.T) {
			asked := answerNext(t, c, false)
			res, err := c.opsRunner().Run(context.Background(), ops.RunSpec{Dir: work, Purpose: step.purpose, ReadOnly: step.readOnly, PlanID: "op-ask",
				Timeout: time.Minute, Command: ops.Command{Argv: []string{"python3", "-c", askProbe}}})
			out := string(res.Stdout) + string(res.Stderr)
			t.Logf("output:\n%s", out)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("run: %v (exit %d)", err, res.ExitCode)
			}
			checkAskProbeOutput(t, out)
			p, ok := <-asked
			if !ok {
				t.Fatal("the rm -rf never waited for a person")
			}
			ctxt := p.Request.Context
			if ctxt.Session != "ops-op-ask-"+step.purpose || ctxt.Run != "" || ctxt.Cwd != work || ctxt.Policy.Mode != step.mode ||
				!strings.Contains(ctxt.Caller.Description, "sandbox of ops "+step.purpose+" of plan op-ask") {
				t.Errorf("the pending request is not tagged with the ops step's identity: %+v", p.Request)
			}
		})
	}
}

// TestAskOnlyChannelOfARunInTheMicroVM: a scheduled run in the micro-VM (execution_mode
// "sandbox", the real VM from the image the core installed) has its ask-only channel too,
// with the network off, under an allowlist and on: a process in the guest finds it at
// AIRLOCK_ASK_SOCKET, its requests are the run's whatever it claims, a read is allowed,
// an rm -rf waits for the person and gets their deny, and nothing else is served.
func TestAskOnlyChannelOfARunInTheMicroVM(t *testing.T) {
	imageDir := os.Getenv("AIRLOCK_SANDBOX_IMAGE")
	if imageDir == "" {
		imageDir, _ = filepath.Abs(filepath.Join("..", "build", "sandbox-image"))
	}
	if _, reason := vm.FindImage(imageDir); reason != "" {
		t.Skip(reason)
	}
	if _, err := os.Stat(filepath.Join(imageDir, "manifest.json")); err != nil {
		t.Skip("no manifest.json in " + imageDir + ": run `make sandbox-image`")
	}
	c, _ := runCoreAt(t, vartmp.Dir(t, "airlock-vm-ask-"))
	ctx := context.Background()
	srv := httptest.NewServer(http.FileServer(http.Dir(imageDir)))
	defer srv.Close()
	if _, err := c.VMInstall(ctx, api.VMInstallIn{Manifest: srv.URL + "/manifest.json"}); err != nil {
		t.Fatal(err)
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if st, err := c.VMInstallWait(ictx); err != nil || !st.Ready() {
		t.Fatalf("install: %v %+v", err, st)
	}
	for _, network := range []api.NetworkAccess{api.NetworkOff, api.NetworkAllowlist, api.NetworkOn} {
		t.Run("network_access="+string(network), func(t *testing.T) {
			repo := filepath.Join(c.getenv("HOME"), "Airlock", "repo-"+string(network))
			os.MkdirAll(filepath.Join(repo, "build"), 0o755)
			os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("notes\n"), 0o644)
			name := "vm-asker-" + string(network)
			tk := createTask(t, c, dispatch.TaskSpec{Name: name, Cwd: repo, Argv: []string{"python3", "-c", askProbe},
				Overrides: departments.Defaults{ExecutionMode: "sandbox", Network: &network}})
			asked := answerNextWithin(t, c, false, 3*time.Minute) // a first boot under TCG takes a while
			got, log := runTask(t, c, tk.Name)
			t.Logf("run log:\n%s", log)
			if got.Status != dispatch.StatusSucceeded || !strings.Contains(log, "running in the micro-VM") {
				t.Fatalf("run %s (%s), not in the micro-VM?", got.Status, got.Reason)
			}
			checkAskProbeOutput(t, log, sandbox.MicroVMAskAddr)
			p, ok := <-asked
			if !ok {
				t.Fatal("the rm -rf never waited for a person")
			}
			want := strconv.FormatUint(uint64(got.ID), 10)
			ctxt := p.Request.Context
			if p.Request.Tool != "bash" || ctxt.Run != want || ctxt.Task != name || ctxt.Session != "" || ctxt.Cwd != repo ||
				ctxt.Policy.Mode != "workspace-write" || !strings.Contains(ctxt.Caller.Description, "sandbox of run "+want) {
				t.Errorf("the pending request is not tagged with the run's identity: %+v", p.Request)
			}
		})
	}
}
