package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/policy"
)

// profileView is what `airlock profile show` prints: a profile and, for the one in
// force, where it was chosen.
type profileView struct {
	api.Profile
	// ChosenBy is where the profile in force was chosen (--profile, AIRLOCK_PROFILE,
	// config.toml); "" when the profile was named on the command line to look at.
	ChosenBy string `json:"chosen_by,omitempty"`
}

func newProfileCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "profile", Short: "Permission profiles: named sets of sandbox mode, approval policy, reviewer and tool tiers"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the built-in profiles and config.toml's [profiles.NAME] (* marks config.toml's choice)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := e.policyInputs(policy.Flags{}, "")
			if err != nil {
				return err
			}
			list := api.ProfileList{Profiles: config.Profiles(in.File, in.FilePath)}
			if in.File.Profile != nil {
				list.Current = *in.File.Profile
			}
			return e.print(list, func(w io.Writer) {
				printTable(w, list.Profiles, "", []string{"", "NAME", "TITLE", "SANDBOX", "APPROVAL", "REVIEWER", "TIERS", "SOURCE"}, func(p api.Profile) []any {
					mark := ""
					if p.Name == list.Current {
						mark = "*"
					}
					return []any{mark, p.Name, p.Title, orDash(p.SandboxMode), orDash(p.ApprovalPolicy), orDash(p.Reviewer), tiersSummary(p.Tiers), p.Source}
				})
			})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "show [NAME]",
		Short: "Show a profile; without NAME, the one in force and where it was chosen (--profile > AIRLOCK_PROFILE > config.toml)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := e.policyInputs(policy.Flags{}, "")
			if err != nil {
				return err
			}
			var v profileView
			if len(args) == 1 {
				if v.Profile, err = config.LookupProfile(in.File, in.FilePath, args[0]); err != nil {
					return err
				}
			} else {
				chosen, err := in.Profiles()
				if err != nil {
					return err
				}
				switch {
				case chosen.Env != nil:
					v.Profile, v.ChosenBy = *chosen.Env, "env "+config.EnvProfile
				case chosen.File != nil:
					v.Profile, v.ChosenBy = *chosen.File, "config "+in.FilePath
				default:
					return fmt.Errorf("no profile is chosen: the keys of %s and the defaults apply; choose one with `airlock profile use NAME` (`airlock profile list` shows them)", in.FilePath)
				}
			}
			return e.print(v, func(w io.Writer) { printProfile(w, v) })
		},
	})
	var none bool
	use := &cobra.Command{
		Use:   "use NAME",
		Short: "Choose the profile of config.toml (profile = \"NAME\"), keeping the file's comments; --none removes the choice",
		Args: func(cmd *cobra.Command, args []string) error {
			if none {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := e.policyInputs(policy.Flags{}, "")
			if err != nil {
				return err
			}
			if none {
				if _, err := config.EditFile(in.FilePath, config.Unset("profile")); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "profile: none (the keys of %s and the defaults apply)\n", in.FilePath)
				e.sayWhatWaits()
				return nil
			}
			p, err := config.LookupProfile(in.File, in.FilePath, args[0])
			if err != nil {
				return err
			}
			if _, err := config.EditFile(in.FilePath, config.Set(p.Name, "profile")); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "profile: %s (%s) in %s; keys written there still override it\n", p.Name, p.Title, in.FilePath)
			if p.Warning != "" {
				fmt.Fprintf(e.stderr, "airlock: warning: %s\n", p.Warning)
			}
			e.sayWhatWaits()
			return nil
		},
	}
	use.Flags().BoolVar(&none, "none", false, "remove config.toml's profile choice")
	cmd.AddCommand(use)
	return cmd
}

func printProfile(w io.Writer, v profileView) {
	fmt.Fprintf(w, "profile      %s (%s)\n", v.Name, v.Title)
	fmt.Fprintf(w, "             %s\n", v.Description)
	if v.ChosenBy != "" {
		fmt.Fprintf(w, "chosen by    %s\n", v.ChosenBy)
	}
	fmt.Fprintf(w, "source       %s\n", v.Source)
	fmt.Fprintf(w, "sandbox      %s\n", orDash(v.SandboxMode))
	network := "-"
	if v.Network != nil {
		network = string(*v.Network)
	}
	fmt.Fprintf(w, "network      %s\n", network)
	fmt.Fprintf(w, "approval     %s\n", orDash(v.ApprovalPolicy))
	fmt.Fprintf(w, "reviewer     %s\n", orDash(v.Reviewer))
	fmt.Fprintf(w, "tiers        %s\n", tiersText(v.Tiers))
	if v.Warning != "" {
		fmt.Fprintf(w, "WARNING      %s\n", v.Warning)
	}
}

// orDash is s, or "-" for a field the profile leaves to the layers beneath.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// tiersSummary is the tiers in a column: Bash's, and how many tools each tier has.
func tiersSummary(t map[string]string) string {
	if len(t) == 0 {
		return "-"
	}
	count := map[string]int{}
	for _, tier := range t {
		count[tier]++
	}
	parts := []string{}
	if b, ok := t[api.ToolBash]; ok {
		parts = append(parts, "bash "+b+";")
	}
	for _, tier := range []string{"P0", "P1", "P2"} {
		if count[tier] > 0 {
			parts = append(parts, fmt.Sprintf("%d at %s", count[tier], tier))
		}
	}
	return strings.Join(parts, " ")
}

func tiersText(t map[string]string) string {
	if len(t) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(t))
	for _, tool := range slices.Sorted(maps.Keys(t)) {
		parts = append(parts, tool+"="+t[tool])
	}
	return strings.Join(parts, " ")
}
