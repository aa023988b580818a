package vminstall

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// stateFile records the artifacts installed under Dir, written after each verified one.
const stateFile = "installed.json"

// Installed is the installed image and runtime the runner boots.
type Installed struct {
	ManifestVersion string              `json:"manifestVersion"`
	Artifacts       map[string]Artifact `json:"artifacts"` // by kind
}

// path is where an artifact lives under dir.
func artifactPath(dir string, a Artifact) string { return filepath.Join(dir, a.Kind, a.Name) }

// Path returns the local file of the installed artifact of kind, "" when none.
func (in Installed) Path(dir, kind string) string {
	a, ok := in.Artifacts[kind]
	if !ok {
		return ""
	}
	return artifactPath(dir, a)
}

// present reports whether kind is recorded and its file has the recorded size.
func (in Installed) present(dir, kind string) bool {
	a, ok := in.Artifacts[kind]
	if !ok {
		return false
	}
	st, err := os.Stat(artifactPath(dir, a))
	return err == nil && st.Mode().IsRegular() && st.Size() == a.Size
}

// LoadInstalled reads dir's state; a missing file is an empty state.
func LoadInstalled(dir string) (Installed, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return Installed{Artifacts: map[string]Artifact{}}, nil
	}
	if err != nil {
		return Installed{}, fmt.Errorf("read %s: %w", filepath.Join(dir, stateFile), err)
	}
	var in Installed
	if err := json.Unmarshal(data, &in); err != nil {
		return Installed{}, fmt.Errorf("%s is damaged (%v): delete it and install again", filepath.Join(dir, stateFile), err)
	}
	if in.Artifacts == nil {
		in.Artifacts = map[string]Artifact{}
	}
	return in, nil
}

// save writes the state atomically.
func (in Installed) save(dir string) error {
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, stateFile)); err != nil {
		return fmt.Errorf("save install state: %w", err)
	}
	syncDir(dir)
	return nil
}
