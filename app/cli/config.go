package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/policy"
)

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
				printTable(w, view.Settings, "", []string{"KEY", "VALUE", "SET BY"}, func(s api.ConfigSetting) []any {
					by := string(s.Layer)
					if s.Detail != "" {
						by += " (" + s.Detail + ")"
					}
					return []any{s.Key, formatValue(s.Value), by}
				})
				for _, wn := range view.Warnings {
					fmt.Fprintf(w, "\nWARNING: %s\n", wn)
				}
				if p := view.Pending; p != nil {
					fmt.Fprintf(w, "\nWAITING FOR YOU: %s\n", p.Message)
				}
				if view.Error != nil {
					fmt.Fprintf(w, "\nconfig.toml is broken:\n")
					for _, p := range view.Error.Problems {
						fmt.Fprintf(w, "  %s\n", p.String())
					}
				}
			})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "confirm",
		Short: "Take into force a config.toml change that loosens the answer path (asks your login password)",
		Long: "A change of config.toml that loosens who may answer, what asks or how far a run reaches\n" +
			"(terminal_proof, pam_service, approval policies, tiers, the reviewer, network or sandbox defaults)\n" +
			"waits for you: the values in force stay until you confirm it here or in the Airlock window.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			view, err := call(cmd.Context(), e, api.GetConfig, api.None{})
			if err != nil {
				return err
			}
			p := view.Pending
			if p == nil {
				fmt.Fprintln(e.stdout, "Nothing waits: config.toml is in force as written.")
				return nil
			}
			fmt.Fprintf(e.stderr, "config.toml (%s) loosens: %s\n", view.Path, strings.Join(p.Keys, ", "))
			in := api.ConfigConfirmIn{Digest: p.Digest}
			if err := addProof(cmd.Context(), e, &in.Proof, "confirming a looser config.toml", p.Digest); err != nil {
				return err
			}
			return printRoute(cmd.Context(), e, api.ConfirmConfig, in, func(w io.Writer, v api.ConfigView) {
				fmt.Fprintf(w, "Confirmed: config.toml is in force as written (%s).\n", strings.Join(p.Keys, ", "))
			})
		},
	})
	return cmd
}

// sayWhatWaits tells, after this command wrote config.toml, what of it waits for the
// person (config.Guard): a file written by a command is not yet the person's word.
func (e *env) sayWhatWaits() {
	p, err := e.paths()
	if err != nil {
		return
	}
	st, err := config.ReadInForce(p.ConfigFile, config.GuardAt(p.DataDir, p.Database))
	if err == nil && st.Pending != nil {
		fmt.Fprintf(e.stderr, "airlock: %s\n", st.Pending.Message)
	}
}

// localConfigView reads the configuration as this process sees it: config.toml under
// this process's environment. The running core may see another environment; its view
// is in `airlock status`.
func localConfigView(_ context.Context, e *env) (api.ConfigView, error) {
	p, err := e.paths()
	if err != nil {
		return api.ConfigView{}, err
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
		return api.ConfigView{}, fmt.Errorf("read %s: %w", p.ConfigFile, err)
	}
	if st.Error == nil {
		// As the core holds it: what loosens the answer path waits for the person.
		if held, herr := config.ReadInForce(p.ConfigFile, config.GuardAt(p.DataDir, p.Database)); herr == nil {
			st.File, st.Pending = held.File, held.Pending
		}
	}
	settings, err := config.Effective(st.File, st.Path, e.getenv, nil)
	if err != nil {
		return api.ConfigView{}, err
	}
	warnings := policy.ShellTierWarnings(st.File.Permission.Tiers)
	if w := policy.ClaudeBashWarning(st.File.Hooks); w != "" {
		warnings = append(warnings, w)
	}
	return api.ConfigView{Path: st.Path, Exists: st.Exists, Error: st.Error, Settings: settings, Warnings: warnings, Pending: st.Pending}, nil
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
