package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/policy"
)

// statusReport is what `airlock status --json` prints when a core answers.
type statusReport struct {
	Running bool `json:"running"`
	api.Status
	// ClaudeBash is where `airlock hook claude` runs Claude Code's own Bash, as this
	// config.toml says: "sandbox" (through airlock exec) or "unconfined".
	ClaudeBash string `json:"claude_bash"`
}

// notRunningReport is what `airlock status --json` prints when no core answers.
type notRunningReport struct {
	Message string `json:"message"`
	Running bool   `json:"running"`
	Socket  string `json:"socket"`
	// PID is the core that holds the instance lock but does not answer (starting, or its
	// socket replaced).
	PID int `json:"pid,omitempty"`
}

func newStatusCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the running app or daemon: what it is, its pid, data paths, uptime, configuration health",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := call(cmd.Context(), e, api.GetStatus, api.None{})
			var nr *localapi.NotRunningError
			if errors.As(err, &nr) {
				if e.json {
					_ = e.print(notRunningReport{Running: false, Socket: nr.Socket, Message: nr.Error()}, nil)
				}
				return &exitError{code: ExitNotRunning, err: nr}
			}
			var ur *localapi.UnreachableError
			if errors.As(err, &ur) {
				if e.json {
					_ = e.print(notRunningReport{Running: false, Socket: ur.Socket, PID: ur.PID, Message: ur.Error()}, nil)
				}
				return &exitError{code: ExitError, err: ur}
			}
			if err != nil {
				return err
			}
			bash, warning := e.claudeBash()
			return e.print(statusReport{true, st, bash}, func(w io.Writer) { printStatus(w, st, warning) })
		},
	}
}

// claudeBash is where the hook runs Claude Code's Bash by this command's config.toml,
// and the red line when it is unconfined (a file that does not read keeps the sandbox on,
// as the hook does).
func (e *env) claudeBash() (where, warning string) {
	in, err := e.policyInputs(policy.Flags{}, "")
	if err != nil {
		return "sandbox", ""
	}
	if w := policy.ClaudeBashWarning(in.File.Hooks); w != "" {
		return "unconfined", w
	}
	return "sandbox", ""
}

// printStatus prints st; bashWarning is the red line of an unconfined Claude Code Bash.
func printStatus(w io.Writer, st api.Status, bashWarning string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Airlock %s is running\t(pid %d, version %s, up %s)\n", st.Kind, st.PID, st.Version, st.Uptime)
	fmt.Fprintf(tw, "config\t%s\n", configLine(st.Config))
	fmt.Fprintf(tw, "database\t%s\n", st.Paths.Database)
	fmt.Fprintf(tw, "run logs\t%s\n", st.Paths.RunLogs)
	fmt.Fprintf(tw, "socket\t%s\n", st.Paths.Socket)
	if st.TCPAddress != "" {
		fmt.Fprintf(tw, "tcp\t%s (loopback, bearer token required; chosen by %s)\n", st.TCPAddress, st.TCPFrom)
	} else {
		fmt.Fprintf(tw, "tcp\toff (the unix socket only; --tcp or [api] tcp_address opens a loopback port)\n")
	}
	if st.Sandbox != nil {
		fmt.Fprintf(tw, "sandbox\t%s\n", indicatorLine(st.Sandbox.Indicator))
		if fix := st.Sandbox.Indicator.Fix; fix != "" {
			fmt.Fprintf(tw, "\tway out: %s\n", fix)
		}
	}
	if p := st.Approvals; p != nil {
		line := p.TerminalProof
		if p.TerminalProof == "os" && p.PAM {
			line += " (login password, PAM service " + p.PAMService + ", " + p.PAMSource + ")"
		}
		fmt.Fprintf(tw, "terminal proof\t%s — %s\n", line, p.Note)
		if st.Attended {
			fmt.Fprintf(tw, "answering\tsomething follows the approvals (the window, the tray, notifications or `airlock approvals watch`)\n")
		} else {
			fmt.Fprintf(tw, "answering\tnothing follows the approvals now: a hook's question is handed over at once (open the window, or run `airlock approvals watch`)\n")
		}
	}
	if bashWarning != "" {
		fmt.Fprintf(tw, "claude bash\tUNCONFINED — %s\n", bashWarning)
	} else {
		fmt.Fprintf(tw, "claude bash\tin Airlock's sandbox (`airlock hook claude` runs each command through airlock exec)\n")
	}
	if st.Keyring.OK {
		fmt.Fprintf(tw, "secrets\t%s store, ok (%s)\n", st.Keyring.Store, st.Keyring.Where)
	} else {
		fmt.Fprintf(tw, "secrets\t%s store UNAVAILABLE: %s\n", st.Keyring.Store, st.Keyring.Error)
	}
	tw.Flush()
	if p := st.Config.Pending; p != nil {
		fmt.Fprintf(w, "\nWAITING FOR YOU: %s\n", p.Message)
	}
	if st.Config.Error != nil {
		fmt.Fprintf(w, "\nconfig.toml is broken; the last good configuration stays in force until it is fixed:\n")
		for _, p := range st.Config.Error.Problems {
			fmt.Fprintf(w, "  %s: %s\n", st.Config.Error.Path, p.String())
		}
	}
}

func configLine(c api.ConfigView) string {
	switch {
	case c.Error != nil:
		return c.Path + " — BROKEN (see below)"
	case c.Pending != nil:
		return c.Path + " (ok; a looser change WAITS for you, see below)"
	case !c.Exists:
		return c.Path + " (absent: safe defaults)"
	default:
		return c.Path + " (ok)"
	}
}

// indicatorLine is the sandbox indicator as the status line prints it: the level in
// capitals (the footer's and the tray's colour), the words, then every missing guarantee.
func indicatorLine(ind api.SandboxIndicator) string {
	line := strings.ToUpper(ind.Level) + " " + ind.Words
	if len(ind.Reasons) > 0 {
		line += " — " + strings.Join(ind.Reasons, "; ")
	}
	return line
}
