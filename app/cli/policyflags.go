package cli

import (
	"github.com/spf13/pflag"

	"github.com/airlock-app/airlock/app/config"

	"github.com/airlock-app/airlock/sandbox"
)

// PolicyFlags are the sandbox flags of `exec` and `check` (--sandbox, --network, --cwd,
// --writable-root, --protect, --backend, --execution-mode), for airlock-agent's `airlock
// mcp` (package agentcmd), which takes the same ones.
type PolicyFlags struct{ f policyFlags }

// Register adds the flags to fs.
func (p *PolicyFlags) Register(fs *pflag.FlagSet) { p.f.register(fs) }

// Resolve resolves the policy for the flags given in fs through the one resolution, as
// `airlock exec` does; getenv is the environment it reads (config.toml's place, the
// AIRLOCK_* variables).
func (p *PolicyFlags) Resolve(getenv func(string) string, fs *pflag.FlagSet) (sandbox.Policy, error) {
	return p.f.resolve(&env{getenv: getenv}, fs)
}

// Profile is the permission profile the command chooses for itself: --profile, else
// AIRLOCK_PROFILE ("" for neither; config.toml's is the core's own).
func (p *PolicyFlags) Profile(getenv func(string) string) string {
	if p.f.profile != "" {
		return p.f.profile
	}
	return getenv(config.EnvProfile)
}
