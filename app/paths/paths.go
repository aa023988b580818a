// Package paths computes where Airlock keeps its files.
package paths

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/airlock-app/airlock/api"
)

// Paths are the places on disk (README, "Where data lives"). AIRLOCK_HOME, when set, holds all of
// them (tests and scripts run isolated instances side by side); otherwise XDG.
type Paths = api.Paths

// Resolve computes the paths from the environment, without touching the disk.
func Resolve(getenv func(string) string) (Paths, error) {
	if home := getenv("AIRLOCK_HOME"); home != "" {
		if !filepath.IsAbs(home) {
			abs, err := filepath.Abs(home)
			if err != nil {
				return Paths{}, fmt.Errorf("AIRLOCK_HOME %q: %w", home, err)
			}
			home = abs
		}
		return Paths{
			ConfigFile: filepath.Join(home, "config", "config.toml"),
			DataDir:    filepath.Join(home, "data"),
			Database:   filepath.Join(home, "data", "airlock.db"),
			RunLogs:    filepath.Join(home, "state", "runs"),
			SandboxDir: filepath.Join(home, "data", "sandbox"),
			RuntimeDir: filepath.Join(home, "run"),
			Socket:     filepath.Join(home, "run", "airlock.sock"),
			AgentRuns:  filepath.Join(home, "agent-runs"),
		}, nil
	}
	userHome := getenv("HOME")
	if userHome == "" {
		return Paths{}, errors.New("neither AIRLOCK_HOME nor HOME is set: set one of them to say where Airlock keeps its files")
	}
	xdg := func(name, fallback string) string {
		if v := getenv(name); v != "" && filepath.IsAbs(v) {
			return v
		}
		return filepath.Join(userHome, fallback)
	}
	config := filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "airlock")
	data := filepath.Join(xdg("XDG_DATA_HOME", ".local/share"), "airlock")
	state := filepath.Join(xdg("XDG_STATE_HOME", ".local/state"), "airlock")
	runtimeBase := getenv("XDG_RUNTIME_DIR")
	if runtimeBase == "" || !filepath.IsAbs(runtimeBase) {
		// No per-user runtime directory (a bare container, a cron shell): fall back to a
		// per-uid directory under the state dir, which is private to the user as well.
		runtimeBase = filepath.Join(state, "run-"+strconv.Itoa(os.Getuid()))
	}
	runtime := filepath.Join(runtimeBase, "airlock")
	return Paths{
		ConfigFile: filepath.Join(config, "config.toml"),
		DataDir:    data,
		Database:   filepath.Join(data, "airlock.db"),
		RunLogs:    filepath.Join(state, "runs"),
		SandboxDir: filepath.Join(data, "sandbox"),
		RuntimeDir: runtime,
		Socket:     filepath.Join(runtime, "airlock.sock"),
		// A cache, not the data directory: hidden from every sandbox as Airlock's state
		// is, but apart from it, so that an agent task's run can reveal its own.
		AgentRuns: filepath.Join(xdg("XDG_CACHE_HOME", ".cache"), "airlock", "agent-runs"),
	}, nil
}

// Ensure creates p's directories, the runtime one private to the user (0700).
func Ensure(p Paths) error {
	for _, dir := range []string{filepath.Dir(p.ConfigFile), p.DataDir, p.RunLogs, p.SandboxDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(p.RuntimeDir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", p.RuntimeDir, err)
	}
	// Made before any sandbox starts: a sandbox hides what exists when it starts, so the
	// agent tasks' run directories are hidden from one that started before the first.
	if p.AgentRuns != "" {
		if err := os.MkdirAll(p.AgentRuns, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", p.AgentRuns, err)
		}
	}
	// MkdirAll keeps the mode of an existing directory: tighten it, the socket's
	// privacy rests on it.
	if err := os.Chmod(p.RuntimeDir, 0o700); err != nil {
		return fmt.Errorf("make %s private: %w", p.RuntimeDir, err)
	}
	return nil
}
