package desktop

import (
	"slices"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/app/config"
)

// TestSetNetworkFromTheWindow: Settings writes network_access as config.toml spells it
// (false, "allowlist", true), shows it with its layer, and writes the [network] lists
// only when the egress proxy's parser accepts every entry.
func TestSetNetworkFromTheWindow(t *testing.T) {
	core := openCoreWith(t, personConfig, nil)
	f := NewFacade(core)
	v, err := f.SetSetting("sandbox_workspace_write.network_access", "allowlist")
	if err != nil {
		t.Fatal(err)
	}
	if s := settingOf(v, "sandbox_workspace_write.network_access"); s.Value != "allowlist" || s.Layer != config.LayerFile {
		t.Fatalf("network after the edit = %+v", s)
	}
	if text := readFile(t, core.Paths.ConfigFile); !strings.Contains(text, `network_access = "allowlist"`) || !strings.Contains(text, "# my settings: keep this") {
		t.Fatalf("config.toml:\n%s", text)
	}
	for value, want := range map[any]any{"on": true, "off": false, true: true} {
		v, err := f.SetSetting("sandbox_workspace_write.network_access", value)
		if err != nil || settingOf(v, "sandbox_workspace_write.network_access").Value != want {
			t.Errorf("SetSetting(%v): %v %+v", value, err, settingOf(v, "sandbox_workspace_write.network_access"))
		}
	}
	v, err = f.SetSetting("network.allowed_domains", []any{"api.anthropic.com", " *.npmjs.org ", "api.anthropic.com"})
	if err != nil {
		t.Fatal(err)
	}
	if s := settingOf(v, "network.allowed_domains"); !slices.Equal(s.Value.([]string), []string{"api.anthropic.com", "*.npmjs.org"}) || s.Layer != config.LayerFile {
		t.Fatalf("allowed_domains after the edit = %+v", s)
	}
	before := readFile(t, core.Paths.ConfigFile)
	if _, err := f.SetSetting("network.denied_domains", []any{"exa*mple.com"}); err == nil || !strings.Contains(err.Error(), "exa*mple.com") {
		t.Errorf("a bad domain rule: %v", err)
	}
	if readFile(t, core.Paths.ConfigFile) != before {
		t.Error("a refused domain list changed config.toml")
	}
}
