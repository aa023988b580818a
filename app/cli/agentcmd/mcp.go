package agentcmd

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/buildinfo"
	"github.com/airlock-app/airlock/app/cli"
	"github.com/airlock-app/airlock/app/gateway"
	"github.com/airlock-app/airlock/sandbox"
)

func newMCPCmd(e *env) *cobra.Command {
	var pf cli.PolicyFlags
	var department, posture, httpAddr string
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "mcp [--cwd DIR] [--department NAME] [--posture P] [--http 127.0.0.1:PORT]",
		Short: "Serve Airlock's governed tools to an agent over MCP (stdio, or streamable HTTP on loopback)",
		Long: "A Model Context Protocol server on stdin/stdout. Its tools — read_file, list_dir, search_files,\n" +
			"write_file, edit_file, bash, web_fetch and the six ops tools — each ask Airlock's permission broker\n" +
			"first, so tiers, rules, hooks, grants and the person's popups apply; bash runs in the sandbox.\n" +
			"The working directory (--cwd, default the current one) is the session's workspace.\n" +
			"If no Airlock core runs, it starts the desktop app hidden (with a display) or airlockd, and says so\n" +
			"on stderr.\n\n" +
			"Codex (~/.codex/config.toml):   [mcp_servers.airlock]\n" +
			"                                command = \"airlock\"\n" +
			"                                args = [\"mcp\"]\n" +
			"Claude Code:                    claude mcp add airlock -- airlock mcp\n\n" +
			"With --http 127.0.0.1:PORT it serves streamable HTTP at http://127.0.0.1:PORT/mcp instead, one session\n" +
			"per client, for clients that connect to a URL. Only loopback addresses are accepted; every request\n" +
			"needs Authorization: Bearer <token> (`airlock mcp token` prints it) and a loopback Host, and a browser\n" +
			"Origin, when sent, must be on loopback too.\n" +
			"Claude Code:                    claude mcp add --transport http airlock http://127.0.0.1:PORT/mcp \\\n" +
			"                                  --header \"Authorization: Bearer $(airlock mcp token)\"",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if posture != "" && posture != "cloudops" {
				return fmt.Errorf("unknown posture %q: the postures are cloudops (or none)", posture)
			}
			if posture == "cloudops" && !cmd.Flags().Changed("network") {
				_ = cmd.Flags().Set("network", "true") // cloudops turns the network on
			}
			var ln net.Listener
			var token string
			if httpAddr != "" {
				var err error
				if ln, token, err = listenMCPHTTP(cmd.Context(), e, httpAddr); err != nil {
					return err
				}
				defer ln.Close()
			}
			e.getenv = gateway.AgentEnv(e.getenv)
			e.getenv = enclosedNetwork(e.getenv, cmd.Flags().Changed("network"))
			policy, err := pf.Resolve(e.getenv, cmd.Flags())
			if err != nil {
				return err
			}
			for _, ig := range policy.Ignored {
				fmt.Fprintf(e.stderr, "airlock mcp: %s\n", ig)
			}
			p, err := e.paths()
			if err != nil {
				return err
			}
			client, inSandbox, err := coreClient(e)
			if err != nil {
				return err
			}
			if !inSandbox { // inside a sandbox the core is outside: nothing to start
				if err := gateway.EnsureCore(cmd.Context(), p, e.getenv, e.stderr); err != nil {
					return err
				}
				// The department's posture (cloudops: bash P2, network on, the posture's
				// instructions); inside a sandbox the ask-only channel serves no departments.
				given := posture
				if department, posture, err = sessionDepartment(cmd.Context(), client, department, posture, policy.Cwd); err != nil {
					return err
				}
				if posture == "cloudops" && given == "" && !cmd.Flags().Changed("network") {
					_ = cmd.Flags().Set("network", "true")
					if policy, err = pf.Resolve(e.getenv, cmd.Flags()); err != nil {
						return err
					}
				}
			}
			log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			opts := gateway.Options{
				Policy: policy, Department: department, Posture: posture, Profile: pf.Profile(e.getenv), Run: e.getenv("AIRLOCK_RUN_ID"),
				Broker: gateway.APIBroker{Client: client}, Client: client,
				Version: buildinfo.Version, Log: log,
			}
			if policy.Network == sandbox.NetworkAllowlist {
				opts.Egress = SessionEgress(policy)
			}
			if !inSandbox {
				opts.Ask = func(cwd, session string) sandbox.Egress {
					return cli.CoreAsk(client, api.EgressIn{Cwd: cwd, Session: session, Caller: "airlock mcp bash"}, func(err error) {
						log.Warn("this bash call's sandbox has no ask-only channel: an agent in it cannot ask you", "err", err)
					})
				}
			}
			if policy.ExecutionMode != sandbox.ExecLocal {
				closeVM := sessionMicroVM(cmd.Context(), e, p.SandboxDir, policy, &opts, log)
				defer closeVM()
			}
			if ln != nil {
				return serveMCPHTTP(cmd.Context(), e, ln, token, idle, opts)
			}
			srv := gateway.NewServer(opts)
			return srv.Run(cmd.Context(), &mcp.StdioTransport{})
		},
	}
	pf.Register(cmd.Flags())
	cmd.Flags().StringVar(&department, "department", "", "the Airlock department this session works for")
	cmd.Flags().StringVar(&posture, "posture", "", "the department posture: cloudops (bash asks every time, network on)")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:PORT) instead of stdio")
	cmd.Flags().DurationVar(&idle, "idle-timeout", 24*time.Hour, "with --http: close a client's session after this long without a request (0: never); the client then starts a new one")
	cmd.AddCommand(newMCPTokenCmd(e))
	return cmd
}

// enclosedNetwork makes a session inside an Airlock sandbox (a run's agent) take that
// sandbox's network_access unless a flag or AIRLOCK_NETWORK says otherwise: the run's
// recorded policy is what holds there, and the configuration file may be out of sight.
func enclosedNetwork(getenv func(string) string, flagged bool) func(string) string {
	outer := getenv(sandbox.EnvEnclosingNetwork)
	if flagged || outer == "" || getenv(sandbox.EnvAskSocket) == "" || getenv(sandbox.EnvNetwork) != "" {
		return getenv
	}
	return func(k string) string {
		if k == sandbox.EnvNetwork {
			return outer
		}
		return getenv(k)
	}
}
