package sandboxexec

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
)

// classified is the command line the risk classifier sees: `sh -c SCRIPT` is SCRIPT,
// quoted as the person wrote it.
func classified(argv []string) string {
	if len(argv) == 3 && (argv[0] == "sh" || argv[0] == "bash" || argv[0] == "/bin/sh" || argv[0] == "/bin/bash") && argv[1] == "-c" {
		return argv[2]
	}
	return api.ShellJoin(argv)
}

// microVM returns the run's micro-VM runner, or why there is none.
func (e *Executor) microVM(runID uint) (sandbox.MicroVM, func(), error) {
	if e.opts.MicroVM == nil {
		return nil, nil, fmt.Errorf("%w (no micro-VM in this process)", vm.ErrNotReady)
	}
	return e.opts.MicroVM(runID)
}

// Route implements dispatch.Router: under execution_mode auto, a low-risk command runs
// on the host, a high-risk one in the micro-VM when it is ready; otherwise dispatch asks
// the person (before the run takes a slot) whether it may run on the host.
func (e *Executor) Route(_ context.Context, q dispatch.RouteQuery) dispatch.RoutePlan {
	if q.Policy.ExecutionMode != string(sandbox.ExecAuto) {
		return dispatch.RoutePlan{}
	}
	cmdline := classified(q.Argv)
	risk := Risk(cmdline, q.Dir, e.opts.Home)
	if risk == "" {
		return dispatch.RoutePlan{Where: dispatch.RouteHost, Reason: "auto: low-risk" + quoted(cmdline)}
	}
	var vmErr error
	if e.opts.MicroVMReady != nil {
		vmErr = e.opts.MicroVMReady()
	} else {
		var end func()
		if _, end, vmErr = e.microVM(q.RunID); end != nil {
			end() // only asked whether there is one: the run's VM boots on its command
		}
	}
	if vmErr == nil {
		return dispatch.RoutePlan{Where: dispatch.RouteMicroVM, Reason: "auto: " + risk}
	}
	state := "is not installed"
	if !strings.Contains(vmErr.Error(), "not installed") {
		state = "is not ready (" + vmErr.Error() + ")"
	}
	return dispatch.RoutePlan{
		Where: dispatch.RouteAsk, Reason: "auto: " + risk + "; the micro-VM is not ready",
		Question: fmt.Sprintf("auto: %s is high-risk and the micro-VM %s — allow it on the host, or install the micro-VM (`airlock sandbox install` or the Sandbox tab)", risk, state),
	}
}

// NotRun implements dispatch.Router: the person refused (or never answered) running the
// command on the host; the decision goes to the audit.
func (e *Executor) NotRun(q dispatch.RouteQuery, plan dispatch.RoutePlan, why string) {
	e.decided(dispatch.ExecSpec{RunID: q.RunID}, Route{
		RunID: q.RunID, Command: classified(q.Argv), Cwd: q.Dir, Mode: q.Policy.ExecutionMode, Asked: true, AnsweredBy: plan.AnsweredBy,
		Reason: plan.Reason + " and running on the host was " + why,
	})
}

var _ dispatch.Router = (*Executor)(nil)

// route decides where the run's command runs under the "sandbox" and "auto" execution
// modes (auto: as dispatch decided before the run started, when it did), writes the
// decision into the run's log and tells OnRoute. It returns the micro-VM runner when the
// command goes there. An error means the command must not run.
func (e *Executor) route(ctx context.Context, spec dispatch.ExecSpec, pol sandbox.Policy) (rt Route, vmExec sandbox.MicroVM, end func(), err error) {
	cmdline := classified(spec.Argv)
	rt = Route{RunID: spec.RunID, Command: cmdline, Cwd: spec.Dir, Mode: string(pol.ExecutionMode)}
	plan := dispatch.RoutePlan{Where: dispatch.RouteMicroVM, Reason: "execution_mode sandbox"}
	if pol.ExecutionMode != sandbox.ExecSandbox {
		if spec.Route != nil && spec.Route.Where != "" {
			plan = *spec.Route
		} else {
			plan = e.Route(ctx, dispatch.RouteQuery{RunID: spec.RunID, Argv: spec.Argv, Dir: spec.Dir, Policy: spec.Policy})
		}
	}
	switch plan.Where {
	case dispatch.RouteHost:
		rt.Where, rt.Reason, rt.Asked, rt.AnsweredBy = WhereHost, plan.Reason, plan.Asked, plan.AnsweredBy
		if plan.Asked {
			rt.Reason += ", allowed on the host by " + orSomeone(plan.AnsweredBy)
		}
		e.decided(spec, rt)
		return rt, nil, nil, nil
	case dispatch.RouteMicroVM:
		vmExec, end, err = e.microVM(spec.RunID)
		if err != nil {
			rt.Reason = plan.Reason + ", but the micro-VM is not ready"
			e.decided(spec, rt)
			if pol.ExecutionMode == sandbox.ExecSandbox {
				return rt, nil, end, fmt.Errorf("execution_mode \"sandbox\" needs the micro-VM: %v%s; or set execution_mode = \"local\" for this task", err, installHint(err))
			}
			return rt, nil, end, fmt.Errorf("%s should run in the micro-VM, which is not ready: %v%s; or set execution_mode = \"local\"", plan.Reason, err, installHint(err))
		}
		rt.Where, rt.Reason = WhereMicroVM, plan.Reason
		e.decided(spec, rt)
		return rt, vmExec, end, nil
	default: // ask, without dispatch to ask it (no Router wired): nobody can be asked
		rt.Reason = plan.Reason + " and nobody can be asked"
		e.decided(spec, rt)
		return rt, nil, nil, fmt.Errorf("%s; nobody could be asked to run it on the host — install the micro-VM with `airlock sandbox install` (or from the Sandbox tab), or set execution_mode = \"local\"", plan.Reason)
	}
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
// network is the policy's (an allowlist through the run's egress proxy, as on the host),
// everything else is thrown away with the VM.
func (e *Executor) execMicroVM(ctx context.Context, spec dispatch.ExecSpec, pol sandbox.Policy, vmExec sandbox.MicroVM) (dispatch.ExecResult, error) {
	net := "off (no network device)"
	var ask sandbox.Egress
	if pol.Mode != sandbox.ModeFullAccess && e.opts.Ask != nil {
		// An agent in the VM asks the person as one on the host does.
		ask = e.opts.Ask(spec, pol)
	}
	if ask != nil {
		net = "off (its only device leads to the run's ask-only channel)"
	}
	var egress sandbox.Egress
	switch pol.Network {
	case sandbox.NetworkOn:
		net = "on (NAT through a network namespace of its own: not to your machine's loopback)"
	case sandbox.NetworkAllowlist:
		if e.opts.Egress != nil {
			egress = e.opts.Egress(spec, pol)
		}
		if egress == nil {
			// The VM refuses the command (vm.ErrAllowlistNotConnected) rather than give it
			// more network, or less, than the allowlist promised.
			net = api.AllowlistNotConnected
		} else {
			net = "allowlist (only the allowed domains, through Airlock's egress proxy; every connection is listed below)"
		}
	}
	fmt.Fprintf(spec.Stderr, "airlock: in the micro-VM only %s is shared (as /workspace): files written there stay on your machine; installs and writes anywhere else vanish when the run ends (its VM is thrown away). Network %s.\n", spec.Dir, net)
	pol.ExecutionMode = sandbox.ExecSandbox
	tail := &tailBuffer{}
	res, err := sandbox.Exec(ctx, sandbox.ExecRequest{
		Policy: pol, Argv: spec.Argv, Cwd: spec.Dir, Env: spec.Env, GrantEnv: envNames(spec.Env),
		Stdout: io.MultiWriter(spec.Stdout, tail), Stderr: io.MultiWriter(spec.Stderr, tail),
		Timeout: spec.Timeout, MicroVM: vmExec, Egress: egress, Ask: ask,
	})
	if res.Warning != "" {
		fmt.Fprintf(spec.Stderr, "airlock: warning: %s\n", res.Warning)
	}
	if err != nil {
		return dispatch.ExecResult{}, fmt.Errorf("micro-VM: %w", err)
	}
	return dispatch.ExecResult{ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut}, nil
}
