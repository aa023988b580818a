package departments

import (
	"fmt"
	"strings"
)

// Defaults are the settings a department gives the tasks that run in it. An empty string
// (or a nil Network) means "not set here": the next layer down decides.
type Defaults struct {
	// Posture is "" (standard) or "cloudops" (bash becomes P2, network on).
	Posture string `json:"posture,omitempty"`
	// SandboxMode is read-only | workspace-write | full-access.
	SandboxMode string `json:"sandbox_mode,omitempty"`
	// Network is whether runs may use the network.
	Network *bool `json:"network,omitempty"`
	// ApprovalPolicy is untrusted | on-request | on-failure | never.
	ApprovalPolicy string `json:"approval_policy,omitempty"`
	// ExecutionMode is local | sandbox | auto.
	ExecutionMode string `json:"execution_mode,omitempty"`
}

// Allowed values for each default.
var (
	Postures        = []string{"standard", "cloudops"}
	SandboxModes    = []string{"read-only", "workspace-write", "full-access"}
	ApprovalPolicys = []string{"untrusted", "on-request", "on-failure", "never"}
	ExecutionModes  = []string{"local", "sandbox", "auto"}
)

// Normalize validates d and returns it with aliases replaced by their canonical names
// (danger-full-access → full-access, standard posture → "").
func (d Defaults) Normalize() (Defaults, error) {
	d.Posture = strings.TrimSpace(strings.ToLower(d.Posture))
	if d.Posture == "standard" {
		d.Posture = ""
	}
	if d.Posture != "" && !oneOf(d.Posture, Postures) {
		return d, fmt.Errorf("unknown posture %q: use one of %s", d.Posture, strings.Join(Postures, ", "))
	}
	d.SandboxMode = strings.TrimSpace(strings.ToLower(d.SandboxMode))
	if d.SandboxMode == "danger-full-access" {
		d.SandboxMode = "full-access"
	}
	if d.SandboxMode != "" && !oneOf(d.SandboxMode, SandboxModes) {
		return d, fmt.Errorf("unknown sandbox mode %q: use one of %s (or danger-full-access)", d.SandboxMode, strings.Join(SandboxModes, ", "))
	}
	d.ApprovalPolicy = strings.TrimSpace(strings.ToLower(d.ApprovalPolicy))
	if d.ApprovalPolicy != "" && !oneOf(d.ApprovalPolicy, ApprovalPolicys) {
		return d, fmt.Errorf("unknown approval policy %q: use one of %s", d.ApprovalPolicy, strings.Join(ApprovalPolicys, ", "))
	}
	d.ExecutionMode = strings.TrimSpace(strings.ToLower(d.ExecutionMode))
	if d.ExecutionMode != "" && !oneOf(d.ExecutionMode, ExecutionModes) {
		return d, fmt.Errorf("unknown execution mode %q: use one of %s", d.ExecutionMode, strings.Join(ExecutionModes, ", "))
	}
	return d, nil
}

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}
