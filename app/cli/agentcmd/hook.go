package agentcmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airlock-app/airlock/app/cli"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/gateway"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/sandbox"
)

func newHookCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "hook", Short: "Answer a coding agent's tool-use hooks from Airlock's broker"}
	var h gateway.ClaudeHook
	claude := &cobra.Command{
		Use:   "claude",
		Short: "Answer a Claude Code PreToolUse hook (JSON on stdin) with allow, deny or ask",
		Long: "Reads a Claude Code hook event on stdin, maps its tool (Bash, Read, Write, Edit, MultiEdit,\n" +
			"NotebookEdit, Glob, Grep, LS, WebFetch, WebSearch, mcp__*) onto Airlock's tools, asks the running\n" +
			"Airlock, and prints the documented decision JSON. When Airlock cannot answer (not running, an\n" +
			"error, nobody answered within --wait) the answer is \"ask\", never \"allow\": Claude Code asks\n" +
			"in its own prompt, and Airlock's audit says the question was handed over. When nothing in Airlock\n" +
			"can answer now (no window, tray, notification or `airlock approvals watch`), it answers at once\n" +
			"instead of waiting (--wait-unattended waits anyway). Under claude -p, where Claude Code has no\n" +
			"prompt, an unanswered question is denied with a reason the model reads. Inside an Airlock run it\n" +
			"waits for you in Airlock until --wait, or by default the task's hold deadline, then denies.\n" +
			"A PostToolUse or PostToolUseFailure event is reported to Airlock (the audit says the call ran, or\n" +
			"failed) and to its after_tool_use hooks; nothing is printed.\n\n" +
			"Claude Code's own Bash runs in Airlock's sandbox: every answer that lets a Bash call run rewrites its\n" +
			"command (updatedInput) to `airlock exec --sandbox=M --network=N --cwd DIR [--profile P] -- bash -c CMD`,\n" +
			"the policy exec resolves in the call's directory under this hook's --profile (inside an Airlock run,\n" +
			"nested in the run's sandbox with its network), plus exactly what a person allowed once\n" +
			"(--grant-writable, --grant-network). Only [hooks] claude_bash_sandbox = false in config.toml leaves\n" +
			"it on the host, unconfined, and every Bash answer then says UNCONFINED.\n\n" +
			"In ~/.claude/settings.json:\n" +
			`  {"hooks": {"PreToolUse": [{"matcher": "Bash|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS|WebFetch|WebSearch|mcp__.*",` + "\n" +
			`     "hooks": [{"type": "command", "command": "airlock hook claude", "timeout": 60}]}]}}` + "\n\n" +
			"Answer within --wait (50s) in the Airlock window; past it Claude Code asks you. For longer, raise both\n" +
			"the hook's timeout and --wait (for example \"timeout\": 600 with airlock hook claude --wait 590s).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e.getenv = gateway.AgentEnv(e.getenv)
			client, inSandbox, err := coreClient(e)
			if err != nil {
				// Still answer: "ask" with the reason.
				h.Broker = gateway.FailedBroker{Err: err}
			} else {
				h.Broker = gateway.APIBroker{Client: client}
			}
			// A scheduled run's sandbox (the dispatcher sets AIRLOCK_RUN_ID); under
			// `airlock exec` a person may be at Claude Code's prompt.
			h.InRun = inSandbox && e.getenv("AIRLOCK_RUN_ID") != ""
			if !cmd.Flags().Changed("profile") {
				h.Profile = e.getenv(config.EnvProfile)
			}
			if h.InRun && !cmd.Flags().Changed("wait") {
				h.Wait = 0 // the run's hold deadline
			}
			h.Bash = bashSandbox(e, h.Profile, inSandbox)
			return h.Run(cmd.Context(), os.Stdin, e.stdout)
		},
	}
	claude.Flags().DurationVar(&h.Wait, "wait", 50*time.Second, "how long to wait for a person's answer in Airlock before answering \"ask\"; keep it below the hook's timeout in settings.json (Claude Code's default is 60s), or Claude Code gives up on the hook (inside an Airlock run the default is the task's hold deadline)")
	claude.Flags().BoolVar(&h.WaitUnattended, "wait-unattended", false, "wait the whole --wait even when nothing in Airlock can answer now (no window, tray, notification or airlock approvals watch); by default the hook then answers at once")
	claude.Flags().StringVar(&h.MCPServer, "mcp-server", "airlock", "the name Airlock's MCP server has in Claude Code (its tools ask Airlock themselves)")
	claude.Flags().StringVar(&h.Department, "department", "", "the Airlock department these requests belong to")
	claude.Flags().StringVar(&h.Profile, "profile", "", "the permission profile these requests are judged under (default $AIRLOCK_PROFILE); it can only make the broker's tiers and approval policy stricter (airlock profile list)")
	cmd.AddCommand(claude, newCodexHookCmd(e))
	return cmd
}

// bashSandbox is how the hook runs Claude Code's Bash: through the airlock beside this
// program's `exec`, under the policy that exec resolves in the command's directory with
// the hook's profile. Inside an Airlock sandbox (a scheduled run) it nests in the run's
// sandbox with the run's network, like Airlock's own bash tool, and config.toml (out of
// sight there) cannot turn it off.
func bashSandbox(e *env, profile string, inSandbox bool) gateway.BashSandbox {
	b := gateway.BashSandbox{Profile: profile}
	if !inSandbox {
		off, err := bashUnconfined(e)
		if err != nil {
			b.Err = err
			return b
		}
		if off {
			return gateway.BashSandbox{Unconfined: true}
		}
	}
	self, err := os.Executable()
	if err == nil {
		if real, rerr := filepath.EvalSymlinks(self); rerr == nil {
			self = real
		}
		b.Airlock = filepath.Join(filepath.Dir(self), "airlock")
		if _, err = os.Stat(b.Airlock); err != nil {
			err = fmt.Errorf("airlock is not installed beside %s: %w", self, err)
		}
	}
	if err != nil {
		b.Err = err
		return b
	}
	getenv := enclosedNetwork(e.getenv, false)
	b.Policy = func(cwd string) (sandbox.Policy, error) {
		var pf cli.PolicyFlags
		fs := pflag.NewFlagSet("hook", pflag.ContinueOnError)
		pf.Register(fs)
		if err := fs.Set("cwd", cwd); err != nil {
			return sandbox.Policy{}, err
		}
		if profile != "" {
			if err := fs.Set("profile", profile); err != nil {
				return sandbox.Policy{}, err
			}
		}
		return pf.Resolve(getenv, fs)
	}
	return b
}

// bashUnconfined reports whether the configuration in force turns the Bash sandbox off
// ([hooks] claude_bash_sandbox = false): the file as the core takes it, so a same-user
// edit that turns it off waits for the person like every other loosening. A file that
// does not parse keeps it on.
func bashUnconfined(e *env) (bool, error) {
	p, err := e.paths()
	if err != nil {
		return false, err
	}
	st, err := config.ReadInForce(p.ConfigFile, config.GuardAt(p.DataDir, p.Database))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return st.File.Hooks.ClaudeBashSandbox != nil && !*st.File.Hooks.ClaudeBashSandbox, nil
}

// coreClient is how airlock hook and airlock mcp reach Airlock: inside an Airlock sandbox
// (AIRLOCK_ASK_SOCKET set) through the sandbox's ask-only channel, where they can ask and
// wait but not answer, and which tags their requests with the sandbox's run; elsewhere
// through the local API's socket.
func coreClient(e *env) (c *localapi.Client, inSandbox bool, err error) {
	if addr := e.getenv(sandbox.EnvAskSocket); addr != "" {
		c, err := localapi.NewAskClient(addr)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %w", sandbox.EnvAskSocket, err)
		}
		return c, true, nil
	}
	p, err := e.paths()
	if err != nil {
		return nil, false, err
	}
	return localapi.NewClient(p.Socket), false, nil
}

func newCodexHookCmd(e *env) *cobra.Command {
	var h gateway.CodexHook
	codex := &cobra.Command{
		Use:   "codex",
		Short: "Answer a Codex PreToolUse hook (JSON on stdin): its apply_patch, file by file",
		Long: "Reads a Codex hook event on stdin and asks the running Airlock about it. An apply_patch is asked as\n" +
			"Airlock's write_file (an added file, with its content) or edit_file (an update, with its hunks; a\n" +
			"deletion) for each path it names, so the sandbox's rules (the workspace, .git, .airlock, hidden paths)\n" +
			"and the audit see every file; it runs only if every file was allowed. Codex 0.171 can take only a\n" +
			"denial from a hook, and it runs a call whose hook failed or timed out: this hook always answers,\n" +
			"denying whatever was not allowed, unreadable or unanswered within --wait, so keep --wait below\n" +
			"the hook's timeout. Airlock's codex agent tasks configure it themselves; in ~/.codex/config.toml:\n" +
			"  [features]\n  hooks = true\n  [[hooks.PreToolUse]]\n  matcher = \"^apply_patch$\"\n" +
			"  [[hooks.PreToolUse.hooks]]\n  type = \"command\"\n  command = \"airlock hook codex --wait 50s\"\n  timeout = 60",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e.getenv = gateway.AgentEnv(e.getenv)
			client, inSandbox, err := coreClient(e)
			if err != nil {
				h.Broker = gateway.FailedBroker{Err: err} // still answers: a denial with the reason
			} else {
				h.Broker = gateway.APIBroker{Client: client}
			}
			h.InRun = inSandbox && e.getenv("AIRLOCK_RUN_ID") != ""
			if !cmd.Flags().Changed("profile") {
				h.Profile = e.getenv(config.EnvProfile)
			}
			return h.Run(cmd.Context(), os.Stdin, e.stdout)
		},
	}
	codex.Flags().DurationVar(&h.Wait, "wait", 50*time.Second, "how long to wait for a person's answer in Airlock before denying; keep it below the hook's timeout in Codex's configuration, past which Codex runs the call")
	codex.Flags().StringVar(&h.Department, "department", "", "the Airlock department these requests belong to")
	codex.Flags().StringVar(&h.Profile, "profile", "", "the permission profile these requests are judged under (default $AIRLOCK_PROFILE); it can only make the broker's tiers and approval policy stricter")
	return codex
}
