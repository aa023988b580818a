package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/app/buildinfo"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/localapi"
)

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Airlock's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := map[string]string{"version": buildinfo.Version, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH}
			return e.print(v, func(w io.Writer) {
				fmt.Fprintf(w, "airlock %s (%s, %s/%s)\n", buildinfo.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			})
		},
	}
}

func newStatusCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the running app or daemon: what it is, its pid, data paths, uptime, configuration health",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			var st localapi.Status
			err = c.Do(cmd.Context(), "GET", "/v1/status", nil, &st)
			var nr *localapi.NotRunningError
			if errors.As(err, &nr) {
				if e.json {
					_ = e.print(map[string]any{"running": false, "socket": nr.Socket, "message": nr.Error()}, nil)
				}
				return &exitError{code: ExitNotRunning, err: nr}
			}
			if err != nil {
				return err
			}
			return e.print(struct {
				Running bool `json:"running"`
				localapi.Status
			}{true, st}, func(w io.Writer) { printStatus(w, st) })
		},
	}
}

func printStatus(w io.Writer, st localapi.Status) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Airlock %s is running\t(pid %d, version %s, up %s)\n", st.Kind, st.PID, st.Version, st.Uptime)
	fmt.Fprintf(tw, "config\t%s\n", configLine(st.Config))
	fmt.Fprintf(tw, "database\t%s\n", st.Paths.Database)
	fmt.Fprintf(tw, "run logs\t%s\n", st.Paths.RunLogs)
	fmt.Fprintf(tw, "socket\t%s\n", st.Paths.Socket)
	if st.Sandbox != nil {
		line := st.Sandbox.Backend
		if st.Sandbox.Error != "" {
			line += " — " + st.Sandbox.Error
		} else if st.Sandbox.Warning != "" {
			line += " — " + st.Sandbox.Warning
		}
		fmt.Fprintf(tw, "sandbox\t%s\n", line)
	}
	if p := st.Approvals; p != nil {
		line := p.TerminalProof
		if p.TerminalProof == "os" && p.PAM {
			line += " (login password, PAM service " + p.PAMService + ", " + p.PAMSource + ")"
		}
		fmt.Fprintf(tw, "terminal proof\t%s — %s\n", line, p.Note)
	}
	if st.Keyring.OK {
		fmt.Fprintf(tw, "keyring\tok\n")
	} else {
		fmt.Fprintf(tw, "keyring\tUNAVAILABLE: %s\n", st.Keyring.Error)
	}
	tw.Flush()
	if st.Config.Error != nil {
		fmt.Fprintf(w, "\nconfig.toml is broken; the last good configuration stays in force until it is fixed:\n")
		for _, p := range st.Config.Error.Problems {
			fmt.Fprintf(w, "  %s: %s\n", st.Config.Error.Path, p.String())
		}
	}
}

func configLine(c localapi.ConfigView) string {
	switch {
	case c.Error != nil:
		return c.Path + " — BROKEN (see below)"
	case !c.Exists:
		return c.Path + " (absent: safe defaults)"
	default:
		return c.Path + " (ok)"
	}
}

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

func newConfigCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect the configuration"}
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Print every effective setting and which layer set it (flag > env > config.toml > default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			view, err := localConfigView(cmd.Context(), e)
			if err != nil {
				return err
			}
			return e.print(view, func(w io.Writer) {
				printTable(w, view.Settings, "", []string{"KEY", "VALUE", "SET BY"}, func(s config.Setting) []any {
					by := string(s.Layer)
					if s.Detail != "" {
						by += " (" + s.Detail + ")"
					}
					return []any{s.Key, formatValue(s.Value), by}
				})
				if view.Error != nil {
					fmt.Fprintf(w, "\nconfig.toml is broken:\n")
					for _, p := range view.Error.Problems {
						fmt.Fprintf(w, "  %s\n", p.String())
					}
				}
			})
		},
	})
	return cmd
}

// localConfigView reads the configuration as this process sees it: config.toml under
// this process's environment. The running core may see another environment; its view
// is in `airlock status`.
func localConfigView(_ context.Context, e *env) (localapi.ConfigView, error) {
	p, err := e.paths()
	if err != nil {
		return localapi.ConfigView{}, err
	}
	st := config.State{Path: p.ConfigFile}
	data, err := config.ReadFile(p.ConfigFile)
	var tooLarge *config.Error
	switch {
	case errors.As(err, &tooLarge):
		st.Exists, st.Error = true, tooLarge
	case err == nil:
		st.Exists = true
		f, perr := config.Parse(p.ConfigFile, data)
		var ce *config.Error
		if errors.As(perr, &ce) {
			st.Error = ce
		}
		st.File = f
	case !errors.Is(err, os.ErrNotExist):
		return localapi.ConfigView{}, fmt.Errorf("read %s: %w", p.ConfigFile, err)
	}
	settings, err := config.Effective(st.File, st.Path, e.getenv, nil)
	if err != nil {
		return localapi.ConfigView{}, err
	}
	return localapi.ConfigView{Path: st.Path, Exists: st.Exists, Error: st.Error, Settings: settings}, nil
}

func formatValue(v any) string {
	switch x := v.(type) {
	case []string:
		if len(x) == 0 {
			return "[]"
		}
		return "[" + strings.Join(x, ", ") + "]"
	case string:
		if x == "" {
			return `""`
		}
		return x
	default:
		return fmt.Sprint(x)
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
