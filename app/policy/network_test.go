package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/sandbox"
)

// TestNetworkAccessThroughEveryLayer: network_access's three values through config.toml,
// the environment, a flag, a department's defaults and a task's overrides (a run's
// recorded policy, as dispatch layers them) and a project file, in the one resolution.
func TestNetworkAccessThroughEveryLayer(t *testing.T) {
	n := func(v api.NetworkAccess) *api.NetworkAccess { return &v }
	tests := []struct {
		name, config, project string
		env                   map[string]string
		flag                  *api.NetworkAccess
		dept, task            *api.Defaults // a scheduled run: recorded from these
		want                  api.NetworkAccess
		layer                 string
	}{
		{name: "config allowlist", config: "[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n", want: api.NetworkAllowlist, layer: sandbox.LayerFile},
		{name: "config true", config: "[sandbox_workspace_write]\nnetwork_access = true\n", want: api.NetworkOn, layer: sandbox.LayerFile},
		{name: "env allowlist over config on", config: "[sandbox_workspace_write]\nnetwork_access = true\n", env: map[string]string{"AIRLOCK_NETWORK": "allowlist"}, want: api.NetworkAllowlist, layer: sandbox.LayerEnv},
		{name: "flag on over env allowlist", env: map[string]string{"AIRLOCK_NETWORK": "allowlist"}, flag: n(api.NetworkOn), want: api.NetworkOn, layer: sandbox.LayerFlag},
		{name: "flag allowlist over config on", config: "[sandbox_workspace_write]\nnetwork_access = true\n", flag: n(api.NetworkAllowlist), want: api.NetworkAllowlist, layer: sandbox.LayerFlag},
		{name: "department allowlist over config on", config: "[sandbox_workspace_write]\nnetwork_access = true\n", dept: &api.Defaults{Network: n(api.NetworkAllowlist)}, want: api.NetworkAllowlist, layer: sandbox.LayerFlag},
		{name: "task on over department allowlist", dept: &api.Defaults{Network: n(api.NetworkAllowlist)}, task: &api.Defaults{Network: n(api.NetworkOn)}, want: api.NetworkOn, layer: sandbox.LayerFlag},
		{name: "task allowlist over a cloudops department", dept: &api.Defaults{Posture: "cloudops"}, task: &api.Defaults{Network: n(api.NetworkAllowlist)}, want: api.NetworkAllowlist, layer: sandbox.LayerFlag},
		{name: "a recorded run ignores the environment", env: map[string]string{"AIRLOCK_NETWORK": "on"}, dept: &api.Defaults{Network: n(api.NetworkAllowlist)}, want: api.NetworkAllowlist, layer: sandbox.LayerFlag},
		{name: "a project cannot turn an allowlist on", config: "[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n", project: "[sandbox_workspace_write]\nnetwork_access = true\n", want: api.NetworkAllowlist, layer: sandbox.LayerFile},
		{name: "a project turns a department's on into an allowlist", project: "[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n", dept: &api.Defaults{Network: n(api.NetworkOn)}, want: api.NetworkAllowlist, layer: sandbox.LayerProject},
		{name: "a project turns the flag's allowlist off", project: "[sandbox_workspace_write]\nnetwork_access = false\n", flag: n(api.NetworkAllowlist), want: api.NetworkOff, layer: sandbox.LayerProject},
		{name: "a trusted project applies", project: "[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n", env: map[string]string{EnvTrustProject: "1"}, want: api.NetworkAllowlist, layer: sandbox.LayerProject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			if tt.project != "" {
				os.MkdirAll(filepath.Join(repo, ".airlock"), 0o755)
				os.WriteFile(filepath.Join(repo, ".airlock", "policy.toml"), []byte(tt.project), 0o644)
			}
			f, err := config.Parse("config.toml", []byte(tt.config))
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HOME": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			in := Inputs{File: f, FilePath: "config.toml", Getenv: func(k string) string { return env[k] }, Cwd: repo}
			if tt.flag != nil {
				in.Flags.Sandbox.Network = tt.flag
			}
			if tt.dept != nil || tt.task != nil {
				// dispatch records the run's policy from the global one, its department's
				// defaults and its task's overrides, and resolves it as the flag layer.
				g, err := Global(Inputs{File: f, Getenv: func(string) string { return "" }})
				if err != nil {
					t.Fatal(err)
				}
				rp := api.RunPolicy{SandboxMode: string(g.Mode), Network: g.Network}
				for _, d := range []*api.Defaults{tt.dept, tt.task} {
					if d != nil {
						rp = rp.Apply(*d)
					}
				}
				mode, net := rp.SandboxMode, rp.Network
				in.Flags.Sandbox = sandbox.Layer{Mode: &mode, Network: &net}
				in.Recorded = true
			}
			r, err := Resolve(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Sandbox; got.Network != tt.want || got.Sources[sandbox.KeyNetwork].Layer != tt.layer {
				t.Errorf("network %q from %+v, want %q from %s", got.Network, got.Sources[sandbox.KeyNetwork], tt.want, tt.layer)
			}
		})
	}
}
