package sandbox

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/airlock-app/airlock/internal/realpath"
)

// Layer is one configuration layer as the app maps it in (flags, config.toml,
// a project policy file). A nil field is "not set by this layer".
type Layer struct {
	Mode    *string
	Network *NetworkMode
	// NetworkTable is the layer's [network] table (file and project layers only).
	NetworkTable  NetworkTable
	WritableRoots []string // nil = not set; relative paths are relative to the run's cwd (project: to its directory)
	Protected     []string // added to .git and .airlock; relative entries apply inside every writable root
	Backend       *string
	ExecutionMode *string
	// Limits are the layer's [limits]; a zero field is not set by this layer.
	Limits Limits
	// LimitsRequired is [limits] required: refuse to run where the limits cannot be applied.
	LimitsRequired *bool
}

// ProfileLayer is what a chosen profile sets in the sandbox's part of the policy (a
// nil field: not set by it). Name is "" when no profile was chosen at that level.
type ProfileLayer struct {
	Name    string
	Mode    *string
	Network *NetworkMode
	// Detail says where it was chosen, for sources ("config.toml profile", "flag --profile").
	Detail string
}

// source is the source of a value the profile set.
func (pl ProfileLayer) source() Source {
	return Source{LayerProfile, "profile " + pl.Name + " (" + pl.Detail + ")"}
}

// value is the profile's value of key (KeyMode or KeyNetwork), nil when it sets none.
func (pl ProfileLayer) value(key string) *string {
	if pl.Name == "" {
		return nil
	}
	switch key {
	case KeyMode:
		return pl.Mode
	case KeyNetwork:
		if pl.Network != nil {
			s := string(*pl.Network)
			return &s
		}
	}
	return nil
}

// Environment variables read by Resolve.
const (
	EnvSandboxMode   = "AIRLOCK_SANDBOX_MODE"
	EnvNetwork       = "AIRLOCK_NETWORK"
	EnvBackend       = "AIRLOCK_SANDBOX_BACKEND"
	EnvExecutionMode = "AIRLOCK_EXECUTION_MODE"
	EnvTrustProject  = "AIRLOCK_TRUST_PROJECT_CONFIG"
)

// DefaultProtected are always protected inside every writable root.
var DefaultProtected = []string{".git", ".airlock"}

// Inputs are everything Resolve needs. Flags > FlagProfile > Env > EnvProfile > File
// > FileProfile > default; Project files may only tighten unless TrustProject.
type Inputs struct {
	Flags Layer
	// FileProfile, EnvProfile and FlagProfile are the profiles chosen by config.toml, by
	// AIRLOCK_PROFILE and by --profile: each sits just beneath the keys of its level.
	FileProfile, EnvProfile, FlagProfile ProfileLayer
	// Env looks up environment variables; nil means os.Getenv.
	Env  func(string) string
	File Layer
	// FilePath names the config file in Sources details (e.g. "/home/u/.config/airlock/config.toml").
	FilePath string
	// Project are the loaded project policy files (LoadProjectPolicy), innermost last.
	Project []*ProjectPolicy
	// Cwd is the run's working directory; it must exist. Empty means os.Getwd.
	Cwd string
	// Home is the user's home directory; empty means os.UserHomeDir.
	Home string
	// Recorded, when set, says the flag layer is a recorded policy (for example "the
	// policy the run recorded when it started"): sources name it instead of a flag.
	Recorded string
	// TrustProject applies the project files in full (AIRLOCK_TRUST_PROJECT_CONFIG=1 in
	// the environment, parsed once by the caller); otherwise they may only tighten.
	TrustProject bool
	// HiddenEnv is the environment the hidden defaults (DefaultHiddenPaths) are read
	// from; nil means Env. A recorded run ignores the environment's settings but still
	// hides the sockets the host's environment names.
	HiddenEnv func(string) string
	// State are Airlock's own state paths (database, run logs, config, socket, images),
	// hidden from every sandbox but full-access like the defaults of DefaultHiddenPaths.
	State []string
}

// Resolve computes the effective policy. Invalid values are errors naming the
// value, the layer and the valid choices. Callers go through the app's one entry point
// (package app/policy), which loads the layers.
func Resolve(in Inputs) (Policy, error) {
	home := in.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	cwd := in.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return Policy{}, fmt.Errorf("resolve sandbox policy: working directory: %w", err)
		}
	}
	realCwd, err := realDir(expandHome(cwd, home), "")
	if err != nil {
		return Policy{}, fmt.Errorf("resolve sandbox policy: working directory %s: %w (pass an existing directory)", cwd, err)
	}
	p, err := ResolveGlobal(in)
	if err != nil {
		return Policy{}, err
	}
	p.Cwd = realCwd
	trust := in.TrustProject
	env := in.Env
	if env == nil {
		env = os.Getenv
	}
	flag, fileSrc := in.flagSource, in.fileSource
	fileDetail := in.fileDetail()

	// Untrusted project files: apply only what tightens.
	for _, pp := range in.Project {
		p.Ignored = append(p.Ignored, pp.Ignored...)
		if !trust {
			p.applyUntrusted(pp)
		}
	}
	p.applyModeImplications()

	// Writable roots: the cwd exactly, plus the configured ones.
	var roots []string
	var rootsSrc Source
	switch {
	case in.Flags.WritableRoots != nil:
		roots, rootsSrc = in.Flags.WritableRoots, flag("writable-root")
	case in.File.WritableRoots != nil:
		roots, rootsSrc = in.File.WritableRoots, fileSrc("sandbox_workspace_write.writable_roots")
	default:
		rootsSrc = Source{LayerDefault, "default (the working directory only)"}
	}
	resolved := []string{p.Cwd}
	addRoot := func(r, base, from string) {
		rr, err := realDir(expandHome(r, p.Home), base)
		if err != nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("writable root %s (%s) skipped: %v", r, from, err))
			return
		}
		if !slices.Contains(resolved, rr) {
			resolved = append(resolved, rr)
		}
	}
	for _, r := range roots {
		addRoot(r, p.Cwd, rootsSrc.String())
	}
	if trust {
		for _, pp := range in.Project {
			for _, r := range pp.Layer.WritableRoots {
				addRoot(r, pp.Dir, "project "+pp.File)
				rootsSrc = Source{rootsSrc.Layer + "+" + LayerProject, rootsSrc.String() + " + project " + pp.File}
			}
		}
	}
	if p.Mode == ModeWorkspaceWrite {
		p.WritableRoots = resolved
	}
	p.Sources[KeyWritableRoots] = rootsSrc

	// Protected paths: defaults + every layer (more protection is always accepted).
	prot := slices.Clone(DefaultProtected)
	protSrc := []string{"default .git .airlock"}
	addProt := func(list []string, base, from string) {
		if len(list) == 0 {
			return
		}
		protSrc = append(protSrc, from)
		for _, e := range list {
			e = expandHome(e, p.Home)
			if filepath.IsAbs(e) {
				prot = append(prot, filepath.Clean(e))
			} else if base != "" && strings.Contains(e, "..") {
				prot = append(prot, filepath.Join(base, e))
			} else {
				prot = append(prot, filepath.Clean(e))
			}
		}
	}
	addProt(in.File.Protected, "", fileDetail+" isolation.protected")
	addProt(in.Flags.Protected, "", "flag --protect")
	for _, pp := range in.Project {
		addProt(pp.Layer.Protected, "", "project "+pp.File)
	}
	p.Sources[KeyProtected] = Source{LayerDefault, strings.Join(protSrc, " + ")}
	p.setProtected(prot)
	hiddenEnv := in.HiddenEnv
	if hiddenEnv == nil {
		hiddenEnv = env
	}
	p.Hidden = append(DefaultHiddenPaths(hiddenEnv), CredentialPaths(p.Home)...)
	for _, st := range in.State {
		if filepath.IsAbs(st) && !slices.Contains(p.Hidden, filepath.Clean(st)) {
			p.Hidden = append(p.Hidden, filepath.Clean(st))
		}
	}
	return p, nil
}

// ResolveGlobal resolves what does not depend on a working directory — mode, network,
// backend and execution mode from flags, environment, file and trusted project files —
// for the defaults runs start from and for `airlock config show`. Resolve starts from it.
func ResolveGlobal(in Inputs) (Policy, error) {
	env := in.Env
	if env == nil {
		env = os.Getenv
	}
	p := Policy{Sources: map[string]Source{}, Home: in.Home}
	if p.Home == "" {
		p.Home, _ = os.UserHomeDir()
	}
	var err error
	trust := in.TrustProject

	flag, fileSrc := in.flagSource, in.fileSource
	envSrc := func(name string) Source { return Source{LayerEnv, "env " + name} }

	// Scalars: walk layers from weakest to strongest; a trusted project sits between file and env.
	type scalar struct {
		val *string
		src Source
	}
	str := func(s string) *string { return &s }
	var pick picker = func(key, flagName, envName string, def string, fileVal, flagVal *string, projVal func(*ProjectPolicy) *string) (string, Source) {
		layers := []scalar{{str(def), Source{LayerDefault, "default"}}}
		if v := in.FileProfile.value(key); v != nil {
			layers = append(layers, scalar{v, in.FileProfile.source()})
		}
		if fileVal != nil {
			layers = append(layers, scalar{fileVal, fileSrc(key)})
		}
		if trust {
			for _, pp := range in.Project {
				if v := projVal(pp); v != nil {
					layers = append(layers, scalar{v, Source{LayerProject, "project " + pp.File + " (trusted by " + EnvTrustProject + ")"}})
				}
			}
		}
		if v := in.EnvProfile.value(key); v != nil {
			layers = append(layers, scalar{v, in.EnvProfile.source()})
		}
		if envName != "" {
			if v := env(envName); v != "" {
				layers = append(layers, scalar{str(v), envSrc(envName)})
			}
		}
		if v := in.FlagProfile.value(key); v != nil {
			layers = append(layers, scalar{v, in.FlagProfile.source()})
		}
		if flagVal != nil {
			layers = append(layers, scalar{flagVal, flag(flagName)})
		}
		top := layers[len(layers)-1]
		return *top.val, top.src
	}
	wrap := func(key string, src Source, err error) error {
		return fmt.Errorf("%s from %s: %w", key, src, err)
	}

	// Mode.
	modeStr, src := pick(KeyMode, "sandbox", EnvSandboxMode, string(ModeWorkspaceWrite), in.File.Mode, in.Flags.Mode, func(pp *ProjectPolicy) *string { return pp.Layer.Mode })
	if p.Mode, err = ParseMode(modeStr); err != nil {
		return Policy{}, wrap(KeyMode, src, err)
	}
	p.Sources[KeyMode] = src

	// Network.
	netStr := func(n *NetworkMode) *string {
		if n == nil {
			return nil
		}
		return str(string(*n))
	}
	nv, src := pick(KeyNetwork, "network", EnvNetwork, string(NetworkOff), netStr(in.File.Network), netStr(in.Flags.Network), func(pp *ProjectPolicy) *string { return netStr(pp.Layer.Network) })
	if p.Network, err = ParseNetwork(nv); err != nil {
		return Policy{}, wrap(KeyNetwork, src, err)
	}
	p.Sources[KeyNetwork] = src

	// The [network] lists: the file, then trusted project files (untrusted ones only
	// narrow them, in Resolve). A bad entry is an error naming it.
	lists := DefaultNetworkLists()
	lists.applyTable(in.File.NetworkTable)
	listSrc := Source{LayerDefault, "default"}
	if !in.File.NetworkTable.isZero() {
		listSrc = fileSrc("network")
	}
	if trust {
		for _, pp := range in.Project {
			if !pp.Layer.NetworkTable.isZero() {
				lists.applyTable(pp.Layer.NetworkTable)
				listSrc = Source{LayerProject, "project " + pp.File + " (trusted by " + EnvTrustProject + ")"}
			}
		}
	}
	if _, err := lists.Rules(); err != nil {
		return Policy{}, wrap(KeyNetworkLists, listSrc, err)
	}
	p.Allowlist = &lists
	p.Sources[KeyNetworkLists] = listSrc

	// Backend.
	bv, src := pick(KeyBackend, "backend", EnvBackend, string(BackendAuto), in.File.Backend, in.Flags.Backend, func(pp *ProjectPolicy) *string { return pp.Layer.Backend })
	if p.Backend, err = ParseBackend(bv); err != nil {
		return Policy{}, wrap(KeyBackend, src, err)
	}
	p.Sources[KeyBackend] = src

	// Execution mode.
	ev, src := pick(KeyExecutionMode, "execution-mode", EnvExecutionMode, string(ExecLocal), in.File.ExecutionMode, in.Flags.ExecutionMode, func(pp *ProjectPolicy) *string { return pp.Layer.ExecutionMode })
	if p.ExecutionMode, err = ParseExecutionMode(ev); err != nil {
		return Policy{}, wrap(KeyExecutionMode, src, err)
	}
	p.Sources[KeyExecutionMode] = src

	if err := p.resolveLimits(in, pick); err != nil {
		return Policy{}, err
	}

	p.applyModeImplications()
	return p, nil
}

// picker is ResolveGlobal's walk of one scalar through the layers.
type picker func(key, flagName, envName string, def string, fileVal, flagVal *string, projVal func(*ProjectPolicy) *string) (string, Source)

// resolveLimits resolves [limits] like every other scalar: default < file < trusted
// project < flag (a run's recorded policy, which holds its department's and task's).
func (p *Policy) resolveLimits(in Inputs, pick picker) error {
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	pidsStr := func(n int) *string {
		if n == 0 {
			return nil
		}
		return str(strconv.Itoa(n))
	}
	boolStr := func(b *bool) *string {
		if b == nil {
			return nil
		}
		return str(strconv.FormatBool(*b))
	}
	wrap := func(key string, src Source, err error) error { return fmt.Errorf("%s from %s: %w", key, src, err) }

	v, src := pick(KeyLimitsMemory, "memory", "", DefaultLimits.Memory, str(in.File.Limits.Memory), str(in.Flags.Limits.Memory),
		func(pp *ProjectPolicy) *string { return str(pp.Layer.Limits.Memory) })
	if _, err := parseMemory(v); err != nil {
		return wrap(KeyLimitsMemory, src, err)
	}
	p.Limits.Memory, p.Sources[KeyLimitsMemory] = v, src

	v, src = pick(KeyLimitsPids, "pids", "", strconv.Itoa(DefaultLimits.Pids), pidsStr(in.File.Limits.Pids), pidsStr(in.Flags.Limits.Pids),
		func(pp *ProjectPolicy) *string { return pidsStr(pp.Layer.Limits.Pids) })
	n, _ := strconv.Atoi(v)
	if _, err := checkPids(n); err != nil {
		return wrap(KeyLimitsPids, src, err)
	}
	p.Limits.Pids, p.Sources[KeyLimitsPids] = n, src

	v, src = pick(KeyLimitsCPU, "cpu", "", DefaultLimits.CPU, str(in.File.Limits.CPU), str(in.Flags.Limits.CPU),
		func(pp *ProjectPolicy) *string { return str(pp.Layer.Limits.CPU) })
	if _, err := parseCPU(v); err != nil {
		return wrap(KeyLimitsCPU, src, err)
	}
	p.Limits.CPU, p.Sources[KeyLimitsCPU] = v, src

	v, src = pick(KeyLimitsRequired, "limits-required", "", "false", boolStr(in.File.LimitsRequired), boolStr(in.Flags.LimitsRequired),
		func(pp *ProjectPolicy) *string { return boolStr(pp.Layer.LimitsRequired) })
	p.LimitsRequired, p.Sources[KeyLimitsRequired] = v == "true", src
	return nil
}

// tightenLimits applies an untrusted project's limits where they are lower, and
// records the rest as ignored.
func (p *Policy) tightenLimits(pp *ProjectPolicy, src Source, how string) {
	l := pp.Layer.Limits
	cur, err := parseLimits(p.Limits)
	if err != nil {
		return // Resolve checked them: unreachable
	}
	if l.Memory != "" {
		switch m, err := parseMemory(l.Memory); {
		case err != nil:
			p.ignore(pp, KeyLimitsMemory, err.Error())
		case lowerLimit(m, cur.memory):
			p.Limits.Memory, p.Sources[KeyLimitsMemory] = l.Memory, src
		case m != cur.memory:
			p.ignore(pp, KeyLimitsMemory, fmt.Sprintf("memory %q is more than %q; %s", l.Memory, p.Limits.Memory, how))
		}
	}
	if l.Pids != 0 {
		switch n, err := checkPids(l.Pids); {
		case err != nil:
			p.ignore(pp, KeyLimitsPids, err.Error())
		case lowerLimit(n, cur.pids):
			p.Limits.Pids, p.Sources[KeyLimitsPids] = l.Pids, src
		case n != cur.pids:
			p.ignore(pp, KeyLimitsPids, fmt.Sprintf("pids %d is more than %d; %s", l.Pids, p.Limits.Pids, how))
		}
	}
	if l.CPU != "" {
		switch c, err := parseCPU(l.CPU); {
		case err != nil:
			p.ignore(pp, KeyLimitsCPU, err.Error())
		case lowerLimit(c, cur.cpuPercent):
			p.Limits.CPU, p.Sources[KeyLimitsCPU] = l.CPU, src
		case c != cur.cpuPercent:
			p.ignore(pp, KeyLimitsCPU, fmt.Sprintf("cpu %q is more than %q; %s", l.CPU, p.Limits.CPU, how))
		}
	}
	if r := pp.Layer.LimitsRequired; r != nil {
		if *r {
			p.LimitsRequired, p.Sources[KeyLimitsRequired] = true, src
		} else if p.LimitsRequired {
			p.ignore(pp, KeyLimitsRequired, "required = false loosens required = true; "+how)
		}
	}
}

// applyModeImplications makes the network follow the mode: read-only has none,
// full-access has it.
func (p *Policy) applyModeImplications() {
	switch p.Mode {
	case ModeReadOnly:
		if p.Network != NetworkOff {
			p.Network = NetworkOff
			p.Sources[KeyNetwork] = Source{p.Sources[KeyMode].Layer, "forced off by sandbox_mode read-only (" + p.Sources[KeyMode].String() + ")"}
		}
	case ModeFullAccess:
		if p.Network != NetworkOn {
			p.Network = NetworkOn
			p.Sources[KeyNetwork] = Source{p.Sources[KeyMode].Layer, "implied by sandbox_mode full-access (" + p.Sources[KeyMode].String() + ")"}
		}
	}
}

// fileDetail names the config file in sources.
func (in Inputs) fileDetail() string {
	if in.FilePath != "" {
		return "config " + in.FilePath
	}
	return "config file"
}

// fileSource is the source of a key set by the config file.
func (in Inputs) fileSource(key string) Source { return Source{LayerFile, in.fileDetail() + " " + key} }

// flagSource is the source of a value the flag layer set: a flag, or the recorded policy.
func (in Inputs) flagSource(name string) Source {
	if in.Recorded != "" {
		return Source{LayerFlag, in.Recorded}
	}
	return Source{LayerFlag, "flag --" + name}
}

// applyUntrusted applies the tightening parts of an untrusted project file and
// records the rest as ignored.
func (p *Policy) applyUntrusted(pp *ProjectPolicy) {
	l := pp.Layer
	src := Source{LayerProject, "project " + pp.File}
	how := "project policy may only tighten; set " + EnvTrustProject + "=1 in the environment to trust it"
	if l.Mode != nil {
		m, err := ParseMode(*l.Mode)
		switch {
		case err != nil:
			p.ignore(pp, KeyMode, err.Error())
		case m.strictness() >= p.Mode.strictness():
			p.Mode = m // equal: the project is why it stays so, whatever set it first
			p.Sources[KeyMode] = src
		case m != p.Mode:
			p.ignore(pp, KeyMode, fmt.Sprintf("%q is less strict than %q; %s", m, p.Mode, how))
		}
	}
	if l.Network != nil {
		// on → allowlist → off: a project may only move towards off.
		switch n := l.Network.Norm(); {
		case n.Rank() < p.Network.Rank():
			p.Network = n
			p.Sources[KeyNetwork] = src
		case n.Rank() > p.Network.Rank():
			p.ignore(pp, KeyNetwork, fmt.Sprintf("network %q is less strict than %q; %s", n, p.Network, how))
		}
	}
	if !l.NetworkTable.isZero() && p.Allowlist != nil {
		lists := *p.Allowlist
		refused := lists.tighten(l.NetworkTable)
		for _, key := range slices.Sorted(maps.Keys(refused)) {
			p.ignore(pp, key, refused[key]+"; "+how)
		}
		p.Allowlist = &lists
		p.Sources[KeyNetworkLists] = src
	}
	if l.WritableRoots != nil {
		p.ignore(pp, KeyWritableRoots, "extra writable roots are not tightening; "+how)
	}
	if l.Backend != nil {
		b, err := ParseBackend(*l.Backend)
		switch {
		case err != nil:
			p.ignore(pp, KeyBackend, err.Error())
		case b == BackendOS && p.Backend == BackendAuto:
			p.Backend = b
			p.Sources[KeyBackend] = src
		case b != p.Backend:
			p.ignore(pp, KeyBackend, fmt.Sprintf("%q is not stricter than %q; %s", b, p.Backend, how))
		}
	}
	if l.ExecutionMode != nil {
		p.ignore(pp, KeyExecutionMode, "execution mode is chosen by the user, not the project; "+how)
	}
	p.tightenLimits(pp, src, how)
}

// realDir resolves dir (relative to base) to a real, existing directory.
func realDir(dir, base string) (string, error) {
	if !filepath.IsAbs(dir) {
		if base == "" {
			abs, err := filepath.Abs(dir)
			if err != nil {
				return "", err
			}
			dir = abs
		} else {
			dir = filepath.Join(base, dir)
		}
	}
	real, _, err := realpath.Resolve(dir, realpath.Options{})
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real) // also what says a missing directory is missing
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("not a directory")
	}
	return real, nil
}

// expandHome expands a leading ~ or ~/.
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

func (p *Policy) ignore(pp *ProjectPolicy, key, reason string) {
	p.Ignored = append(p.Ignored, Ignored{File: pp.File, Key: key, Reason: reason})
}
