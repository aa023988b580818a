package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/permission/preflight"
	"github.com/airlock-app/airlock/sandbox"
)

// policyFlags are the sandbox flags `exec` and `check` share.
type policyFlags struct {
	mode          string
	network       networkFlag
	cwd           string
	writableRoots []string
	protect       []string
	backend       string
	execMode      string
	profile       string
	limits        limitsFlags
}

func (f *policyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.mode, "sandbox", "", "sandbox mode: read-only | workspace-write | full-access")
	registerNetwork(fs, &f.network)
	fs.StringVar(&f.cwd, "cwd", "", "working directory, the writable root (default: the current directory)")
	fs.StringArrayVar(&f.writableRoots, "writable-root", nil, "another writable directory (repeatable)")
	fs.StringArrayVar(&f.protect, "protect", nil, "another path kept read-only inside the writable roots (repeatable)")
	fs.StringVar(&f.backend, "backend", "", "isolation backend: auto | os | app")
	fs.StringVar(&f.execMode, "execution-mode", "", "where the command runs: local | sandbox (the micro-VM) | auto")
	fs.StringVar(&f.profile, "profile", "", "permission profile, beneath the other flags (airlock profile list; default: $"+config.EnvProfile+", then config.toml's)")
	f.limits.register(fs)
}

// layer turns the flags given on the command line (and only those) into a layer.
func (f *policyFlags) layer(fs *pflag.FlagSet) sandbox.Layer {
	var l sandbox.Layer
	if fs.Changed("sandbox") {
		l.Mode = &f.mode
	}
	if fs.Changed("network") {
		l.Network = &f.network.v
	}
	if fs.Changed("writable-root") {
		l.WritableRoots = f.writableRoots
	}
	if fs.Changed("protect") {
		l.Protected = f.protect
	}
	if fs.Changed("backend") {
		l.Backend = &f.backend
	}
	if fs.Changed("execution-mode") {
		l.ExecutionMode = &f.execMode
	}
	l.Limits = f.limits.value(fs)
	return l
}

// resolve reads config.toml and resolves the policy for this command line through the
// one resolution (package policy): flags, environment, config.toml, the project files
// around the working directory, Airlock's own state hidden. A broken config file stops
// the command: running with settings the person did not write is worse than not running.
func (f *policyFlags) resolve(e *env, fs *pflag.FlagSet) (sandbox.Policy, error) {
	in, err := e.policyInputs(policy.Flags{Sandbox: f.layer(fs), Profile: f.profile}, f.cwd)
	if err != nil {
		return sandbox.Policy{}, err
	}
	r, err := policy.Resolve(in)
	return r.Sandbox, err
}

// policyInputs are the one resolution's inputs for this command line: config.toml as
// the person wrote it (a broken file stops the command), the environment, the flags.
func (e *env) policyInputs(flags policy.Flags, cwd string) (policy.Inputs, error) {
	p, err := e.paths()
	if err != nil {
		return policy.Inputs{}, err
	}
	// As the core takes it: what loosens the answer path waits for the person.
	st, err := config.ReadInForce(p.ConfigFile, config.GuardAt(p.DataDir, p.Database))
	file := st.File
	var ce *config.Error
	switch {
	case errors.As(err, &ce):
		return policy.Inputs{}, fmt.Errorf("%w (fix config.toml; `airlock config show` checks it)", err)
	case err == nil:
	case !errors.Is(err, os.ErrNotExist):
		return policy.Inputs{}, fmt.Errorf("read %s: %w", p.ConfigFile, err)
	}
	return policy.Inputs{File: file, FilePath: p.ConfigFile, Getenv: e.getenv, Flags: flags, Cwd: cwd, State: policy.StateOf(p)}, nil
}

func newExecCmd(e *env) *cobra.Command {
	var pf policyFlags
	var timeout time.Duration
	var grantEnv, grantWritable []string
	var grantNetwork bool
	cmd := &cobra.Command{
		Use:   "exec [flags] -- CMD [ARGS...]",
		Short: "Run a command inside the sandbox and return its exit code",
		Long: "Runs CMD confined by the effective sandbox policy (flags > environment > config.toml > defaults).\n" +
			"The command's exit code is passed through (128+N when killed by signal N). Airlock's own failures:\n" +
			"  122 the command was denied by the sandbox (the reason is on stderr); with no OS sandbox\n" +
			"      (--backend app) the application layer's denial is final\n" +
			"  124 the command ran past --timeout and was killed, with everything it started\n" +
			"  125 the sandbox could not be set up (bad policy, no OS backend with --backend os), or there is no\n" +
			"      OS sandbox (--backend app, or auto without one) and the application layer cannot check everything\n" +
			"      the command could do (an interpreter, a script, a program it does not model): use --backend auto/os\n" +
			"  126 the command could not be executed, 127 it was not found",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			policy, err := pf.resolve(e, cmd.Flags())
			if err != nil {
				return &exitError{code: sandbox.ExitSandboxFailed, err: err}
			}
			if len(policy.Ignored) > 0 {
				for _, ig := range policy.Ignored {
					fmt.Fprintf(e.stderr, "airlock: %s\n", ig)
				}
			}
			if g := (api.Grant{Writable: grantWritable, Network: grantNetwork}); !g.IsZero() {
				// What a person allowed once for this command (the Claude Code hook passes
				// it on): exactly that, with hidden and protected paths kept as they are.
				if policy, err = policy.Escalate(g); err != nil {
					return &exitError{code: sandbox.ExitSandboxFailed, err: err}
				}
			}
			e.warn(e.policyWarnings(policy, "this command"))
			req := sandbox.ExecRequest{
				Policy: policy, Argv: args, Stdin: os.Stdin, Stdout: e.stdout, Stderr: e.stderr,
				Timeout: timeout, GrantEnv: grantEnv,
			}
			if err := routeExec(cmd.Context(), e, &req, args); err != nil {
				return &exitError{code: sandbox.ExitSandboxFailed, err: err}
			}
			if coreListening(e) {
				if req.Policy.Network == sandbox.NetworkAllowlist {
					// Without a running core the run stays off and says so (never more access
					// than asked); in the micro-VM it is refused.
					req.Egress = coreEgress(e, req.Policy.Cwd)
				}
				if req.Policy.Mode != sandbox.ModeFullAccess {
					req.Ask = coreAsk(e, req.Policy.Cwd)
				}
			}
			res, err := sandbox.Exec(cmd.Context(), req)
			if res.Warning != "" {
				fmt.Fprintf(e.stderr, "airlock: warning: %s\n", res.Warning)
			}
			if err != nil {
				var ee *sandbox.ExecError
				if errors.As(err, &ee) {
					return &exitError{code: ee.Code, err: err}
				}
				if _, ok := sandbox.IsDenied(err); ok {
					return &exitError{code: sandbox.ExitDenied, err: err}
				}
				return &exitError{code: sandbox.ExitSandboxFailed, err: err}
			}
			if res.TimedOut {
				return &exitError{code: sandbox.ExitTimeout, err: fmt.Errorf("%s ran past its %s timeout and was killed with everything it started", args[0], timeout)}
			}
			if res.Limit != "" {
				return &exitError{code: res.ExitCode, err: fmt.Errorf("%s %s; everything it started was killed", args[0], res.LimitMessage)}
			}
			if res.ExitCode != 0 {
				return &exitError{code: res.ExitCode, err: nil}
			}
			return nil
		},
	}
	pf.register(cmd.Flags())
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "kill the command and everything it started after this long (for example 30s, 5m)")
	cmd.Flags().StringArrayVar(&grantEnv, "grant-env", nil, "keep this credential variable in the command's environment (repeatable; others such as *_TOKEN are removed)")
	cmd.Flags().StringArrayVar(&grantWritable, "grant-writable", nil, "make this existing path writable for this command only, as an escalation a person allowed once (repeatable; hidden and protected paths stay as they are)")
	cmd.Flags().BoolVar(&grantNetwork, "grant-network", false, "turn the network on for this command only, as an escalation a person allowed once")
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// checkReport is what `airlock check` prints.
type checkReport struct {
	Command  string           `json:"command"`
	Policy   sandbox.Policy   `json:"policy"`
	Verdict  string           `json:"verdict"` // allow | ask | deny
	Reasons  []string         `json:"reasons,omitempty"`
	Analysis sandbox.Analysis `json:"analysis"`
	// Permission is the running core's full evaluation: tier, preflight, the rule that
	// matched, grants, hooks, the approval policy. Absent when no core runs.
	Permission *api.Evaluation `json:"permission,omitempty"`
	// Preflight is the dangerous-command classifier's view, computed here when no core runs.
	Preflight *preflightView `json:"preflight,omitempty"`
	Notes     []string       `json:"notes,omitempty"`
	// Warnings are the red lines of the policy (policyWarnings).
	Warnings []string `json:"warnings,omitempty"`
}

type preflightView struct {
	Findings  []preflight.Finding `json:"findings,omitempty"`
	KnownSafe bool                `json:"known_safe"`
}

func newCheckCmd(e *env) *cobra.Command {
	var pf policyFlags
	cmd := &cobra.Command{
		Use:   "check [flags] -- CMD...",
		Short: "Report what the sandbox would do with a command, without running it",
		Long: "Parses the command as a shell command line (one argument) or as an argv (several arguments) and\n" +
			"reports the effective policy, the programs it would run, its write targets and network use, and\n" +
			"whether the sandbox would allow it.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			policy, err := pf.resolve(e, cmd.Flags())
			if err != nil {
				return err
			}
			line := args[0]
			if len(args) > 1 {
				line = shellJoin(args)
			}
			an, _ := policy.AnalyzeCommand(line, "")
			rep := checkReport{Command: line, Policy: policy, Analysis: an, Verdict: "allow", Warnings: e.policyWarnings(policy, "this command")}
			for _, d := range an.Denials {
				rep.Verdict = "deny"
				rep.Reasons = append(rep.Reasons, d.Error())
			}
			askCore(cmd.Context(), e, &rep)
			err = e.print(rep, func(w io.Writer) { printCheck(w, rep) })
			if err == nil && rep.Verdict != "allow" {
				return &exitError{code: sandbox.ExitDenied, err: nil}
			}
			return err
		},
	}
	pf.register(cmd.Flags())
	cmd.Flags().SetInterspersed(false)
	return cmd
}

func printCheck(w io.Writer, r checkReport) {
	fmt.Fprintf(w, "command   %s\n", r.Command)
	fmt.Fprintf(w, "policy    %s, network %s, cwd %s\n", r.Policy.Mode, r.Policy.Network.Describe(), r.Policy.Cwd)
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "WARNING   %s\n", wn)
	}
	if len(r.Analysis.Programs) > 0 {
		fmt.Fprintf(w, "runs      %s\n", strings.Join(r.Analysis.Programs, ", "))
	}
	for _, wt := range r.Analysis.Writes {
		fmt.Fprintf(w, "writes    %s (%s)\n", wt.Path, wt.Program)
	}
	for _, n := range r.Analysis.Network {
		fmt.Fprintf(w, "network   %s\n", n)
	}
	for _, n := range r.Analysis.Notes {
		fmt.Fprintf(w, "note      %s\n", n)
	}
	if r.Preflight != nil {
		for _, f := range r.Preflight.Findings {
			fmt.Fprintf(w, "danger    %s: %s\n", f.Reason, f.Command)
		}
	}
	if ev := r.Permission; ev != nil {
		fmt.Fprintf(w, "tier      %s (decided by %s, approval policy %s)\n", ev.Decision.Tier, ev.Decision.Layer, ev.ApprovalPolicy)
		if ev.Rule != nil {
			fmt.Fprintf(w, "rule      %s %s %q\n", ev.Rule.Action, ev.Rule.Tool, ev.Rule.Pattern)
		}
	}
	fmt.Fprintf(w, "verdict   %s\n", strings.ToUpper(r.Verdict))
	for _, reason := range r.Reasons {
		fmt.Fprintf(w, "  - %s\n", reason)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// askCore asks the running core for the full evaluation; without one, it runs the
// dangerous-command classifier here and says what was not evaluated.
func askCore(ctx context.Context, e *env, rep *checkReport) {
	c, err := e.client()
	if err == nil {
		params, _ := json.Marshal(map[string]string{"command": rep.Command})
		req := api.Request{Tool: api.ToolBash, Params: params,
			Context: api.Context{Cwd: rep.Policy.Cwd, Policy: api.PolicySummary{Mode: string(rep.Policy.Mode), Network: rep.Policy.Network}}}
		var ev api.Evaluation
		if ev, err = localapi.Call(ctx, c, api.PermissionCheck, req); err == nil {
			rep.Permission = &ev
			rep.Verdict = string(ev.Decision.Verdict)
			rep.Reasons = ev.Decision.Reasons
			return
		}
	}
	pa := preflight.Analyze(rep.Command, preflight.Options{Home: e.getenv("HOME")})
	rep.Preflight = &preflightView{Findings: pa.Findings, KnownSafe: pa.KnownSafe}
	if rep.Verdict == "allow" && (pa.Interactive() || !pa.KnownSafe) {
		rep.Verdict = "ask"
	}
	rep.Reasons = append(rep.Reasons, pa.Reasons()...)
	rep.Notes = append(rep.Notes, fmt.Sprintf("no running Airlock answered (%v): tiers, rules, grants and hooks were not evaluated; start `airlock daemon` for the full verdict", err))
}

// shellJoin quotes argv into one shell command line.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '+' || r == '@' ||
				(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// coreListening reports whether a core answers on the local API's socket.
func coreListening(e *env) bool {
	p, err := e.paths()
	if err != nil {
		return false
	}
	c, err := net.DialTimeout("unix", p.Socket, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// coreEgress is the egress hook of `airlock exec` under an allowlist: this binary does not
// link the proxy (every exec would pay for its start-up), so the running core serves it
// inside the sandbox's namespace (POST /v1/sandboxes/egress) with the lists it resolves
// for cwd, and ends it when the run does. A core that is running but cannot serve it
// fails the run (it never starts without its way out).
func coreEgress(e *env, cwd string) sandbox.Egress {
	return func(ctx context.Context, pid int, addr string) (func(), error) {
		c, err := e.client()
		if err != nil {
			return nil, err
		}
		stop, err := CoreService(ctx, c, api.ServeEgress, api.StopEgress, api.EgressIn{PID: pid, Cwd: cwd, Addr: addr})
		if err != nil {
			return nil, fmt.Errorf("ask the running Airlock to serve it (%w); start it with `airlock daemon`, or run with --network off", err)
		}
		return stop, nil
	}
}

// coreAsk is the ask-only channel of `airlock exec`'s sandbox, which the running core
// serves inside it (POST /v1/sandboxes/ask): an agent run under airlock exec asks the
// person through it. A core that cannot serve it (an older one) costs the run only its
// channel, and says so.
func coreAsk(e *env, cwd string) sandbox.Egress {
	c, err := e.client()
	if err != nil {
		return func(context.Context, int, string) (func(), error) { return nil, err }
	}
	return CoreAsk(c, api.EgressIn{Cwd: cwd}, func(err error) {
		fmt.Fprintf(e.stderr, "airlock: warning: this sandbox has no ask-only channel (%v): an agent in it cannot ask you\n", err)
	})
}

// CoreAsk is the ask-only channel of a sandbox this process starts, served by the core c
// (POST /v1/sandboxes/ask) with in's directory and session; the pid and address come from
// the sandbox. A core that cannot serve it costs the sandbox only its channel: warn hears
// why, and the command still runs.
func CoreAsk(c *localapi.Client, in api.EgressIn, warn func(error)) sandbox.Egress {
	return func(ctx context.Context, pid int, addr string) (func(), error) {
		in.PID, in.Addr = pid, addr
		stop, err := CoreService(ctx, c, api.ServeAsk, api.StopAsk, in)
		if err != nil {
			warn(err)
			return func() {}, nil
		}
		return stop, nil
	}
}

// CoreService asks the running core c to serve a service (the egress proxy, the ask-only
// channel) inside the caller's sandbox, and returns how to stop it.
func CoreService(ctx context.Context, c *localapi.Client, serve api.Route[api.EgressIn, api.EgressServed], stop api.Route[api.None, api.EgressStopped], in api.EgressIn) (func(), error) {
	if _, err := localapi.Call(ctx, c, serve, in); err != nil {
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, _ = localapi.Call(ctx, c, stop, api.None{}, strconv.Itoa(in.PID))
	}, nil
}
