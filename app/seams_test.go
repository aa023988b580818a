package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/cli"
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
)

// seamCore opens a core whose config.toml is config, with a project directory (the
// workspace root's "repo") holding project as its .airlock/policy.toml.
func seamCore(t *testing.T, config, project string, extraEnv map[string]string) (*Core, string, func(string) string) {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, "Airlock")
	repo := filepath.Join(ws, "repo")
	for _, d := range []string{filepath.Join(repo, ".airlock"), filepath.Join(root, "airlock", "config")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if project != "" {
		if err := os.WriteFile(filepath.Join(repo, ".airlock", "policy.toml"), []byte(project), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "airlock", "config", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "AIRLOCK_HOME": filepath.Join(root, "airlock"), "PATH": os.Getenv("PATH")}
	for k, v := range extraEnv {
		env[k] = v
	}
	getenv := func(k string) string { return env[k] }
	c, err := Open(context.Background(), Options{Kind: KindDaemon, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	real, _ := filepath.EvalSymlinks(repo)
	return c, real, getenv
}

// cliPolicy is the policy `airlock check --json` resolves (the CLI's path, which `airlock
// exec` and `airlock mcp` share).
func cliPolicy(t *testing.T, getenv func(string) string, cwd string) sandbox.Policy {
	t.Helper()
	var out, errb bytes.Buffer
	root := cli.NewRoot(&out, &errb, getenv)
	root.SetArgs([]string{"check", "--json", "--cwd", cwd, "--", "true"})
	_ = root.ExecuteContext(context.Background())
	var rep struct {
		Policy sandbox.Policy `json:"policy"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("airlock check printed %q (stderr %q): %v", out.String(), errb.String(), err)
	}
	return rep.Policy
}

// essence is what every surface must agree on.
type essence struct {
	Mode           sandbox.Mode
	Network        sandbox.NetworkMode
	Allowlist      sandbox.NetworkLists
	WritableRoots  []string
	Protected      []string
	Backend        sandbox.Backend
	ExecutionMode  sandbox.ExecutionMode
	HidesState     bool
	Limits         sandbox.Limits
	LimitsRequired bool
}

func essenceOf(p sandbox.Policy, state []string) essence {
	hides := true
	for _, s := range state {
		hides = hides && slices.Contains(p.Hidden, s)
	}
	var lists sandbox.NetworkLists
	if p.Allowlist != nil {
		lists = *p.Allowlist
	}
	return essence{p.Mode, p.Network, lists, p.WritableRoots, p.Protected, p.Backend, p.ExecutionMode, hides, p.Limits, p.LimitsRequired}
}

// TestOneResolutionOnEverySurface holds every surface that runs something — `airlock
// exec`/`check`/`mcp` (the CLI's resolution), the broker's isolation check for a session
// and for a hook, a scheduled run's executor, and ops — to the same effective policy for
// the same config, environment, project file and directory.
func TestOneResolutionOnEverySurface(t *testing.T) {
	cases := []struct {
		name, config, project string
		env                   map[string]string
		want                  func(t *testing.T, e essence, repo string)
	}{
		{"defaults", "", "", nil, func(t *testing.T, e essence, repo string) {
			if e.Mode != sandbox.ModeWorkspaceWrite || e.Network != sandbox.NetworkOff || !slices.Equal(e.WritableRoots, []string{repo}) {
				t.Errorf("%+v", e)
			}
		}},
		{"a project tightens to read-only and protects a file", "", "sandbox_mode = \"read-only\"\n[isolation]\nprotected = [\"secret.txt\"]\n", nil,
			func(t *testing.T, e essence, repo string) {
				if e.Mode != sandbox.ModeReadOnly || !slices.Contains(e.Protected, filepath.Join(repo, "secret.txt")) {
					t.Errorf("%+v", e)
				}
			}},
		{"a project cannot loosen", "sandbox_mode = \"read-only\"\n", "sandbox_mode = \"full-access\"\n[sandbox_workspace_write]\nnetwork_access = true\n", nil,
			func(t *testing.T, e essence, _ string) {
				if e.Mode != sandbox.ModeReadOnly || e.Network != sandbox.NetworkOff {
					t.Errorf("%+v", e)
				}
			}},
		{"a project turns off the network the environment turned on", "", "[sandbox_workspace_write]\nnetwork_access = false\n",
			map[string]string{"AIRLOCK_NETWORK": "yes"}, func(t *testing.T, e essence, _ string) {
				if e.Network != sandbox.NetworkOff {
					t.Errorf("%+v", e)
				}
			}},
		{"the environment's spelling is the sandbox's", "", "", map[string]string{"AIRLOCK_SANDBOX_MODE": "Read-Only"},
			func(t *testing.T, e essence, _ string) {
				if e.Mode != sandbox.ModeReadOnly {
					t.Errorf("%+v", e)
				}
			}},
		{"a trusted project applies in full", "sandbox_mode = \"read-only\"\n", "sandbox_mode = \"workspace-write\"\n",
			map[string]string{"AIRLOCK_TRUST_PROJECT_CONFIG": "true"}, func(t *testing.T, e essence, _ string) {
				if e.Mode != sandbox.ModeWorkspaceWrite {
					t.Errorf("%+v", e)
				}
			}},
		{"an allowlist and its domains from config.toml", "[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n[network]\nallowed_domains = [\"api.anthropic.com\", \"*.pypi.org\"]\n", "", nil,
			func(t *testing.T, e essence, _ string) {
				if e.Network != sandbox.NetworkAllowlist || !slices.Equal(e.Allowlist.AllowedDomains, []string{"api.anthropic.com", "*.pypi.org"}) {
					t.Errorf("%+v", e)
				}
			}},
		{"the environment's allowlist over config.toml's on", "[sandbox_workspace_write]\nnetwork_access = true\n", "", map[string]string{"AIRLOCK_NETWORK": "allowlist"},
			func(t *testing.T, e essence, _ string) {
				if e.Network != sandbox.NetworkAllowlist {
					t.Errorf("%+v", e)
				}
			}},
		{"a project narrows on to an allowlist with fewer domains", "[sandbox_workspace_write]\nnetwork_access = true\n[network]\nallowed_domains = [\"api.anthropic.com\", \"pypi.org\"]\n",
			"[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n[network]\nallowed_domains = [\"api.anthropic.com\", \"evil.example\"]\ndenied_domains = [\"*.pypi.org\"]\n", nil,
			func(t *testing.T, e essence, _ string) {
				if e.Network != sandbox.NetworkAllowlist || !slices.Equal(e.Allowlist.AllowedDomains, []string{"api.anthropic.com"}) || !slices.Equal(e.Allowlist.DeniedDomains, []string{"*.pypi.org"}) {
					t.Errorf("%+v", e)
				}
			}},
		{"a project cannot turn an allowlist on", "[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n", "[sandbox_workspace_write]\nnetwork_access = true\n", nil,
			func(t *testing.T, e essence, _ string) {
				if e.Network != sandbox.NetworkAllowlist {
					t.Errorf("%+v", e)
				}
			}},
		{"the default limits", "", "", nil, func(t *testing.T, e essence, _ string) {
			if e.Limits != sandbox.DefaultLimits || e.LimitsRequired {
				t.Errorf("%+v", e)
			}
		}},
		{"[limits] from config.toml", "[limits]\nmemory = \"2G\"\npids = 512\nrequired = true\n", "", nil, func(t *testing.T, e essence, _ string) {
			if e.Limits != (sandbox.Limits{Memory: "2G", Pids: 512, CPU: "200%"}) || !e.LimitsRequired {
				t.Errorf("%+v", e)
			}
		}},
		{"a project lowers the limits and cannot raise them", "[limits]\npids = 512\ncpu = \"100%\"\n", "[limits]\npids = 100\ncpu = \"max\"\n", nil,
			func(t *testing.T, e essence, _ string) {
				if e.Limits != (sandbox.Limits{Memory: "4GiB", Pids: 100, CPU: "100%"}) {
					t.Errorf("%+v", e)
				}
			}},
		{"configured roots and protected paths", "[isolation]\nprotected = [\"notes\"]\n", "", nil, func(t *testing.T, e essence, repo string) {
			if !slices.Contains(e.Protected, filepath.Join(repo, "notes")) {
				t.Errorf("%+v", e)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, repo, getenv := seamCore(t, tc.config, tc.project, tc.env)
			ctx := context.Background()
			state := policy.StateOf(c.Paths)
			surfaces := map[string]sandbox.Policy{}
			surfaces["exec/check/mcp"] = cliPolicy(t, getenv, repo)
			session := surfaces["exec/check/mcp"]
			var err error
			// An MCP session's request carries its resolved mode and network.
			if surfaces["broker (MCP session)"], err = c.sandboxPolicyFor(ctx, permission.Request{Tool: "bash",
				Context: permission.Context{Cwd: repo, Policy: permission.PolicySummary{Mode: string(session.Mode), Network: session.Network}}}); err != nil {
				t.Fatal(err)
			}
			// A hook's request carries no policy: the core resolves it.
			if surfaces["broker (hook)"], err = c.sandboxPolicyFor(ctx, permission.Request{Tool: "bash", Context: permission.Context{Cwd: repo}}); err != nil {
				t.Fatal(err)
			}
			if surfaces["dispatch executor"], err = c.runPolicy(dispatch.ExecSpec{Dir: repo, Policy: c.DispatchPolicy(repo)}); err != nil {
				t.Fatal(err)
			}
			if surfaces["ops"], err = c.opsPolicy(ctx, repo); err != nil {
				t.Fatal(err)
			}
			ref := essenceOf(surfaces["exec/check/mcp"], state)
			if !ref.HidesState {
				t.Errorf("Airlock's state is not hidden: %v", surfaces["exec/check/mcp"].Hidden)
			}
			tc.want(t, ref, repo)
			for name, p := range surfaces {
				if got := essenceOf(p, state); !equalEssence(got, ref) {
					t.Errorf("%s resolves %+v, the CLI %+v", name, got, ref)
				}
			}
		})
	}
}

func equalEssence(a, b essence) bool {
	return a.Mode == b.Mode && a.Network == b.Network && reflect.DeepEqual(a.Allowlist, b.Allowlist) && slices.Equal(a.WritableRoots, b.WritableRoots) &&
		slices.Equal(a.Protected, b.Protected) && a.Backend == b.Backend && a.ExecutionMode == b.ExecutionMode && a.HidesState == b.HidesState &&
		a.Limits == b.Limits && a.LimitsRequired == b.LimitsRequired
}

// TestProjectDenyRulesHoldOnEverySurface: a project's deny rule refuses the command
// whether an MCP agent's bash, a hook's Bash or a scheduled run's own command asks, and
// the window lists what the project file asked for that was ignored.
func TestProjectDenyRulesHoldOnEverySurface(t *testing.T) {
	project := "[[permission.rules]]\ntool = \"bash\"\npattern = \"cat *\"\naction = \"deny\"\n\n" +
		"[[permission.rules]]\ntool = \"bash\"\npattern = \"ls *\"\naction = \"allow\"\n"
	c, repo, _ := seamCore(t, "", project, nil)
	ctx := context.Background()
	argv, _ := json.Marshal(map[string]any{"argv": []string{"cat", "notes.txt"}})
	cmd, _ := json.Marshal(map[string]any{"command": "cat notes.txt"})
	for name, req := range map[string]permission.Request{
		"MCP bash":            {Tool: "bash", Params: cmd, Context: permission.Context{Session: "mcp-1", Cwd: repo, Policy: permission.PolicySummary{Mode: "workspace-write"}}},
		"hook Bash":           {Tool: "bash", Params: cmd, Context: permission.Context{Session: "claude-1", Cwd: repo}},
		"scheduled run (own)": {Tool: "exec", Params: argv, Context: permission.Context{Run: "1", Cwd: repo, TaskArgv: []string{"cat", "notes.txt"}, Policy: permission.PolicySummary{Mode: "workspace-write"}}},
		"in a subdirectory":   {Tool: "bash", Params: cmd, Context: permission.Context{Session: "mcp-2", Cwd: filepath.Join(repo, ".airlock")}},
	} {
		d := c.Broker.Check(ctx, req).Decision
		if d.Verdict != permission.Deny || d.Layer != permission.LayerRule || !strings.Contains(strings.Join(d.Reasons, " "), "cat *") {
			t.Errorf("%s: %+v, want denied by the project's rule", name, d)
		}
	}
	// Outside the project the rule does not apply.
	outside := filepath.Dir(repo)
	if d := c.Broker.Check(ctx, permission.Request{Tool: "bash", Params: cmd, Context: permission.Context{Session: "mcp-3", Cwd: outside}}).Decision; d.Verdict == permission.Deny {
		t.Errorf("outside the project: %+v", d)
	}
	// The allow rule is ignored (a project only tightens), and the window says so.
	layers := c.ProjectLayers(ctx)
	if len(layers) != 1 || !strings.Contains(strings.Join(layers[0].Ignored, "\n"), "allow bash \"ls *\"") ||
		!strings.Contains(strings.Join(layers[0].Applied, "\n"), "cat *") {
		t.Fatalf("project layers: %+v", layers)
	}
	// A project file that cannot be read refuses requests there instead of dropping it.
	os.WriteFile(filepath.Join(repo, ".airlock", "policy.toml"), []byte("[[permission.rules]\nbroken"), 0o644)
	if d := c.Broker.Check(ctx, permission.Request{Tool: "bash", Params: cmd, Context: permission.Context{Session: "mcp-4", Cwd: repo}}).Decision; d.Verdict != permission.Deny {
		t.Errorf("broken project file: %+v", d)
	}
}

// TestTrustIsParsedOnce: AIRLOCK_TRUST_PROJECT_CONFIG means the same to the sandbox and to
// the permission settings, whatever its spelling; a value that is not a boolean trusts
// nothing anywhere.
func TestTrustIsParsedOnce(t *testing.T) {
	project := "sandbox_mode = \"workspace-write\"\n[[permission.rules]]\ntool = \"bash\"\npattern = \"ls *\"\naction = \"allow\"\n"
	for _, tc := range []struct {
		value   string
		trusted bool
	}{{"1", true}, {"true", true}, {"yes", true}, {"0", false}, {"maybe", false}} {
		c, repo, _ := seamCore(t, "sandbox_mode = \"read-only\"\n", project, map[string]string{"AIRLOCK_TRUST_PROJECT_CONFIG": tc.value})
		ctx := context.Background()
		pol, err := c.sandboxPolicyFor(ctx, permission.Request{Tool: "bash", Context: permission.Context{Cwd: repo}})
		sandboxTrusted := err == nil && pol.Mode == sandbox.ModeWorkspaceWrite
		eff, _, err := c.permissionFor(ctx, permission.Request{Context: permission.Context{Cwd: repo}})
		permTrusted := err == nil && eff.ProjectTrusted && len(eff.Rules) == 1
		if sandboxTrusted != tc.trusted || permTrusted != tc.trusted {
			t.Errorf("AIRLOCK_TRUST_PROJECT_CONFIG=%s: sandbox trusts %v, permission trusts %v, want %v", tc.value, sandboxTrusted, permTrusted, tc.trusted)
		}
	}
}

// TestLimitsOfADepartmentAndATask: a run's limits are [limits] with its department's
// defaults over them and its task's overrides over those, recorded when it starts and
// resolved by the one entry point, where the project file around its directory still
// lowers them.
func TestLimitsOfADepartmentAndATask(t *testing.T) {
	c, repo, _ := seamCore(t, "[limits]\nmemory = \"2G\"\npids = 512\n", "[limits]\npids = 300\n", nil)
	recorded := c.DispatchPolicy(repo).
		Apply(api.Defaults{Limits: api.Limits{Memory: "1G", CPU: "50%"}}). // the department's
		Apply(api.Defaults{Limits: api.Limits{Memory: "3G", Pids: 1000}})  // the task's
	if want := (api.Limits{Memory: "3G", Pids: 1000, CPU: "50%"}); recorded.Limits != want {
		t.Fatalf("recorded limits %+v, want %+v", recorded.Limits, want)
	}
	pol, err := c.runPolicy(dispatch.ExecSpec{Dir: repo, Policy: recorded})
	if err != nil {
		t.Fatal(err)
	}
	// Raised above the project's 300 by the task, the pids limit stays the project's.
	if want := (sandbox.Limits{Memory: "3G", Pids: 300, CPU: "50%"}); pol.Limits != want {
		t.Fatalf("the run resolves %+v, want %+v", pol.Limits, want)
	}
	if !strings.Contains(pol.Sources[sandbox.KeyLimitsPids].String(), "project") || !strings.Contains(pol.Sources[sandbox.KeyLimitsMemory].String(), "recorded") {
		t.Fatalf("pids from %q, memory from %q: want the project and the recorded policy", pol.Sources[sandbox.KeyLimitsPids], pol.Sources[sandbox.KeyLimitsMemory])
	}
}
