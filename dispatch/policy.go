package dispatch

import (
	"fmt"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
)

// Policy is a run's effective policy, recorded when it starts and fixed for the run (the
// wire's type; Apply layers a department's defaults or a task's overrides over it).
type Policy = api.RunPolicy

// DefaultPolicy is the safe default (README, Configuration).
func DefaultPolicy() Policy {
	return Policy{SandboxMode: string(sandbox.ModeWorkspaceWrite), ApprovalPolicy: string(permission.PolicyOnRequest),
		Backend: string(sandbox.BackendAuto), ExecutionMode: string(sandbox.ExecLocal)}
}

// SandboxLayer is a run's recorded policy as the strongest layer of the sandbox's
// resolution (the app resolves it with the configured roots and the project files).
func SandboxLayer(p Policy) sandbox.Layer {
	mode, network := p.SandboxMode, p.Network
	l := sandbox.Layer{Mode: &mode, Network: &network}
	if b := p.Backend; b != "" {
		l.Backend = &b
	}
	if e := p.ExecutionMode; e != "" {
		l.ExecutionMode = &e
	}
	l.Limits = p.Limits
	return l
}

// ApplyDefaults returns p with a department's defaults or a task's overrides d over it,
// d's own keys over the profile d names (lookup finds it: config.toml's profiles and the
// built-in ones). A profile that cannot be found is an error naming it: a run never
// starts under settings other than the ones chosen.
func ApplyDefaults(p Policy, d api.Defaults, lookup func(string) (api.Profile, error)) (Policy, error) {
	if d.Profile == "" {
		return p.Apply(d), nil
	}
	if lookup == nil {
		return p, fmt.Errorf("profile %q: no profiles are known here", d.Profile)
	}
	prof, err := lookup(d.Profile)
	if err != nil {
		return p, err
	}
	return p.ApplyProfile(prof, d), nil
}
