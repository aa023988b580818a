// Package sandboxconfig turns Airlock's configuration layers (flags, the environment,
// config.toml, and the untrusted project policy files around a working directory) into
// the sandbox's resolution inputs. It links no database, so the CLI's hot paths use it.
package sandboxconfig

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/sandbox"
)

// FileLayer maps config.toml's sandbox keys onto a sandbox layer.
func FileLayer(f config.File) sandbox.Layer {
	return sandbox.Layer{
		Mode:          f.SandboxMode,
		Network:       f.SandboxWorkspaceWrite.NetworkAccess,
		WritableRoots: f.SandboxWorkspaceWrite.WritableRoots,
		Protected:     f.Isolation.Protected,
		Backend:       f.Isolation.Backend,
		ExecutionMode: f.ExecutionMode,
	}
}

// ProjectPolicies loads every .airlock/policy.toml from cwd up to the filesystem root,
// outermost first. They can only tighten, so reading more of them is never looser.
func ProjectPolicies(cwd string) ([]*sandbox.ProjectPolicy, error) {
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("project policies of %s: %w", cwd, err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	var found []*sandbox.ProjectPolicy
	for {
		pp, err := sandbox.LoadProjectPolicy(dir)
		if err != nil {
			return nil, err
		}
		if pp != nil {
			found = append([]*sandbox.ProjectPolicy{pp}, found...)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return found, nil
		}
		dir = parent
	}
}

// Resolve computes the effective sandbox policy for a run in cwd.
func Resolve(f config.File, filePath string, flags sandbox.Layer, getenv func(string) string, cwd string) (sandbox.Policy, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return sandbox.Policy{}, fmt.Errorf("working directory: %w", err)
		}
		cwd = wd
	}
	project, err := ProjectPolicies(cwd)
	if err != nil {
		return sandbox.Policy{}, err
	}
	return sandbox.Resolve(sandbox.Inputs{
		Flags: flags, Env: getenv, File: FileLayer(f), FilePath: filePath,
		Project: project, Cwd: cwd, Home: getenv("HOME"),
	})
}
