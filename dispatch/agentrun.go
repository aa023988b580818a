package dispatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/dispatch/agenttask"
)

// agentRun is what one run of an agent task starts with.
type agentRun struct {
	plan agenttask.Plan
	// dir is the run's own directory (settings, the agent's home).
	dir string
	// env is the run's environment with the agent's added; secrets the values to redact.
	env     []string
	secrets []string
}

func (a *agentRun) hosts() []string {
	if a == nil {
		return nil
	}
	return []string{a.plan.Host}
}

// writable are the directories of the run's directory the agent writes (absolute).
func (a *agentRun) writable() []string {
	if a == nil {
		return nil
	}
	var out []string
	for _, w := range a.plan.Writable {
		out = append(out, filepath.Join(a.dir, w))
	}
	return out
}

func (a *agentRun) directory() string {
	if a == nil {
		return ""
	}
	return a.dir
}

// prepareAgent builds an agent task's run: its plan, the settings written to the run's
// own directory, the API key read from the keyring now, the environment with them.
func (d *Dispatcher) prepareAgent(ctx context.Context, t Task, r *Run, p Policy, workdir string, env []string) (*agentRun, error) {
	if p.Network == api.NetworkOff {
		return nil, fmt.Errorf("agent task %s needs its model API (%s), and the run's network is off: set network_access = \"allowlist\" (its host is allowed for the run) or \"on\", e.g. `airlock task edit %s --network allowlist`",
			t.Name, t.Agent.APIBase, t.Name)
	}
	if p.ExecutionMode == "sandbox" {
		// The micro-VM sees the workspace only: not the agent, its settings or Airlock.
		return nil, fmt.Errorf("agent task %s runs its agent on this machine, in the sandbox, and its execution mode is \"sandbox\" (the micro-VM): set it to local or auto, e.g. `airlock task edit %s --execution-mode local`",
			t.Name, t.Name)
	}
	if d.opts.AgentDir == "" || d.opts.Airlock == nil {
		return nil, fmt.Errorf("agent task %s: this Airlock has no directory for agent runs configured", t.Name)
	}
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	dir := d.agentDir(r.ID)
	plan, err := agenttask.Prepare(agenttask.Input{
		Spec: *t.Agent, RunID: r.ID, Dir: dir, Workdir: workdir, Airlock: d.opts.Airlock(), PATH: m["PATH"], Wait: t.HoldDeadline,
	})
	if err != nil {
		return nil, fmt.Errorf("agent task %s: %w", t.Name, err)
	}
	if d.opts.Secrets == nil {
		return nil, fmt.Errorf("agent task %s: its API key (secret %s): no secret store configured", t.Name, t.Agent.APIKeySecret)
	}
	key, err := d.opts.Secrets.Get(ctx, t.Agent.APIKeySecret)
	if err != nil {
		return nil, fmt.Errorf("agent task %s: its API key, the secret %s, could not be read (%v): set it with `airlock secret set %s`",
			t.Name, t.Agent.APIKeySecret, err, t.Agent.APIKeySecret)
	}
	if err := plan.Write(dir); err != nil {
		return nil, fmt.Errorf("agent task %s: %w", t.Name, err)
	}
	for k, v := range plan.Env {
		m[k] = v
	}
	m[plan.KeyEnv] = key
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return &agentRun{plan: plan, dir: dir, env: out, secrets: []string{key}}, nil
}

// agentDir is the directory of run id of an agent task.
func (d *Dispatcher) agentDir(id uint) string {
	return filepath.Join(d.opts.AgentDir, fmt.Sprintf("run-%d", id))
}

// removeAgentDir removes an agent task's run directory (if the run had one): at the
// run's end, and again with its log (a run the app stopped mid-way left it).
func (d *Dispatcher) removeAgentDir(id uint) error {
	if d.opts.AgentDir == "" {
		return nil
	}
	if err := os.RemoveAll(d.agentDir(id)); err != nil {
		return fmt.Errorf("remove the agent directory of run #%d: %w", id, err)
	}
	return nil
}
