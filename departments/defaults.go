package departments

import (
	"strings"

	"github.com/airlock-app/airlock/api"
)

// Defaults are the settings a department gives the tasks that run in it (the wire's
// type). An empty string (or a nil Network) means "not set here".
type Defaults = api.Defaults

// Allowed values for each default.
var (
	Postures        = []string{"standard", "cloudops"}
	SandboxModes    = []string{"read-only", "workspace-write", "full-access"}
	ApprovalPolicys = []string{"untrusted", "on-request", "on-failure", "never"}
	ExecutionModes  = []string{"local", "sandbox", "auto"}
)

// Normalize validates d and returns it with aliases replaced by their canonical names
// (danger-full-access → full-access, standard posture → ""). A refusal wraps ErrInvalid.
func Normalize(d Defaults) (Defaults, error) {
	d.Profile = strings.TrimSpace(d.Profile)
	d.Posture = strings.TrimSpace(strings.ToLower(d.Posture))
	if d.Posture == "standard" {
		d.Posture = ""
	}
	if d.Posture != "" && !oneOf(d.Posture, Postures) {
		return d, invalidf("unknown posture %q: use one of %s", d.Posture, strings.Join(Postures, ", "))
	}
	d.SandboxMode = strings.TrimSpace(strings.ToLower(d.SandboxMode))
	if d.SandboxMode == "danger-full-access" {
		d.SandboxMode = "full-access"
	}
	if d.SandboxMode != "" && !oneOf(d.SandboxMode, SandboxModes) {
		return d, invalidf("unknown sandbox mode %q: use one of %s (or danger-full-access)", d.SandboxMode, strings.Join(SandboxModes, ", "))
	}
	d.ApprovalPolicy = strings.TrimSpace(strings.ToLower(d.ApprovalPolicy))
	if d.ApprovalPolicy != "" && !oneOf(d.ApprovalPolicy, ApprovalPolicys) {
		return d, invalidf("unknown approval policy %q: use one of %s", d.ApprovalPolicy, strings.Join(ApprovalPolicys, ", "))
	}
	d.ExecutionMode = strings.TrimSpace(strings.ToLower(d.ExecutionMode))
	if d.ExecutionMode != "" && !oneOf(d.ExecutionMode, ExecutionModes) {
		return d, invalidf("unknown execution mode %q: use one of %s", d.ExecutionMode, strings.Join(ExecutionModes, ", "))
	}
	if d.Network != nil {
		n, err := api.ParseNetworkAccess(string(*d.Network))
		if err != nil {
			return d, invalidf("network: %v", err)
		}
		d.Network = &n
	}
	d.Limits.Memory, d.Limits.CPU = strings.TrimSpace(d.Limits.Memory), strings.TrimSpace(d.Limits.CPU)
	if err := d.Limits.Validate(); err != nil {
		return d, invalidf("limits: %v", err)
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
