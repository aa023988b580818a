package dispatch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// specRecorder is an executor that remembers the spec of each run before running it.
type specRecorder struct {
	inner Executor
	mu    sync.Mutex
	specs []ExecSpec
}

func (s *specRecorder) Exec(ctx context.Context, spec ExecSpec) (ExecResult, error) {
	s.mu.Lock()
	s.specs = append(s.specs, spec)
	s.mu.Unlock()
	return s.inner.Exec(ctx, spec)
}

// An agent task's run starts the agent with the settings written in its own directory,
// the key from the secret store in its environment (redacted from its log), its model
// API's host for the allowlist and its directory writable; under network off it fails
// before starting, saying which setting lets it run.
func TestAgentTaskRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		network api.NetworkAccess
		exec    string
		status  string
		reason  string
	}{
		{"allowlist", api.NetworkAllowlist, "local", StatusSucceeded, ""},
		{"network off", api.NetworkOff, "local", StatusFailed, `set network_access = "allowlist"`},
		{"micro-VM", api.NetworkOn, "sandbox", StatusFailed, "--execution-mode local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &specRecorder{inner: &procExecutor{}}
			pol := DefaultPolicy()
			pol.Network, pol.ExecutionMode = tc.network, tc.exec
			agentDir := filepath.Join(t.TempDir(), "agent-runs")
			h := newHarness(t, withPolicy(pol), withOptions(func(o *Options) {
				o.Executor = rec
				o.Secrets = secretMap{"MY_KEY": "sk-agent-secret-value"}
				o.Airlock = func() string { return "/opt/airlock/airlock" }
				o.AgentDir = agentDir
			}))
			h.start()
			bin := filepath.Join(h.root, "claude")
			os.WriteFile(bin, []byte("#!/bin/sh\necho \"agent key $ANTHROPIC_API_KEY\"\nwhile [ \"$1\" != --settings ]; do shift; done\ngrep -q PreToolUse \"$2\" && echo settings hooks\n"), 0o755)
			tk := h.task(TaskSpec{Name: "agent", Cwd: h.ws, Agent: &api.AgentSpec{Kind: "claude", Prompt: "tidy up", APIBase: "https://llm.example:8443", APIKeySecret: "MY_KEY", Binary: bin}})
			if !slices.Equal(tk.Argv, []string{"claude"}) || tk.Agent.Prompt != "tidy up" {
				t.Fatalf("task = %q %+v", tk.Argv, tk.Agent)
			}
			r := h.wait(h.runNow("agent").ID, StatusSucceeded, StatusFailed)
			if r.Status != tc.status || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("run %s (%s), want %s saying %q", r.Status, r.Reason, tc.status, tc.reason)
			}
			if tc.status != StatusSucceeded {
				if len(rec.specs) != 0 {
					t.Errorf("the agent was started under network off")
				}
				return
			}
			spec := rec.specs[0]
			runDir := filepath.Join(agentDir, "run-1")
			if spec.Argv[0] != bin || spec.AgentDir != runDir || !slices.Equal(spec.AllowHosts, []string{"llm.example:8443"}) {
				t.Errorf("spec: argv %q, agent dir %q, hosts %q", spec.Argv, spec.AgentDir, spec.AllowHosts)
			}
			// Its home and its state are writable; the settings Airlock wrote beside them are not.
			if !slices.Contains(spec.AgentWritable, filepath.Join(runDir, "home")) || slices.Contains(spec.AgentWritable, runDir) {
				t.Errorf("writable in the run's directory: %q", spec.AgentWritable)
			}
			if !slices.Contains(spec.Env, "ANTHROPIC_API_KEY=sk-agent-secret-value") || !slices.Contains(spec.Env, "HOME="+filepath.Join(runDir, "home")) {
				t.Errorf("env lacks the key or the run's home: %q", spec.Env)
			}
			if !strings.Contains(readFile(t, r.LogPath), "settings hooks") {
				t.Errorf("the settings were not there during the run")
			}
			if _, err := os.Stat(runDir); !os.IsNotExist(err) {
				t.Errorf("the run's directory outlived the run: %v", err)
			}
			log := readFile(t, r.LogPath)
			if strings.Contains(log, "sk-agent-secret-value") || !strings.Contains(log, "agent key [REDACTED") || !strings.Contains(log, "agent task: Claude Code") {
				t.Errorf("log:\n%s", log)
			}
		})
	}
}

// An agent run's directory goes when its log is pruned.
func TestAgentRunDirPrunedWithItsLog(t *testing.T) {
	agentDir := filepath.Join(t.TempDir(), "agent-runs")
	pol := DefaultPolicy()
	pol.Network = api.NetworkAllowlist
	h := newHarness(t, withPolicy(pol), withOptions(func(o *Options) {
		o.Secrets = secretMap{"K": "v"}
		o.Airlock = func() string { return "/opt/airlock/airlock" }
		o.AgentDir = agentDir
		o.LogMaxTotal = 1 // every finished run's log is over the limit
	}))
	h.start()
	bin := filepath.Join(h.root, "codex")
	os.WriteFile(bin, []byte("#!/bin/sh\necho ran\n"), 0o755)
	h.task(TaskSpec{Name: "agent", Cwd: h.ws, Agent: &api.AgentSpec{Kind: "codex", Prompt: "x", APIKeySecret: "K", Binary: bin}})
	r := h.wait(h.runNow("agent").ID, StatusSucceeded, StatusFailed)
	if r.Status != StatusSucceeded {
		t.Fatalf("run %s: %s", r.Status, r.Reason)
	}
	if _, err := h.d.PruneLogs(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(agentDir, "run-1")); !os.IsNotExist(err) {
		t.Errorf("the agent's run directory outlived its log: %v", err)
	}
}
