package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
)

// The core's side of the one resolution: every request, run, MCP call and
// ops command the core decides gets its policy from policyInputs → policy.Resolve, and its
// permission settings from permissionFor on the same project files.

// policyInputs are the resolution's inputs for a working directory, with flags given by
// a run's or a session's recorded policy (recorded) or by nobody.
func (c *Core) policyInputs(cwd string, flags policy.Flags, recorded bool) policy.Inputs {
	st := c.Config.State()
	return policy.Inputs{
		File: st.File, FilePath: st.Path, Getenv: c.getenv, Flags: flags, Recorded: recorded,
		Cwd: cwd, State: policy.StateOf(c.Paths),
	}
}

// trustProject is AIRLOCK_TRUST_PROJECT_CONFIG as policy parses it (an invalid value
// trusts nothing).
func (c *Core) trustProject() bool {
	t, err := policy.TrustProject(c.getenv)
	return err == nil && t
}

// resolvePermission resolves the broker's trusted configuration (no project files).
func (c *Core) resolvePermission() (permission.Effective, error) {
	src, err := c.permissionSources()
	if err != nil {
		return permission.Effective{}, err
	}
	return permission.Resolve(src)
}

// permissionSources are the trusted layers of the permission side: config.toml, the
// profile it chose and the one the core's AIRLOCK_PROFILE chose, the environment.
func (c *Core) permissionSources() (permission.Sources, error) {
	st := c.Config.State()
	chosen, err := c.policyInputs("", policy.Flags{}, false).Profiles()
	if err != nil {
		return permission.Sources{}, err
	}
	return permission.Sources{
		File: permissionSettings(st.File), FilePath: st.Path, TrustProject: c.trustProject(),
		LookupEnv:   func(k string) (string, bool) { v := c.getenv(k); return v, v != "" },
		FileProfile: profileSettings(chosen.File), EnvProfile: profileSettings(chosen.Env),
	}, nil
}

// profileSettings is the permission side of profile p (nil: no profile chosen).
func profileSettings(p *api.Profile) permission.ProfileSettings {
	if p == nil {
		return permission.ProfileSettings{}
	}
	s := permission.Settings{ApprovalPolicy: p.ApprovalPolicy, ApprovalsReviewer: p.Reviewer}
	s.Permission.Tiers = p.Tiers
	return permission.ProfileSettings{Name: p.Name, Settings: s}
}

// permissionFor is the permission configuration of one request: the trusted one with
// the project files around its working directory layered on. key names the project
// files and their bytes ("" when there are none), for the broker's compiled cache.
func (c *Core) permissionFor(_ context.Context, req permission.Request) (permission.Effective, string, error) {
	cwd := req.Context.Cwd
	if cwd == "" {
		cwd = req.Context.Workspace
	}
	if cwd == "" {
		return permission.Effective{}, "", nil
	}
	projects, err := policy.LoadProjects(cwd)
	if err != nil {
		return permission.Effective{}, "", err
	}
	runProfile := req.Context.Policy.Profile
	if len(projects) == 0 && runProfile == "" {
		return permission.Effective{}, "", nil
	}
	src, err := c.permissionSources()
	if err != nil {
		return permission.Effective{}, "", err
	}
	h := sha256.New()
	if runProfile != "" {
		prof, err := c.Profile(runProfile)
		if err != nil {
			return permission.Effective{}, "", fmt.Errorf("the run's profile: %w", err)
		}
		src.RunProfile = profileSettings(&prof)
		fmt.Fprintf(h, "profile=%s\x00", runProfile)
	}
	for _, p := range projects {
		src.Projects = append(src.Projects, permission.ProjectPolicy{Path: p.Path(), Settings: permissionSettings(p.File)})
		fmt.Fprintf(h, "%s\x00%d\x00", p.Path(), len(p.Sandbox.Data))
		h.Write(p.Sandbox.Data)
	}
	eff, err := permission.Resolve(src)
	if err != nil {
		return permission.Effective{}, "", fmt.Errorf("project policy: %w", err)
	}
	// The trusted settings take part in the key through the broker's Reload, which
	// empties the cache; the environment's trust switch is folded in here.
	fmt.Fprintf(h, "trust=%v", src.TrustProject)
	return eff, hex.EncodeToString(h.Sum(nil)), nil
}

// sandboxPolicyFor is the sandbox policy a request runs under: the configuration in
// force for its working directory, tightened by the project files there, with what its
// run or session recorded as the strongest layer.
func (c *Core) sandboxPolicyFor(_ context.Context, req permission.Request) (sandbox.Policy, error) {
	var flags policy.Flags
	summary := req.Context.Policy
	if summary.Mode != "" {
		m, n := summary.Mode, summary.Network
		flags.Sandbox.Mode, flags.Sandbox.Network = &m, &n
	}
	if roots := summary.WritableRoots; len(roots) > 0 {
		flags.Sandbox.WritableRoots = roots
	}
	cwd := req.Context.Cwd
	if cwd == "" {
		cwd = req.Context.Workspace
	}
	if cwd == "" {
		return sandbox.Policy{}, errors.New("the request names no working directory")
	}
	r, err := policy.Resolve(c.policyInputs(cwd, flags, summary.Mode != ""))
	if err != nil {
		return sandbox.Policy{}, err
	}
	if summary.EgressConnected || (req.Context.Run != "" && req.Context.Session == "") {
		// A dispatch run's own command (the executor connects an allowlist run to the
		// egress proxy: runEgress), or a caller that says it connects one (airlock-agent's
		// bash): the proxy judges each destination, so network clients are not refused up
		// front. Only the application layer's preflight: without the proxy the command
		// still has no network, and without a namespace sandbox.Exec refuses them.
		r.Sandbox.EgressConnected = true
	}
	return r.Sandbox, nil
}

// runPolicy is the sandbox policy of one dispatch run at its start: the policy the run
// recorded (its department's and task's defaults over the global ones), the configured
// writable roots and protected paths, the project files of its directory, and the
// escalation the person allowed for it, if any.
func (c *Core) runPolicy(spec dispatch.ExecSpec) (sandbox.Policy, error) {
	r, err := policy.Resolve(c.policyInputs(spec.Dir, policy.Flags{Sandbox: dispatch.SandboxLayer(spec.Policy)}, true))
	if err != nil {
		return sandbox.Policy{}, err
	}
	return r.Sandbox, nil
}

// opsPolicy is the sandbox policy ops commands of a plan run under in dir.
func (c *Core) opsPolicy(_ context.Context, dir string) (sandbox.Policy, error) {
	r, err := policy.Resolve(c.policyInputs(dir, policy.Flags{}, false))
	if err != nil {
		return sandbox.Policy{}, err
	}
	return r.Sandbox, nil
}

// DispatchPolicy is the effective policy a run in dir starts with, before its
// department's defaults and its task's overrides: the configuration's layers and the
// project files around dir ("" or a directory that does not exist: the global policy,
// without project files).
func (c *Core) DispatchPolicy(dir string) dispatch.Policy {
	p := dispatch.DefaultPolicy()
	in := c.policyInputs(dir, policy.Flags{}, false)
	var g sandbox.Policy
	var err error
	if st, serr := os.Stat(dir); dir != "" && serr == nil && st.IsDir() {
		var r policy.Resolved
		r, err = policy.Resolve(in)
		g = r.Sandbox
	} else {
		g, err = policy.Global(in)
	}
	if err != nil {
		slog.Error("effective configuration for runs", "dir", dir, "error", err)
		return p
	}
	p.SandboxMode, p.Network = string(g.Mode), g.Network
	p.Backend, p.ExecutionMode = string(g.Backend), string(g.ExecutionMode)
	p.Limits = g.Limits
	eff, err := c.resolvePermission()
	if dir != "" {
		if pe, key, perr := c.permissionFor(context.Background(), permission.Request{Context: permission.Context{Cwd: dir}}); perr != nil {
			err = perr
		} else if key != "" {
			eff = pe
		}
	}
	if err != nil {
		slog.Error("effective approval policy for runs", "dir", dir, "error", err)
		return p
	}
	p.ApprovalPolicy = string(eff.ApprovalPolicy)
	return p
}

// ProjectLayer is a project policy file and what it did (api.ProjectLayer).
type ProjectLayer = api.ProjectLayer

// ProjectLayers lists the project policy files where runs and agents work: around each
// department's directory, and in each workspace root and its immediate subdirectories
// (a checkout per subdirectory is the usual layout).
func (c *Core) ProjectLayers(ctx context.Context) []ProjectLayer {
	var dirs []string
	if c.Departments != nil {
		if list, err := c.Departments.List(ctx); err == nil {
			for _, d := range list {
				dirs = append(dirs, d.Directory)
			}
		}
	}
	home := c.getenv("HOME")
	for _, root := range workspaceRoots(c.Config.State().File) {
		if strings.HasPrefix(root, "~/") && home != "" {
			root = filepath.Join(home, root[2:])
		}
		dirs = append(dirs, root)
		entries, _ := os.ReadDir(root)
		for i, e := range entries {
			if i >= 500 {
				break // a bounded look, not a crawl
			}
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(root, e.Name()))
			}
		}
	}
	seen := map[string]bool{}
	var out []ProjectLayer
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, sandbox.ProjectPolicyFile)); err != nil {
			continue
		}
		projects, err := policy.LoadProjects(dir)
		if err != nil {
			out = append(out, ProjectLayer{Path: filepath.Join(dir, sandbox.ProjectPolicyFile), Applied: []string{}, Ignored: []string{"the file cannot be used, so requests there are refused: " + err.Error()}})
			continue
		}
		last := projects[len(projects)-1]
		if seen[last.Path()] {
			continue
		}
		seen[last.Path()] = true
		out = append(out, c.projectLayer(ctx, dir, last))
	}
	return out
}

// projectLayer says what the project file p (the innermost around dir) does there.
func (c *Core) projectLayer(ctx context.Context, dir string, p policy.Project) ProjectLayer {
	l := ProjectLayer{Path: p.Path(), Applied: []string{}, Ignored: []string{}}
	if r, err := policy.Resolve(c.policyInputs(dir, policy.Flags{}, false)); err == nil {
		for key, src := range r.Sandbox.Sources {
			if src.Layer == sandbox.LayerProject && strings.Contains(src.Detail, p.Path()) {
				l.Applied = append(l.Applied, fmt.Sprintf("%s (%s)", key, src.Detail))
			}
		}
		for _, ig := range r.Sandbox.Ignored {
			if ig.File == p.Path() {
				l.Ignored = append(l.Ignored, ig.String())
			}
		}
	}
	if eff, _, err := c.permissionFor(ctx, permission.Request{Context: permission.Context{Cwd: dir}}); err == nil {
		for _, r := range eff.Rules {
			if r.Source == p.Path() {
				l.Applied = append(l.Applied, "rule "+r.String())
			}
		}
		for tool, from := range eff.TiersFrom {
			if from == permission.FromProject {
				l.Applied = append(l.Applied, fmt.Sprintf("[permission.tiers] %s = %s", tool, eff.Tiers[tool]))
			}
		}
		if eff.ApprovalPolicyFrom == permission.FromProject {
			l.Applied = append(l.Applied, "approval_policy = "+string(eff.ApprovalPolicy))
		}
		for _, ig := range eff.IgnoredFromProjects {
			if strings.HasPrefix(ig, p.Path()+":") {
				l.Ignored = append(l.Ignored, ig)
			}
		}
	}
	sort.Strings(l.Applied)
	return l
}
