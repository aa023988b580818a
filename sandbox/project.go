package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pelletier/go-toml/v2"

	"github.com/airlock-app/airlock/api"
)

// ProjectPolicyFile is where a workspace or department directory keeps its untrusted policy.
const ProjectPolicyFile = ".airlock/policy.toml"

// maxProjectPolicySize bounds what LoadProjectPolicy reads from an untrusted checkout.
const maxProjectPolicySize = 1 << 20

// ProjectPolicy is the sandbox part of one untrusted project policy file.
type ProjectPolicy struct {
	// Dir is the directory holding .airlock/policy.toml.
	Dir string
	// File is the policy file's path.
	File string
	// Layer holds the sandbox settings the file asks for; Resolve decides what applies.
	Layer Layer
	// Ignored lists what was ignored already while loading (wrong types) and, after
	// Resolve, what was not applied.
	Ignored []Ignored
	// Data is the file as read, for the other packages' keys (permission's rules): the
	// file is read once, so every part judges the same bytes.
	Data []byte
}

func (pp *ProjectPolicy) ignore(key, reason string) {
	pp.Ignored = append(pp.Ignored, Ignored{File: pp.File, Key: key, Reason: reason})
}

// projectFile mirrors the sandbox keys of config.toml.
type projectFile struct {
	SandboxMode   any `toml:"sandbox_mode"`
	ExecutionMode any `toml:"execution_mode"`
	Workspace     struct {
		WritableRoots any `toml:"writable_roots"`
		NetworkAccess any `toml:"network_access"`
	} `toml:"sandbox_workspace_write"`
	Isolation struct {
		Backend   any `toml:"backend"`
		Protected any `toml:"protected"`
	} `toml:"isolation"`
	Network struct {
		AllowedDomains any `toml:"allowed_domains"`
		DeniedDomains  any `toml:"denied_domains"`
		AskUnknown     any `toml:"ask_unknown"`
		AllowLocal     any `toml:"allow_local"`
	} `toml:"network"`
	Limits struct {
		Memory   any `toml:"memory"`
		Pids     any `toml:"pids"`
		CPU      any `toml:"cpu"`
		Required any `toml:"required"`
	} `toml:"limits"`
}

// LoadProjectPolicy reads dir/.airlock/policy.toml. It returns (nil, nil) when
// there is no such file. Keys other than the sandbox's are left to their owners
// (permission reads its rules from the same file); sandbox keys of the wrong type
// are recorded in Ignored. A file that is not valid TOML is an error.
func LoadProjectPolicy(dir string) (*ProjectPolicy, error) {
	file := filepath.Join(dir, ProjectPolicyFile)
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load project policy %s: %w", file, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("load project policy %s: not a regular file", file)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProjectPolicySize+1))
	if err != nil {
		return nil, fmt.Errorf("load project policy %s: %w", file, err)
	}
	if len(data) > maxProjectPolicySize {
		return nil, fmt.Errorf("load project policy %s: larger than %d bytes", file, maxProjectPolicySize)
	}
	var raw projectFile
	if err := toml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("load project policy %s: %w (fix or remove the file)", file, err)
	}
	pp := &ProjectPolicy{Dir: dir, File: file, Data: data}
	pp.Layer.Mode = pp.str(KeyMode, raw.SandboxMode)
	pp.Layer.ExecutionMode = pp.str(KeyExecutionMode, raw.ExecutionMode)
	pp.Layer.Backend = pp.str("isolation.backend", raw.Isolation.Backend)
	pp.Layer.WritableRoots = pp.list("sandbox_workspace_write.writable_roots", raw.Workspace.WritableRoots)
	pp.Layer.Protected = pp.list("isolation.protected", raw.Isolation.Protected)
	for i, e := range pp.Layer.Protected {
		if !filepath.IsAbs(e) && e != "" {
			pp.Layer.Protected[i] = filepath.Join(dir, e)
		}
	}
	if v := raw.Workspace.NetworkAccess; v != nil {
		if n, ok := networkValue(v); ok {
			pp.Layer.Network = &n
		} else {
			pp.ignore("sandbox_workspace_write.network_access", fmt.Sprintf("want false, \"allowlist\" or true, got %v", v))
		}
	}
	t := &pp.Layer.NetworkTable
	t.AllowedDomains = pp.list("network.allowed_domains", raw.Network.AllowedDomains)
	t.DeniedDomains = pp.list("network.denied_domains", raw.Network.DeniedDomains)
	t.AskUnknown = pp.boolean("network.ask_unknown", raw.Network.AskUnknown)
	t.AllowLocal = pp.boolean("network.allow_local", raw.Network.AllowLocal)
	if m := pp.str(KeyLimitsMemory, raw.Limits.Memory); m != nil {
		pp.Layer.Limits.Memory = *m
	}
	if c := pp.str(KeyLimitsCPU, raw.Limits.CPU); c != nil {
		pp.Layer.Limits.CPU = *c
	}
	if v := raw.Limits.Pids; v != nil {
		if n, ok := v.(int64); ok && n > 0 && n <= 1<<31-1 {
			pp.Layer.Limits.Pids = int(n)
		} else {
			pp.ignore(KeyLimitsPids, fmt.Sprintf("want a positive whole number, got %v", v))
		}
	}
	pp.Layer.LimitsRequired = pp.boolean(KeyLimitsRequired, raw.Limits.Required)
	return pp, nil
}

// networkValue reads network_access as a TOML file writes it: false, true or "allowlist".
func networkValue(v any) (NetworkMode, bool) {
	switch x := v.(type) {
	case bool:
		return api.NetworkFromBool(x), true
	case string:
		if x == string(NetworkAllowlist) {
			return NetworkAllowlist, true
		}
	}
	return "", false
}

func (pp *ProjectPolicy) boolean(key string, v any) *bool {
	if v == nil {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		pp.ignore(key, fmt.Sprintf("want true or false, got %v", v))
		return nil
	}
	return &b
}

func (pp *ProjectPolicy) str(key string, v any) *string {
	if v == nil {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		pp.ignore(key, fmt.Sprintf("want a string, got %v", v))
		return nil
	}
	return &s
}

func (pp *ProjectPolicy) list(key string, v any) []string {
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		pp.ignore(key, fmt.Sprintf("want a list of strings, got %v", v))
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			pp.ignore(key, fmt.Sprintf("entry %v is not a string", it))
			continue
		}
		out = append(out, s)
	}
	return out
}
