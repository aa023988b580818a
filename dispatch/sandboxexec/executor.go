// Package sandboxexec runs dispatch's runs through the sandbox package: it resolves the
// run's recorded policy into a sandbox.Policy, checks the command with the application
// layer (a denial there is a sandbox denial, so on-failure can escalate), runs it with
// sandbox.Exec, and recognizes a failure on an OS-layer denial from its output.
package sandboxexec

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/sandbox"
)

// Options configure the executor.
type Options struct {
	// Policy resolves the sandbox policy of a run at its start from what the run recorded
	// (the app's one resolution: configured roots and protected paths, the project files
	// of its directory, Airlock's hidden state). Required.
	Policy func(spec dispatch.ExecSpec) (sandbox.Policy, error)
	// HiddenPaths are hidden from every run besides the policy's (tests).
	HiddenPaths []string
	// Home is the user's home directory, for the auto mode's risk classifier ("":
	// os.UserHomeDir).
	Home string
	// MicroVM returns the micro-VM runner for one run (a vm.Pool session of the daemon:
	// the run's own VM) and the function that ends it when the run ends, or an error
	// saying why there is none (wrapping vm.ErrNotReady). nil: no micro-VM
	// (execution_mode "sandbox" fails; under "auto" dispatch asks the person, through
	// Route, before the run starts, whether a high-risk command may run on the host).
	MicroVM func(runID uint) (run sandbox.MicroVM, end func(), err error)
	// MicroVMReady says whether a micro-VM can be had (nil) or why not, without taking
	// one: Route uses it. nil: Route asks MicroVM and ends the session it returns.
	MicroVMReady func() error
	// Egress returns the egress proxy hook for one run whose policy is network_access =
	// "allowlist" (the app builds it from sandbox/egress with the run's lists, its log
	// and the broker). nil, or a nil result: such a run has no network, and its log says
	// that the proxy is not connected.
	Egress func(spec dispatch.ExecSpec, pol sandbox.Policy) sandbox.Egress
	// Ask returns the ask-only channel of one run's sandbox (sandbox.ExecRequest.Ask): how
	// an agent in the run asks the person. nil: the run's processes have nobody to ask.
	Ask func(spec dispatch.ExecSpec, pol sandbox.Policy) sandbox.Egress
	// OnRoute is told every decision of the "sandbox" and "auto" modes (the app writes
	// it to the audit); the run's log gets Route.LogLine either way.
	OnRoute func(Route)
}

// Executor implements dispatch.Executor with sandbox.Exec, on the host or in the micro-VM.
type Executor struct{ opts Options }

// New returns an Executor.
func New(opts Options) *Executor { return &Executor{opts: opts} }

var _ dispatch.Executor = (*Executor)(nil)

// Exec runs spec under its policy.
func (e *Executor) Exec(ctx context.Context, spec dispatch.ExecSpec) (dispatch.ExecResult, error) {
	pol, err := e.policy(spec)
	if err != nil {
		return dispatch.ExecResult{}, err
	}
	if pol.ExecutionMode != sandbox.ExecLocal {
		rt, vmExec, end, err := e.route(ctx, spec, pol)
		if end != nil {
			defer end() // the run's VM goes, and with it everything written outside the workspace
		}
		if err != nil {
			return dispatch.ExecResult{}, err
		}
		if rt.Where == WhereMicroVM {
			return e.execMicroVM(ctx, spec, pol, vmExec)
		}
	}
	pol.ExecutionMode = sandbox.ExecLocal
	var egress sandbox.Egress
	if pol.Network == sandbox.NetworkAllowlist && e.opts.Egress != nil {
		if egress = e.opts.Egress(spec, pol); egress != nil {
			pol.EgressConnected = true
			// The run's header says what an allowlist gives where no proxy is connected.
			fmt.Fprintf(spec.Stderr, "airlock: network allowlist: connected to Airlock's egress proxy; every connection is listed below\n")
		}
	}
	if pol.Mode != sandbox.ModeFullAccess {
		if a, err := pol.AnalyzeCommand(api.ShellJoin(spec.Argv), spec.Dir); err != nil {
			if d, ok := sandbox.IsDenied(err); ok {
				return denied(d.Error(), a.Denials), nil
			}
		}
	}
	var ask sandbox.Egress
	if pol.Mode != sandbox.ModeFullAccess && e.opts.Ask != nil {
		ask = e.opts.Ask(spec, pol)
	}
	tail := &tailBuffer{}
	res, err := sandbox.Exec(ctx, sandbox.ExecRequest{
		Policy: pol, Argv: spec.Argv, Cwd: spec.Dir, Env: spec.Env, GrantEnv: envNames(spec.Env),
		Stdout: io.MultiWriter(spec.Stdout, tail), Stderr: io.MultiWriter(spec.Stderr, tail),
		Timeout: spec.Timeout, HiddenPaths: e.opts.HiddenPaths, OnStart: spec.OnStart, Egress: egress, Ask: ask,
	})
	if res.Warning != "" {
		// A weaker confinement than asked for (Landlock instead of bubblewrap, the app
		// layer only) is said where the run's output is read.
		fmt.Fprintf(spec.Stderr, "airlock: warning: %s\n", res.Warning)
	}
	if d, ok := sandbox.IsDenied(err); ok {
		return denied(d.Error(), []*sandbox.IsolationDeniedError{d}), nil
	}
	if err != nil {
		return dispatch.ExecResult{}, err
	}
	out := dispatch.ExecResult{ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut, Limit: res.LimitMessage}
	if res.ExitCode != 0 && !res.TimedOut && res.Limit == "" && pol.Mode != sandbox.ModeFullAccess {
		out.SandboxDenied, out.Denial, out.Grant = osDenial(tail.String(), pol)
	}
	return out, nil
}

// denied is the result of a command the sandbox refused, with the grant that would
// lift every denial (nil when none can).
func denied(msg string, denials []*sandbox.IsolationDeniedError) dispatch.ExecResult {
	out := dispatch.ExecResult{ExitCode: -1, SandboxDenied: true, Denial: msg}
	if g, err := sandbox.GrantFor(denials); err == nil && len(g.Readable) == 0 {
		out.Grant = &g
	}
	return out
}

func (e *Executor) policy(spec dispatch.ExecSpec) (sandbox.Policy, error) {
	if e.opts.Policy == nil {
		return sandbox.Policy{}, fmt.Errorf("run %d: the executor has no policy resolver", spec.RunID)
	}
	pol, err := e.opts.Policy(spec)
	if err != nil {
		return sandbox.Policy{}, err
	}
	if spec.AgentDir != "" {
		// Every other sandbox has the agent runs hidden; this run sees its own.
		if pol, err = pol.WithUnhidden(spec.AgentDir); err != nil {
			return sandbox.Policy{}, err
		}
	}
	if len(spec.AgentWritable) > 0 {
		// The agent's home and state, written for this run alone; its settings beside
		// them are only read.
		if pol, err = pol.Widen(sandbox.Grant{Writable: spec.AgentWritable},
			sandbox.Source{Layer: sandbox.LayerRun, Detail: "the agent task's home and state in " + spec.AgentDir}); err != nil {
			return sandbox.Policy{}, err
		}
	}
	pol = pol.WithRunAllowed(spec.AllowHosts, "the agent task's model API, for this run")
	if spec.Grant != nil {
		// The person allowed exactly this for this run: nothing else widens.
		if pol, err = pol.Escalate(*spec.Grant); err != nil {
			return sandbox.Policy{}, err
		}
	}
	// The start gate judged spec.Dir (already resolved). If it resolves elsewhere now, a
	// component was swapped for a symlink in between: refuse rather than open the sandbox
	// on a place the gate never saw.
	if pol.Cwd != spec.Dir {
		return sandbox.Policy{}, fmt.Errorf("working directory %s now resolves to %s (changed after the start gate checked it); not running", spec.Dir, pol.Cwd)
	}
	return pol, nil
}

// osDenial recognizes a command that failed because the OS layer refused a write or the
// network, from the error messages such failures print, and the grant that would lift
// it: the network, or the write's path when the message names one the policy refuses.
func osDenial(output string, pol sandbox.Policy) (bool, string, *sandbox.Grant) {
	for _, line := range strings.Split(output, "\n") {
		l := strings.ToLower(line)
		switch {
		case strings.Contains(l, "read-only file system"):
			var g *sandbox.Grant
			for _, p := range quotedPaths(line) {
				if err := pol.CheckWrite(p); err != nil {
					if d, ok := sandbox.IsDenied(err); ok && d.Grant != nil {
						g = d.Grant
						break
					}
				}
			}
			return true, "write outside the writable roots: " + strings.TrimSpace(line), g
		case !pol.Network.On() && (strings.Contains(l, "network is unreachable") || strings.Contains(l, "temporary failure in name resolution") ||
			strings.Contains(l, "could not resolve host")):
			return true, "network access is " + pol.Network.Describe() + ": " + strings.TrimSpace(line), &sandbox.Grant{Network: true}
		}
	}
	return false, "", nil
}

// messagePath finds the absolute paths in an error message: quoted, as coreutils and
// most tools print the path they failed on (touch: cannot touch '/x/y': …), or bare, as
// shells do (sh: 1: cannot create /x/y: Read-only file system).
var messagePath = regexp.MustCompile(`['"‘“](/[^'"’”\n]*)['"’”]|(?:^|\s)(/[^\s:'"‘’“”]+)`)

func quotedPaths(line string) []string {
	var out []string
	for _, m := range messagePath.FindAllStringSubmatch(line, -1) {
		if m[1] != "" {
			out = append(out, m[1])
		} else {
			out = append(out, m[2])
		}
	}
	return out
}

// envNames grants every variable dispatch put in the environment: the task's variables
// and its secrets were chosen by the person for this run.
func envNames(env []string) []string {
	names := make([]string, 0, len(env))
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); ok {
			names = append(names, k)
		}
	}
	return names
}

// tailBuffer keeps the last 8 KiB of output.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 8192 {
		t.b = t.b[len(t.b)-8192:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
