// Package policy is the one resolution of Airlock's effective policy ("one
// resolution", docs/ARCHITECTURE.md): every surface — the broker, `airlock exec` and `check`, the
// dispatch executor at each start, the MCP tools, ops — computes the policy of a request
// or a run here, from the same layers: command-line flags (or a run's recorded policy),
// the environment, config.toml, and the untrusted project policy files around the
// working directory. It links no database, so the CLI's hot paths use it.
//
// The sandbox part is resolved here; the permission part (rules, tiers, hooks) is
// resolved by the core from the same Resolved.Projects, so both read the same bytes.
package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/paths"
	"github.com/airlock-app/airlock/sandbox"
)

// EnvTrustProject is the environment variable that trusts project policy files in full
// ("1"): an environment variable only, so a checkout cannot declare itself trusted.
const EnvTrustProject = sandbox.EnvTrustProject

// Flags are the command-line layer (or a run's or session's recorded policy).
type Flags struct {
	Sandbox sandbox.Layer
	// ApprovalPolicy and Reviewer are "" when not given.
	ApprovalPolicy string
	Reviewer       string
	// Profile is the command's --profile ("" when not given): beneath the other flags.
	Profile string
}

// Inputs are everything one resolution starts from.
type Inputs struct {
	// File is the trusted config.toml as parsed; FilePath names it in sources.
	File     config.File
	FilePath string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Flags is the strongest layer.
	Flags Flags
	// Recorded says Flags hold the policy a run or session recorded when it started:
	// the environment no longer applies (the daemon's own environment must not change a
	// run), the project files around Cwd still do.
	Recorded bool
	// Cwd is the working directory (it must exist); "" means os.Getwd.
	Cwd string
	// State are Airlock's own state paths (paths.Paths.Hidden), hidden from every
	// sandbox but full-access.
	State []string
}

// Project is one untrusted project policy file: its sandbox part, and the whole file
// decoded as config.toml's keys for the permission part (deny rules, tier raises).
type Project struct {
	Sandbox *sandbox.ProjectPolicy
	File    config.File
}

// Path is the policy file's path.
func (p Project) Path() string { return p.Sandbox.File }

// Resolved is the effective policy of one request or run.
type Resolved struct {
	Sandbox sandbox.Policy
	// Projects are the project files that applied, outermost first.
	Projects []Project
	// TrustProject is AIRLOCK_TRUST_PROJECT_CONFIG=1 (parsed once, by TrustProject).
	TrustProject bool
	// Profiles are the profiles chosen at each level.
	Profiles Chosen
}

// Chosen are the profiles chosen by config.toml (profile = "NAME"), by AIRLOCK_PROFILE
// and by --profile; nil where none was. Each is a layer just beneath the keys of its
// level.
type Chosen struct {
	File, Env, Flag *api.Profile
}

// Strongest is the strongest profile chosen ("" when none was).
func (c Chosen) Strongest() string {
	for _, p := range []*api.Profile{c.Flag, c.Env, c.File} {
		if p != nil {
			return p.Name
		}
	}
	return ""
}

// Profiles looks up the profiles in's levels choose. An unknown name is an error naming
// where it was chosen and the known names (config.ErrUnknownProfile). A recorded
// policy ignores AIRLOCK_PROFILE, as it ignores every other variable.
func (in Inputs) Profiles() (Chosen, error) {
	var c Chosen
	lookup := func(name, where string) (*api.Profile, error) {
		if name == "" {
			return nil, nil
		}
		p, err := config.LookupProfile(in.File, in.FilePath, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		return &p, nil
	}
	var err error
	if in.File.Profile != nil {
		if c.File, err = lookup(*in.File.Profile, in.FilePath+" profile"); err != nil {
			return c, err
		}
	}
	if !in.Recorded {
		if c.Env, err = lookup(in.env()(config.EnvProfile), config.EnvProfile); err != nil {
			return c, err
		}
	}
	if c.Flag, err = lookup(in.Flags.Profile, "--profile"); err != nil {
		return c, err
	}
	return c, nil
}

// SandboxLayer is the sandbox's part of profile p (nil: no profile), chosen where
// detail says.
func SandboxLayer(p *api.Profile, detail string) sandbox.ProfileLayer {
	if p == nil {
		return sandbox.ProfileLayer{}
	}
	l := sandbox.ProfileLayer{Name: p.Name, Network: p.Network, Detail: detail}
	if p.SandboxMode != "" {
		m := p.SandboxMode
		l.Mode = &m
	}
	return l
}

// ErrBadTrustValue is returned for an AIRLOCK_TRUST_PROJECT_CONFIG that is not a boolean.
var ErrBadTrustValue = errors.New("invalid " + EnvTrustProject)

// TrustProject reads AIRLOCK_TRUST_PROJECT_CONFIG: the one place it is parsed.
func TrustProject(getenv func(string) string) (bool, error) {
	v := getenv(EnvTrustProject)
	if v == "" {
		return false, nil
	}
	b, err := sandbox.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: %v (unset it, or set it to 1 to trust project policy files)", ErrBadTrustValue, err)
	}
	return b, nil
}

// FileLayer maps config.toml's sandbox keys onto a sandbox layer.
func FileLayer(f config.File) sandbox.Layer {
	return sandbox.Layer{
		Mode:    f.SandboxMode,
		Network: f.SandboxWorkspaceWrite.Network(),
		NetworkTable: sandbox.NetworkTable{AllowedDomains: f.Network.AllowedDomains, DeniedDomains: f.Network.DeniedDomains,
			AskUnknown: f.Network.AskUnknown, AllowLocal: f.Network.AllowLocal},
		WritableRoots:  f.SandboxWorkspaceWrite.WritableRoots,
		Protected:      f.Isolation.Protected,
		Backend:        f.Isolation.Backend,
		ExecutionMode:  f.ExecutionMode,
		Limits:         f.Limits.Layer(),
		LimitsRequired: f.Limits.Required,
	}
}

// LoadProjects loads every .airlock/policy.toml from cwd up to the filesystem root,
// outermost first. They can only tighten, so reading more of them is never looser. A
// file that cannot be read or decoded is an error naming it: a policy the checkout
// asked for is never dropped silently.
func LoadProjects(cwd string) ([]Project, error) {
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("project policies of %s: %w", cwd, err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	var found []Project
	for {
		pp, err := sandbox.LoadProjectPolicy(dir)
		if err != nil {
			return nil, err
		}
		if pp != nil {
			var f config.File
			if err := toml.Unmarshal(pp.Data, &f); err != nil {
				return nil, fmt.Errorf("load project policy %s: %w (fix or remove the file)", pp.File, err)
			}
			if f.Profile != nil || len(f.Profiles) > 0 {
				// A profile may loosen as well as tighten: a checkout does not choose one.
				pp.Ignored = append(pp.Ignored, sandbox.Ignored{File: pp.File, Key: "profile",
					Reason: "a project policy file may not choose or define a profile; write the keys that tighten instead"})
				f.Profile, f.Profiles = nil, nil
			}
			found = append([]Project{{Sandbox: pp, File: f}}, found...)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return found, nil
		}
		dir = parent
	}
}

func (in Inputs) env() func(string) string {
	if in.Getenv == nil {
		return os.Getenv
	}
	return in.Getenv
}

// sandboxInputs are the sandbox's inputs for in (without the project files).
func (in Inputs) sandboxInputs(trust bool, chosen Chosen) sandbox.Inputs {
	env := in.env()
	sEnv := env
	if in.Recorded {
		sEnv = func(string) string { return "" }
	}
	home := env("HOME")
	return sandbox.Inputs{
		Flags: in.Flags.Sandbox, Env: sEnv, File: FileLayer(in.File), FilePath: in.FilePath,
		Cwd: in.Cwd, Home: home, TrustProject: trust, State: in.State, Recorded: recorded(in.Recorded),
		// The hidden defaults (socket, bus, keyring) come from the real environment
		// even for a recorded run: they say where the host keeps them.
		HiddenEnv:   env,
		FileProfile: SandboxLayer(chosen.File, "config "+in.FilePath), EnvProfile: SandboxLayer(chosen.Env, "env "+config.EnvProfile),
		FlagProfile: SandboxLayer(chosen.Flag, "flag --profile"),
	}
}

// Resolve computes the effective policy of one request or run in in.Cwd.
func Resolve(in Inputs) (Resolved, error) {
	env := in.env()
	trust, err := TrustProject(env)
	if err != nil {
		return Resolved{}, err
	}
	cwd := in.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return Resolved{}, fmt.Errorf("working directory: %w", err)
		}
		in.Cwd = cwd
	}
	projects, err := LoadProjects(cwd)
	if err != nil {
		return Resolved{}, err
	}
	chosen, err := in.Profiles()
	if err != nil {
		return Resolved{}, err
	}
	si := in.sandboxInputs(trust, chosen)
	for _, p := range projects {
		si.Project = append(si.Project, p.Sandbox)
	}
	pol, err := sandbox.Resolve(si)
	if err != nil {
		return Resolved{}, err
	}
	return Resolved{Sandbox: pol, Projects: projects, TrustProject: trust, Profiles: chosen}, nil
}

// Global resolves what does not depend on a working directory (mode, network, backend,
// execution mode): the policy runs start from before their department, task and
// directory, and what `airlock config show` prints.
func Global(in Inputs) (sandbox.Policy, error) {
	trust, err := TrustProject(in.env())
	if err != nil {
		return sandbox.Policy{}, err
	}
	chosen, err := in.Profiles()
	if err != nil {
		return sandbox.Policy{}, err
	}
	return sandbox.ResolveGlobal(in.sandboxInputs(trust, chosen))
}

// StateOf lists Airlock's own state directories of p, hidden from every sandbox but
// full-access: the config directory, the database and sandbox images, the run logs, the
// socket's directory and the agent tasks' run directories (an agent task's run reveals
// its own: sandbox.Policy.WithUnhidden).
func StateOf(p paths.Paths) []string {
	all := []string{filepath.Dir(p.ConfigFile), p.DataDir, filepath.Dir(p.RunLogs), p.RunLogs, p.SandboxDir, p.RuntimeDir}
	if p.AgentRuns != "" {
		all = append(all, p.AgentRuns)
	}
	// One mount hides a directory and what it holds: a nested entry would ask the
	// sandbox to mount inside an empty read-only tmpfs.
	var out []string
	for _, a := range all {
		nested := false
		for _, b := range all {
			if a != b && strings.HasPrefix(a, b+string(filepath.Separator)) {
				nested = true
			}
		}
		if !nested && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func recorded(r bool) string {
	if r {
		return "the policy recorded when the run or session started"
	}
	return ""
}
