package cli

import "github.com/spf13/cobra"

func newDaemonCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "daemon [--tcp ADDR]",
		Short: "Run the Airlock core headless (no window) until SIGINT or SIGTERM",
		Long: "Runs the same core as the desktop app, without a window: scheduled runs, the sandbox, the\n" +
			"approval broker and the local API. Answer approvals with `airlock approvals` from a terminal.\n\n" +
			"  --tcp ADDR   also listen on this loopback address (for example 127.0.0.1:7391), guarded by a\n" +
			"               bearer token (api.token) kept in the secret store\n\n" +
			"Without a desktop session (no D-Bus session bus, so no OS keyring), choose the file store:\n" +
			"[secrets] store = \"file\" in config.toml; `airlock status` says which store is in use.\n\n" +
			"The core lives in airlockd beside airlock (so that this command line stays small and fast);\n" +
			"airlock daemon becomes that process, with the same pid.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" {
					return cmd.Help()
				}
			}
			return execBeside("airlockd", args, "build it with `make build`")
		},
	}
}
