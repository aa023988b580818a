package sandboxexec

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
)

// route decides where the run's command runs under the "sandbox" and "auto" execution
// modes, writes the decision into the run's log and tells OnRoute. It returns the
// micro-VM runner when the command goes there. An error means the command must not run.
func (e *Executor) route(ctx context.Context, spec dispatch.ExecSpec, pol sandbox.Policy) (rt Route, vmExec sandbox.MicroVM, end func(), err error) {
	cmdline := joinArgv(spec.Argv)
	if len(spec.Argv) == 3 && (spec.Argv[0] == "sh" || spec.Argv[0] == "bash" || spec.Argv[0] == "/bin/sh" || spec.Argv[0] == "/bin/bash") && spec.Argv[1] == "-c" {
		cmdline = spec.Argv[2] // classified the same; quoted as the person wrote it
	}
	rt = Route{RunID: spec.RunID, Command: cmdline, Cwd: spec.Dir, Mode: string(pol.ExecutionMode)}
	vmErr := fmt.Errorf("%w (no micro-VM in this process)", vm.ErrNotReady)
	if e.opts.MicroVM != nil {
		vmExec, end, vmErr = e.opts.MicroVM(spec.RunID)
	}
	switch pol.ExecutionMode {
	case sandbox.ExecSandbox:
		rt.Where, rt.Reason = WhereMicroVM, "execution_mode sandbox"
		if vmErr != nil {
			rt.Where, rt.Reason = "", "execution_mode sandbox, but the micro-VM is not ready"
			e.decided(spec, rt)
			return rt, nil, end, fmt.Errorf("execution_mode \"sandbox\" needs the micro-VM: %v%s; or set execution_mode = \"local\" for this task", vmErr, installHint(vmErr))
		}
	default: // auto
		risk := Risk(cmdline, spec.Dir, e.opts.Home)
		if risk == "" {
			rt.Where, rt.Reason = WhereHost, "auto: low-risk"+quoted(cmdline)
			e.decided(spec, rt)
			return rt, nil, end, nil
		}
		if vmErr == nil {
			rt.Where, rt.Reason = WhereMicroVM, "auto: "+risk
			break
		}
		rt.Asked = true
		if e.opts.Approvals == nil {
			rt.Reason = "auto: " + risk + "; the micro-VM is not ready and nobody can be asked"
			e.decided(spec, rt)
			return rt, nil, end, fmt.Errorf("auto: %s should run in the micro-VM, which is not ready: %v%s; or set execution_mode = \"local\"", risk, vmErr, installHint(vmErr))
		}
		local := spec.Policy
		local.ExecutionMode = string(sandbox.ExecLocal)
		dec, err := e.opts.Approvals.Await(ctx, dispatch.ApprovalRequest{
			ID: fmt.Sprintf("run-%d-host", spec.RunID), Kind: dispatch.ApprovalEscalation, Tool: "exec",
			Argv: spec.Argv, RunID: spec.RunID, Cwd: spec.Dir, Policy: spec.Policy, Proposed: &local,
			Denial: fmt.Sprintf("execution_mode auto: %s should run in the micro-VM, which is not ready (%v); run it on the host under the sandbox policy instead?", risk, vmErr),
		})
		if err != nil || !dec.Allow {
			why := "denied"
			if err != nil {
				why = err.Error()
			} else if dec.AnsweredBy != "" {
				why += " by " + dec.AnsweredBy
			}
			rt.Reason = "auto: " + risk + "; the micro-VM is not ready and running on the host was " + why
			e.decided(spec, rt)
			return rt, nil, end, fmt.Errorf("auto: %s should run in the micro-VM, which is not ready; running it on the host was %s — install the micro-VM with `airlock sandbox install`", risk, why)
		}
		rt.Where, rt.AnsweredBy = WhereHost, dec.AnsweredBy
		rt.Reason = "auto: " + risk + "; the micro-VM is not ready, allowed on the host by " + orSomeone(dec.AnsweredBy)
	}
	e.decided(spec, rt)
	return rt, vmExec, end, nil
}

// installHint names the way to install the micro-VM unless err already does.
func installHint(err error) string {
	if strings.Contains(err.Error(), "airlock sandbox install") {
		return ""
	}
	return " — install it with `airlock sandbox install` (or from the Sandbox tab)"
}

func orSomeone(s string) string {
	if s == "" {
		return "the approval policy"
	}
	return s
}

// decided writes the decision into the run's log and tells OnRoute.
func (e *Executor) decided(spec dispatch.ExecSpec, rt Route) {
	if spec.Stderr != nil {
		line := rt.LogLine()
		if rt.Where == "" {
			line = "airlock: not running (" + rt.Reason + ")"
		}
		fmt.Fprintln(spec.Stderr, line)
	}
	if e.opts.OnRoute != nil {
		e.opts.OnRoute(rt)
	}
}

// execMicroVM runs the command in the micro-VM: the run's directory is /workspace, the
// network is the policy's, everything else is thrown away with the VM.
func (e *Executor) execMicroVM(ctx context.Context, spec dispatch.ExecSpec, pol sandbox.Policy, vmExec sandbox.MicroVM) (dispatch.ExecResult, error) {
	net := "off (no network device)"
	if pol.Network {
		net = "on (NAT through the host)"
	}
	fmt.Fprintf(spec.Stderr, "airlock: in the micro-VM only %s is shared (as /workspace): files written there stay on your machine; installs and writes anywhere else vanish when the run ends (its VM is thrown away). Network %s.\n", spec.Dir, net)
	pol.ExecutionMode = sandbox.ExecSandbox
	tail := &tailBuffer{}
	res, err := sandbox.Exec(ctx, sandbox.ExecRequest{
		Policy: pol, Argv: spec.Argv, Cwd: spec.Dir, Env: spec.Env, GrantEnv: envNames(spec.Env),
		Stdout: io.MultiWriter(spec.Stdout, tail), Stderr: io.MultiWriter(spec.Stderr, tail),
		Timeout: spec.Timeout, MicroVM: vmExec,
	})
	if res.Warning != "" {
		fmt.Fprintf(spec.Stderr, "airlock: warning: %s\n", res.Warning)
	}
	if err != nil {
		return dispatch.ExecResult{}, fmt.Errorf("micro-VM: %w", err)
	}
	return dispatch.ExecResult{ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut}, nil
}
