package gateway

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/internal/capped"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm"
)

type bashIn struct {
	Command        string `json:"command" jsonschema:"the shell command line, run by bash -c in the workspace inside Airlock's sandbox"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"kill the command and everything it started after this many seconds (default 120)"`
}

// shownOutput is what a bash call shows of a stream: what the buffer kept and, when it
// cut some, how much.
func shownOutput(b *capped.Buffer) string {
	s := b.String()
	if b.Truncated() {
		s += fmt.Sprintf("\n[output cut at %d of %d bytes]", b.Len(), b.Total())
	}
	return s
}

func (s *Server) addBashTool() {
	governed(s, &mcp.Tool{Name: api.ToolBash, Annotations: annotations("Run a shell command", toolKind{Destructive: true, OpenWorld: true}),
		Description: "Run a shell command (bash -c) in the workspace inside Airlock's OS sandbox: writes only in the workspace " +
			"and the writable roots, network only when the policy allows it, everything it started is killed at the timeout. " +
			"Returns the exit code, stdout and stderr separately (each cut at 64 KiB). Stdin is empty; do not start interactive programs."},
		func(in *bashIn) (string, error) {
			if strings.TrimSpace(in.Command) == "" {
				return "", errors.New("command is empty")
			}
			if in.TimeoutSeconds < 0 {
				return "", errors.New("timeout_seconds must not be negative")
			}
			if max := int(s.opts.MaxBashTimeout / time.Second); in.TimeoutSeconds > max {
				return "", fmt.Errorf("timeout_seconds %d is more than the largest allowed, %d", in.TimeoutSeconds, max)
			}
			return in.Command, nil
		},
		func(ctx context.Context, in bashIn) (*mcp.CallToolResult, api.Outcome) {
			timeout := s.opts.BashTimeout
			if in.TimeoutSeconds > 0 {
				timeout = time.Duration(in.TimeoutSeconds) * time.Second
			}
			stdout := capped.NewBuffer(s.opts.OutputCap)
			stderr := capped.NewBuffer(s.opts.OutputCap)
			var mu sync.Mutex
			var registered []int
			pol, where, refuse := s.placeCommand(s.policy(ctx), in.Command)
			if refuse != "" {
				return errorResult("%s", refuse), api.Outcome{Ran: false, Error: refuse}
			}
			netLog := capped.NewBuffer(s.opts.OutputCap) // the proxy writes from its goroutines
			var egress sandbox.Egress
			if s.egressFor(pol) {
				egress, pol.EgressConnected = s.opts.Egress(netLog, s.askDomain), true
			}
			var ask sandbox.Egress
			if s.opts.Ask != nil {
				ask = s.opts.Ask(pol.Cwd, s.session)
			}
			res, err := sandbox.Exec(ctx, sandbox.ExecRequest{
				Policy: pol, MicroVM: s.microVM(), Ask: ask, Argv: []string{"bash", "-c", in.Command}, Cwd: pol.Cwd,
				Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Timeout: timeout,
				HiddenPaths: s.opts.HiddenPaths, Egress: egress,
				OnStart: func(pid int) {
					if s.registerSandbox(pid) {
						mu.Lock()
						registered = append(registered, pid)
						mu.Unlock()
					}
				},
			})
			mu.Lock()
			for _, pid := range registered {
				s.forgetSandbox(pid)
			}
			mu.Unlock()
			if err != nil {
				out := api.Outcome{Ran: false, Error: err.Error()}
				if _, denied := sandbox.IsDenied(err); denied {
					out.SandboxDenied = true
					return errorResult("isolation error: the sandbox refused the command: %v", err), out
				}
				return errorResult("the sandbox could not run the command: %v", err), out
			}
			code := res.ExitCode
			var b strings.Builder
			fmt.Fprintf(&b, "exit code %d", code)
			if res.Signal != "" {
				fmt.Fprintf(&b, " (killed by %s)", res.Signal)
			}
			if res.TimedOut {
				fmt.Fprintf(&b, " — ran past its %s timeout and was killed with everything it started", timeout)
			}
			if res.Limit != "" {
				fmt.Fprintf(&b, " — %s; everything it started was killed", res.LimitMessage)
			}
			fmt.Fprintf(&b, "\n--- stdout ---\n%s\n--- stderr ---\n%s", shownOutput(stdout), shownOutput(stderr))
			if res.Warning != "" {
				fmt.Fprintf(&b, "\n--- sandbox warning ---\n%s", res.Warning)
			}
			if n := netLog.String(); n != "" {
				fmt.Fprintf(&b, "\n--- network (through Airlock's egress proxy) ---\n%s", n)
			}
			if where != "" {
				fmt.Fprintf(&b, "\n--- where ---\n%s", where)
			}
			result := textResult(b.String())
			result.IsError = code != 0 || res.TimedOut
			result.StructuredContent = map[string]any{"exit_code": code, "stdout": shownOutput(stdout), "stderr": shownOutput(stderr), "timed_out": res.TimedOut}
			if res.Limit != "" {
				result.StructuredContent.(map[string]any)["limit"] = res.Limit
			}
			return result, api.Outcome{Ran: true, ExitCode: &code}
		})
}

// registerSandbox tells the core a sandbox's host pid, so the API refuses it.
func (s *Server) registerSandbox(pid int) bool {
	if s.opts.Client == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := localapi.Call(ctx, s.opts.Client, api.RegisterSandbox, api.SandboxIn{PID: pid}); err != nil {
		s.opts.Log.Warn("could not register the sandbox with Airlock", "pid", pid, "error", err)
		return false
	}
	return true
}

func (s *Server) forgetSandbox(pid int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = localapi.Call(ctx, s.opts.Client, api.ForgetSandbox, api.None{}, strconv.Itoa(pid))
}

// placeCommand applies the execution mode to one bash command: the policy to run it under,
// a note saying where it ran when that is the micro-VM, or why it is refused. A command
// for the micro-VM under an allowlist is refused: this server connects no egress proxy
// to the VM (its one warm VM outlives each call's proxy), and the VM never runs an
// allowlist without one.
func (s *Server) placeCommand(pol sandbox.Policy, command string) (_ sandbox.Policy, where, refuse string) {
	pol, where, refuse = s.placeByMode(pol, command)
	if refuse == "" && pol.ExecutionMode == sandbox.ExecSandbox && pol.Network == sandbox.NetworkAllowlist {
		return pol, "", "the micro-VM: " + vm.ErrAllowlistNotConnected.Error()
	}
	return pol, where, refuse
}

// microVM is this session's micro-VM (nil: none installed).
func (s *Server) microVM() sandbox.MicroVM {
	if s.opts.MicroVM == nil {
		return nil
	}
	return s.opts.MicroVM(s.session)
}

// placeByMode is placeCommand before the network is considered.
func (s *Server) placeByMode(pol sandbox.Policy, command string) (_ sandbox.Policy, where, refuse string) {
	const vanish = "; only the workspace is shared (as /workspace): installs and writes anywhere else vanish when this session's VM stops"
	switch pol.ExecutionMode {
	case sandbox.ExecSandbox:
		if s.opts.MicroVM == nil {
			return pol, "", sandbox.ErrMicroVMUnavailable.Error()
		}
		return pol, "ran in the micro-VM (execution_mode sandbox)" + vanish, ""
	case sandbox.ExecAuto:
		why := ""
		if s.opts.Risk != nil {
			why = s.opts.Risk(command)
		}
		if why == "" {
			pol.ExecutionMode = sandbox.ExecLocal
			return pol, "", ""
		}
		if s.opts.MicroVM == nil {
			return pol, "", "execution_mode auto: " + why + " must run in the micro-VM, which is not installed here: install it with `airlock sandbox install` (or from the Sandbox tab), or use execution_mode = \"local\""
		}
		pol.ExecutionMode = sandbox.ExecSandbox
		return pol, "ran in the micro-VM (auto: " + why + ")" + vanish, ""
	}
	return pol, "", ""
}

// egressFor reports whether a bash call under pol gets the egress proxy: an allowlist,
// on the host (the micro-VM has its own network), with a hook to build it.
func (s *Server) egressFor(pol sandbox.Policy) bool {
	return pol.Network == sandbox.NetworkAllowlist && pol.ExecutionMode != sandbox.ExecSandbox && s.opts.Egress != nil
}
