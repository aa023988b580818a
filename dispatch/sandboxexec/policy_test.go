package sandboxexec

import (
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/sandbox"
)

// recordedPolicy is the app's resolution of a run's recorded policy with no config.toml
// (home is HOME; "" keeps the process's).
func recordedPolicy(home string) func(dispatch.ExecSpec) (sandbox.Policy, error) {
	return func(spec dispatch.ExecSpec) (sandbox.Policy, error) {
		r, err := policy.Resolve(policy.Inputs{Getenv: homeOnly(home), Flags: policy.Flags{Sandbox: dispatch.SandboxLayer(spec.Policy)}, Recorded: true, Cwd: spec.Dir})
		return r.Sandbox, err
	}
}

func homeOnly(home string) func(string) string {
	return func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
}
