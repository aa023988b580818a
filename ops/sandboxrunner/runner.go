// Package sandboxrunner runs the ops flow's commands under Airlock's sandbox: it
// implements ops.Runner with sandbox.Exec.
//
// Read-only runs (diff, snapshot, verify) always run in the read-only sandbox mode,
// whatever the mode in force; an apply runs under the policy in force for its working
// directory (workspace-write makes exactly that directory writable). The network is on
// only when the posture in force allows it AND the plan declared it needs it; under
// network_access = "allowlist" it goes through the egress proxy Runner.Egress connects.
package sandboxrunner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/airlock-app/airlock/internal/capped"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/sandbox"
)

// Runner implements ops.Runner with sandbox.Exec.
type Runner struct {
	// Policy returns the resolved policy in force for a run in dir (the app resolves the
	// configuration and the department's posture with sandbox.Resolve, Cwd = dir).
	Policy func(ctx context.Context, dir string) (sandbox.Policy, error)
	// Env is the commands' environment (nil: this process's); credentials are scrubbed
	// except those named in GrantEnv (e.g. a cloud CLI's profile variables).
	Env      []string
	GrantEnv []string
	// HiddenPaths are hidden in addition to the policy's.
	HiddenPaths []string
	// OnStart receives the sandbox root's host pid (so the local API can refuse requests
	// from the apply's process tree).
	OnStart func(hostPid int)
	// Egress builds the egress proxy hook of a run under network_access = "allowlist"
	// (a plan that needs the network): the same proxy a dispatch run gets, its lists
	// from pol; log (the run's stderr) receives one line per connection. nil: such a run
	// has no network at all, and its output says so.
	Egress func(spec ops.RunSpec, pol sandbox.Policy, log io.Writer) sandbox.Egress
	// Ask builds the ask-only channel of a run's sandbox (sandbox.ExecRequest.Ask), so a
	// tool the command starts that asks Airlock (airlock hook, airlock mcp) has somebody
	// to ask. nil, or full access (no sandbox): none.
	Ask func(spec ops.RunSpec, pol sandbox.Policy) sandbox.Egress
}

// Run implements ops.Runner.
func (r Runner) Run(ctx context.Context, spec ops.RunSpec) (ops.RunResult, error) {
	if r.Policy == nil {
		return ops.RunResult{ExitCode: -1}, errors.New("sandboxrunner: Runner.Policy is not set")
	}
	pol, err := r.Policy(ctx, spec.Dir)
	if err != nil {
		return ops.RunResult{ExitCode: -1}, fmt.Errorf("sandbox policy for %s: %w", spec.Dir, err)
	}
	pol = PolicyFor(pol, spec)
	// The apply reads the approved copies of its inputs, bound read-only into the
	// sandbox's own /tmp, where no process outside it can swap them. Without a sandbox
	// (full access) the copies are read where Airlock keeps them.
	var files []sandbox.ReadOnlyFile
	place := func(in ops.StagedInput) string {
		if pol.Mode == sandbox.ModeFullAccess {
			return in.Copy
		}
		at := ops.StagedPath(in)
		files = append(files, sandbox.ReadOnlyFile{Source: in.Copy, Target: at})
		return at
	}
	c, err := spec.CommandFor(place)
	if err != nil {
		return ops.RunResult{ExitCode: -1}, fmt.Errorf("sandboxrunner (%s): %w", purpose(spec), err)
	}
	var argv []string
	switch c.Kind() {
	case "argv":
		argv = c.Argv
		if len(files) > 0 && argv[0] != spec.Command.Argv[0] {
			// The program is an approved input, placed in the sandbox's /tmp: it is found
			// there, not on the host, so a shell inside starts it.
			argv = append([]string{"/bin/sh", "-c", `exec "$0" "$@"`}, argv...)
		}
	case "shell":
		argv = []string{"/bin/sh", "-c", c.Shell}
	default:
		return ops.RunResult{ExitCode: -1}, errors.New("sandboxrunner: empty command")
	}
	limit := spec.OutputCap
	if limit <= 0 {
		limit = ops.DefaultOutputCap
	}
	stdout, stderr := capped.NewBuffer(limit), capped.NewBuffer(limit) // the proxy writes stderr from its goroutines
	var egress sandbox.Egress
	if pol.Network == sandbox.NetworkAllowlist && r.Egress != nil {
		if egress = r.Egress(spec, pol, stderr); egress != nil {
			pol.EgressConnected = true
		}
	}
	var ask sandbox.Egress
	if r.Ask != nil && pol.Mode != sandbox.ModeFullAccess {
		ask = r.Ask(spec, pol)
	}
	start := time.Now()
	res, err := sandbox.Exec(ctx, sandbox.ExecRequest{Policy: pol, Argv: argv, Cwd: spec.Dir, Env: r.Env, GrantEnv: r.GrantEnv,
		Stdout: stdout, Stderr: stderr, Timeout: spec.Timeout, HiddenPaths: r.HiddenPaths, OnStart: r.OnStart, ReadOnlyFiles: files,
		Egress: egress, Ask: ask})
	out := ops.RunResult{ExitCode: res.ExitCode, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		Truncated: stdout.Truncated() || stderr.Truncated(), TimedOut: res.TimedOut, Duration: time.Since(start)}
	if res.TimedOut || res.Signal != "" {
		out.ExitCode = -1
	}
	if err != nil {
		out.ExitCode = -1
		return out, fmt.Errorf("sandbox (%s): %w", purpose(spec), err)
	}
	if res.Warning != "" && len(out.Stderr) < limit {
		out.Stderr = append(out.Stderr, []byte("\n[airlock sandbox: "+res.Warning+"]\n")...)
	}
	return out, nil
}

// PolicyFor derives the policy of one ops run from the policy in force: read-only runs
// are read-only with no writable root; the network is the one in force (off, allowlist or
// on) only if the plan wants it, else off. It never widens the policy in force.
func PolicyFor(inForce sandbox.Policy, spec ops.RunSpec) sandbox.Policy {
	p := inForce
	p.Cwd = spec.Dir
	if spec.ReadOnly {
		p.Mode = sandbox.ModeReadOnly
		p.WritableRoots = nil
		if p.Backend == sandbox.BackendApp {
			// The application layer alone cannot keep an arbitrary command read-only.
			p.Backend = sandbox.BackendAuto
		}
	}
	if !spec.Network {
		p.Network = sandbox.NetworkOff // the plan needs none: never more than it asked
	}
	return p
}

func purpose(spec ops.RunSpec) string {
	if spec.Purpose == "" {
		return "run"
	}
	return spec.Purpose
}
