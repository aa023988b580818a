package cli

import (
	"fmt"

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/sandbox"
)

// policyWarnings are the red lines the window draws, for a command about to run under
// pol (what names it: "this command"): full access with approval never, a working
// directory that is the home directory or /, and config.toml setting a shell tool to P0.
// A config.toml that does not read gives none: the command's own resolution says why.
func (e *env) policyWarnings(pol sandbox.Policy, what string) []string {
	in, err := e.policyInputs(policy.Flags{}, pol.Cwd)
	if err != nil {
		return nil
	}
	approval := ""
	if settings, err := config.Effective(in.File, in.FilePath, e.getenv, nil); err == nil {
		for _, s := range settings {
			if s.Key == "approval_policy" {
				approval = fmt.Sprint(s.Value)
			}
		}
	}
	out := policy.Warnings(what, pol.Mode, approval, pol.Cwd, e.getenv("HOME"))
	return append(out, policy.ShellTierWarnings(in.File.Permission.Tiers)...)
}

// warn prints each warning on stderr.
func (e *env) warn(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "airlock: warning: %s\n", w)
	}
}
