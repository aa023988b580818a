package dispatch

import (
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
)

// Policy is a run's effective policy, recorded when it starts and fixed for the run.
type Policy struct {
	Posture        string `json:"posture,omitempty"`
	SandboxMode    string `json:"sandbox_mode"`
	Network        bool   `json:"network"`
	ApprovalPolicy string `json:"approval_policy"`
	Backend        string `json:"backend"`
	ExecutionMode  string `json:"execution_mode"`
}

// DefaultPolicy is the safe default (README, Configuration).
func DefaultPolicy() Policy {
	return Policy{SandboxMode: string(sandbox.ModeWorkspaceWrite), ApprovalPolicy: string(permission.PolicyOnRequest),
		Backend: string(sandbox.BackendAuto), ExecutionMode: string(sandbox.ExecLocal)}
}

// Apply returns p with the fields that d sets replaced.
func (p Policy) Apply(d departments.Defaults) Policy {
	if d.Posture != "" {
		p.Posture = d.Posture
		if d.Posture == "cloudops" && d.Network == nil {
			p.Network = true
		}
	}
	if d.SandboxMode != "" {
		p.SandboxMode = d.SandboxMode
	}
	if d.Network != nil {
		p.Network = *d.Network
	}
	if d.ApprovalPolicy != "" {
		p.ApprovalPolicy = d.ApprovalPolicy
	}
	if d.ExecutionMode != "" {
		p.ExecutionMode = d.ExecutionMode
	}
	return p
}

// SandboxLayer is the run's recorded policy as the strongest layer of the sandbox's
// resolution (the app resolves it with the configured roots and the project files).
func (p Policy) SandboxLayer() sandbox.Layer {
	mode, network := p.SandboxMode, p.Network
	l := sandbox.Layer{Mode: &mode, Network: &network}
	if b := p.Backend; b != "" {
		l.Backend = &b
	}
	if e := p.ExecutionMode; e != "" {
		l.ExecutionMode = &e
	}
	return l
}
