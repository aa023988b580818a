package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// Layer names where an effective value came from, strongest first (the wire type).
type Layer = api.ConfigLayer

// The layers, in precedence order: flag > env > file > default.
const (
	LayerFlag Layer = "flag"
	LayerEnv  Layer = "env"
	LayerFile Layer = "file"
	// LayerProfile is a chosen profile's value, beneath the keys of the level that chose it.
	LayerProfile Layer = "profile"
	LayerDefault Layer = "default"
)

// Setting is one key's effective value and who set it (the wire type).
type Setting = api.ConfigSetting

// EnvVars maps the keys that an environment variable may set.
var EnvVars = map[string]string{
	"profile":                                EnvProfile,
	"sandbox_mode":                           "AIRLOCK_SANDBOX_MODE",
	"sandbox_workspace_write.network_access": "AIRLOCK_NETWORK",
	"isolation.backend":                      "AIRLOCK_SANDBOX_BACKEND",
	"approval_policy":                        "AIRLOCK_APPROVAL_POLICY",
	"execution_mode":                         "AIRLOCK_EXECUTION_MODE",
}

// Defaults are the safe defaults (README, Configuration).
var Defaults = map[string]any{
	"profile":                                "",
	"sandbox_mode":                           "workspace-write",
	"approval_policy":                        "on-request",
	"approvals_reviewer":                     "user",
	"execution_mode":                         "local",
	"sandbox_workspace_write.writable_roots": []string{},
	"sandbox_workspace_write.network_access": false,
	"network.allowed_domains":                []string{},
	"network.denied_domains":                 []string{},
	"network.ask_unknown":                    true,
	"network.allow_local":                    false,
	"isolation.backend":                      "auto",
	"isolation.protected":                    []string{},
	"workspace.roots":                        []string{"~/Airlock"},
	"ops.strict":                             false,
	"approvals.terminal_proof":               "os",
	"approvals.pam_service":                  "",
	"approvals.wait_unattended":              false,
	"hooks.claude_bash_sandbox":              true,
	"dispatch.concurrency":                   2,
	"dispatch.log_max_age":                   "720h",
	"dispatch.log_max_total":                 "1GiB",
	"dispatch.run_log_cap":                   "16MiB",
	"dispatch.run_max_age":                   "2160h",
	"dispatch.run_max_count":                 10000,
	"dispatch.max_backlog":                   10,
	"api.tcp_address":                        "",
	"secrets.store":                          "keyring",
	"limits.memory":                          sandbox.DefaultLimits.Memory,
	"limits.pids":                            sandbox.DefaultLimits.Pids,
	"limits.cpu":                             sandbox.DefaultLimits.CPU,
	"limits.required":                        false,
}

// fileValues flattens the scalar and list keys that were written in the file.
func fileValues(f File) map[string]any {
	out := map[string]any{}
	str := func(k string, v *string) {
		if v != nil {
			out[k] = *v
		}
	}
	str("profile", f.Profile)
	str("sandbox_mode", f.SandboxMode)
	str("approval_policy", f.ApprovalPolicy)
	str("approvals_reviewer", f.ApprovalsReviewer)
	str("execution_mode", f.ExecutionMode)
	str("isolation.backend", f.Isolation.Backend)
	str("dispatch.log_max_age", f.Dispatch.LogMaxAge)
	str("dispatch.log_max_total", f.Dispatch.LogMaxTotal)
	str("dispatch.run_log_cap", f.Dispatch.RunLogCap)
	str("dispatch.run_max_age", f.Dispatch.RunMaxAge)
	str("api.tcp_address", f.API.TCPAddress)
	str("secrets.store", f.Secrets.Store)
	str("approvals.terminal_proof", f.Approvals.TerminalProof)
	str("approvals.pam_service", f.Approvals.PAMService)
	if f.SandboxWorkspaceWrite.NetworkAccess != nil {
		out["sandbox_workspace_write.network_access"] = f.SandboxWorkspaceWrite.NetworkAccess
	}
	if f.Network.AllowedDomains != nil {
		out["network.allowed_domains"] = f.Network.AllowedDomains
	}
	if f.Network.DeniedDomains != nil {
		out["network.denied_domains"] = f.Network.DeniedDomains
	}
	if f.Network.AskUnknown != nil {
		out["network.ask_unknown"] = *f.Network.AskUnknown
	}
	if f.Network.AllowLocal != nil {
		out["network.allow_local"] = *f.Network.AllowLocal
	}
	if f.Approvals.WaitUnattended != nil {
		out["approvals.wait_unattended"] = *f.Approvals.WaitUnattended
	}
	if f.Hooks.ClaudeBashSandbox != nil {
		out["hooks.claude_bash_sandbox"] = *f.Hooks.ClaudeBashSandbox
	}
	if f.Ops.Strict != nil {
		out["ops.strict"] = *f.Ops.Strict
	}
	str("limits.memory", f.Limits.Memory)
	str("limits.cpu", f.Limits.CPU)
	if f.Limits.Pids != nil {
		out["limits.pids"] = *f.Limits.Pids
	}
	if f.Limits.Required != nil {
		out["limits.required"] = *f.Limits.Required
	}
	if f.Dispatch.Concurrency != nil {
		out["dispatch.concurrency"] = *f.Dispatch.Concurrency
	}
	if f.Dispatch.RunMaxCount != nil {
		out["dispatch.run_max_count"] = *f.Dispatch.RunMaxCount
	}
	if f.Dispatch.MaxBacklog != nil {
		out["dispatch.max_backlog"] = *f.Dispatch.MaxBacklog
	}
	if f.SandboxWorkspaceWrite.WritableRoots != nil {
		out["sandbox_workspace_write.writable_roots"] = f.SandboxWorkspaceWrite.WritableRoots
	}
	if f.Isolation.Protected != nil {
		out["isolation.protected"] = f.Isolation.Protected
	}
	if f.Workspace.Roots != nil {
		out["workspace.roots"] = f.Workspace.Roots
	}
	return out
}

// Effective layers flags over the environment over the file over the defaults, for
// every key of Defaults. flags maps a key to the value a command-line flag gave it.
func Effective(f File, path string, getenv func(string) string, flags map[string]any) ([]Setting, error) {
	file := fileValues(f)
	keys := make([]string, 0, len(Defaults))
	for k := range Defaults {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Setting, 0, len(keys))
	// The profiles chosen by the file and by AIRLOCK_PROFILE, each beneath its level's keys.
	var fileProf, envProf map[string]any
	var fileProfName, envProfName string
	if p, ok, err := ChosenProfile(f, path); err != nil {
		return nil, err
	} else if ok {
		fileProf, fileProfName = profileValues(p), p.Name
	}
	if name := getenv(EnvProfile); name != "" {
		p, err := LookupProfile(f, path, name)
		if err != nil {
			return nil, fmt.Errorf("environment variable %s: %w", EnvProfile, err)
		}
		envProf, envProfName = profileValues(p), p.Name
	}
	for _, k := range keys {
		s := Setting{Key: k, Value: Defaults[k], Layer: LayerDefault}
		if v, ok := fileProf[k]; ok {
			s = Setting{Key: k, Value: v, Layer: LayerProfile, Detail: "profile " + fileProfName + " chosen in " + path}
		}
		if v, ok := file[k]; ok {
			s = Setting{Key: k, Value: v, Layer: LayerFile, Detail: path}
		}
		if v, ok := envProf[k]; ok {
			s = Setting{Key: k, Value: v, Layer: LayerProfile, Detail: "profile " + envProfName + " chosen by " + EnvProfile}
		}
		if name, ok := EnvVars[k]; ok {
			if raw := getenv(name); raw != "" {
				v, err := envValue(k, raw)
				if err != nil {
					return nil, fmt.Errorf("environment variable %s: %w", name, err)
				}
				s = Setting{Key: k, Value: v, Layer: LayerEnv, Detail: name}
			}
		}
		if v, ok := flags[k]; ok {
			s = Setting{Key: k, Value: v, Layer: LayerFlag}
		}
		out = append(out, s)
	}
	out = append(out, Setting{Key: "permission.rules", Value: len(f.Permission.Rules), Layer: layerOf(len(f.Permission.Rules) > 0), Detail: detailOf(len(f.Permission.Rules) > 0, path)})
	out = append(out, Setting{Key: "hooks", Value: len(f.Hooks.BeforeToolUse) + len(f.Hooks.AfterToolUse), Layer: layerOf(len(f.Hooks.BeforeToolUse)+len(f.Hooks.AfterToolUse) > 0), Detail: detailOf(len(f.Hooks.BeforeToolUse)+len(f.Hooks.AfterToolUse) > 0, path)})
	return out, nil
}

// profileValues are the keys profile p sets, as Effective names them.
func profileValues(p api.Profile) map[string]any {
	out := map[string]any{}
	if p.SandboxMode != "" {
		out["sandbox_mode"] = p.SandboxMode
	}
	if p.Network != nil {
		out["sandbox_workspace_write.network_access"] = NetworkSetting(*p.Network)
	}
	if p.ApprovalPolicy != "" {
		out["approval_policy"] = p.ApprovalPolicy
	}
	if p.Reviewer != "" {
		out["approvals_reviewer"] = p.Reviewer
	}
	return out
}

// NetworkSetting is network_access as config.toml writes it: false, "allowlist" or true.
func NetworkSetting(n api.NetworkAccess) any {
	switch n.Norm() {
	case api.NetworkOn:
		return true
	case api.NetworkAllowlist:
		return string(api.NetworkAllowlist)
	}
	return false
}

func layerOf(inFile bool) Layer {
	if inFile {
		return LayerFile
	}
	return LayerDefault
}

func detailOf(inFile bool, path string) string {
	if inFile {
		return path
	}
	return ""
}

func envValue(key, raw string) (any, error) {
	if key == "profile" {
		// Any name: the resolution that uses it refuses an unknown one, naming the known.
		return raw, nil
	}
	if key == "sandbox_workspace_write.network_access" {
		n, err := sandbox.ParseNetwork(raw)
		if err != nil {
			return nil, err
		}
		return NetworkSetting(n), nil
	}
	if parse, ok := owned[key]; ok {
		return parse(raw)
	}
	for _, c := range choices[key] {
		if raw == c {
			return raw, nil
		}
	}
	return nil, fmt.Errorf("%q is not one of %s", raw, strings.Join(choices[key], ", "))
}
