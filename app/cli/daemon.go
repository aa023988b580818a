package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
)

func newDaemonCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "daemon [--tcp ADDR]",
		Short: "Run the Airlock core headless (no window) until SIGINT or SIGTERM",
		Long: "Runs the same core as the desktop app, without a window: scheduled runs, the sandbox, the\n" +
			"approval broker and the local API. Answer approvals with `airlock approvals` from a terminal.\n\n" +
			"  --tcp ADDR   also listen on this loopback address (for example 127.0.0.1:7391), guarded by a\n" +
			"               bearer token kept in the OS keyring\n\n" +
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

// launchDesktop replaces this process with airlock-desktop found beside it.
func launchDesktop(_ *env) error {
	return execBeside("airlock-desktop", nil, "build it with `make build`, or run the headless core with `airlock daemon`")
}

// execBeside replaces this process with the named executable found beside this one.
func execBeside(name string, args []string, hint string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find %s: %w", name, err)
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	target := filepath.Join(filepath.Dir(self), name)
	if _, err := os.Stat(target); err != nil {
		return fmt.Errorf("%s is not installed beside %s (looked for %s): %s", name, self, target, hint)
	}
	return syscall.Exec(target, append([]string{target}, args...), os.Environ())
}
