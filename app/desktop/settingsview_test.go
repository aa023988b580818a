package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/permission"
)

const personConfig = `# my settings: keep this
sandbox_mode = "workspace-write"  # safe

[sandbox_workspace_write]
# the mirror needs it sometimes
network_access = false

[[permission.rules]]
tool = "bash"
pattern = "git status *"
action = "allow"
`

func settingOf(v api.ConfigView, key string) config.Setting {
	for _, s := range v.Settings {
		if s.Key == key {
			return s
		}
	}
	return config.Setting{}
}

// Turning the network on from the window writes config.toml with the person's comments
// kept, and the new value reaches the window through config.changed.
func TestSetSettingWritesTheFileAndPublishes(t *testing.T) {
	core := openCoreWith(t, personConfig, nil)
	f := NewFacade(core)
	sub := core.Bus.Subscribe(16, api.TopicConfigChanged)
	defer sub.Close()

	v, err := f.SetSetting("sandbox_workspace_write.network_access", true)
	if err != nil {
		t.Fatal(err)
	}
	if s := settingOf(v, "sandbox_workspace_write.network_access"); s.Value != true || s.Layer != config.LayerFile {
		t.Fatalf("network after the edit = %+v; want true from the file", s)
	}
	text := readFile(t, core.Paths.ConfigFile)
	for _, want := range []string{"# my settings: keep this", "# safe", "# the mirror needs it sometimes", "network_access = true", `pattern = "git status *"`} {
		if !strings.Contains(text, want) {
			t.Errorf("config.toml lost %q:\n%s", want, text)
		}
	}
	select {
	case ev := <-sub.C:
		// The event says the file was read again; the window re-reads the view.
		var changed api.ConfigChanged
		err := json.Unmarshal(ev.Payload, &changed)
		if err != nil || changed.Path != core.Paths.ConfigFile || !changed.Valid {
			t.Fatalf("config.changed payload = %s; want the file, valid", ev.Payload)
		}
		if s := settingOf(f.ConfigView(), "sandbox_workspace_write.network_access"); s.Value != true {
			t.Fatalf("the view after config.changed = %+v; want the new value", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no config.changed after the edit")
	}

	// A list, then back to the default.
	v, err = f.SetSetting("sandbox_workspace_write.writable_roots", []any{"~/Airlock/shared", "/srv/data", "~/Airlock/shared"})
	if err != nil {
		t.Fatal(err)
	}
	if got := settingOf(v, "sandbox_workspace_write.writable_roots").Value; strings.Join(got.([]string), ",") != "~/Airlock/shared,/srv/data" {
		t.Fatalf("writable roots = %v", got)
	}
	v, err = f.ResetSetting("sandbox_workspace_write.network_access")
	if err != nil {
		t.Fatal(err)
	}
	if s := settingOf(v, "sandbox_workspace_write.network_access"); s.Value != false || s.Layer != config.LayerDefault {
		t.Fatalf("after reset = %+v; want the default", s)
	}
	if strings.Contains(readFile(t, core.Paths.ConfigFile), "network_access") {
		t.Error("reset left the key in the file")
	}
}

// Values the file would reject, or of the wrong kind, write nothing.
func TestSetSettingRefusesBadValues(t *testing.T) {
	core := openCoreWith(t, personConfig, nil)
	f := NewFacade(core)
	tests := []struct {
		key   string
		value any
		want  string
	}{
		{"approval_policy", "sometimes", "not one of"},
		{"sandbox_workspace_write.network_access", "yes", "on or off"},
		{"sandbox_workspace_write.writable_roots", []any{"relative/dir"}, "not a full path"},
		{"dispatch.concurrency", 2.5, "whole number"},
		{"dispatch.concurrency", float64(500), "between 1 and 64"},
		{"api.tcp_address", "127.0.0.1:1", "cannot be changed from the window"},
		{"hooks", "x", "cannot be changed from the window"},
	}
	for _, tt := range tests {
		_, err := f.SetSetting(tt.key, tt.value)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SetSetting(%s, %v) = %v; want an error saying %q", tt.key, tt.value, err, tt.want)
		}
	}
	if readFile(t, core.Paths.ConfigFile) != personConfig {
		t.Fatal("a refused edit changed config.toml")
	}
}

// A file saved by someone else since the core read it is not overwritten.
func TestSetSettingRefusesAFileChangedOnDisk(t *testing.T) {
	core := openCoreWith(t, personConfig, nil)
	f := NewFacade(core)
	other := strings.Replace(personConfig, `sandbox_mode = "workspace-write"`, `sandbox_mode = "read-only"`, 1)
	if err := os.WriteFile(core.Paths.ConfigFile, []byte(other), 0o640); err != nil {
		t.Fatal(err)
	}
	_, err := f.SetSetting("sandbox_workspace_write.network_access", true)
	if !errors.Is(err, config.ErrChangedOnDisk) || err.Error() != "config.toml changed on disk; reload and try again" {
		t.Fatalf("err = %v; want the changed-on-disk refusal", err)
	}
	if readFile(t, core.Paths.ConfigFile) != other {
		t.Fatal("the other change was overwritten")
	}
	// Once the core has read it (the watcher does), the edit goes through.
	core.Config.Reload()
	if _, err := f.SetSetting("sandbox_workspace_write.network_access", true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, core.Paths.ConfigFile), `sandbox_mode = "read-only"`) {
		t.Fatal("the other change was lost")
	}
}

// An environment variable still wins: the file is written, the view says who wins.
func TestSetSettingUnderAnEnvironmentVariable(t *testing.T) {
	core := openCoreWith(t, "", map[string]string{"AIRLOCK_NETWORK": "0"})
	f := NewFacade(core)
	v, err := f.SetSetting("sandbox_workspace_write.network_access", true)
	if err != nil {
		t.Fatal(err)
	}
	s := settingOf(v, "sandbox_workspace_write.network_access")
	if s.Value != false || s.Layer != config.LayerEnv || s.Detail != "AIRLOCK_NETWORK" {
		t.Fatalf("network = %+v; want off from AIRLOCK_NETWORK", s)
	}
	if !strings.Contains(readFile(t, core.Paths.ConfigFile), "network_access = true") {
		t.Fatal("the file was not written (it takes effect once the variable is gone)")
	}
	if info, _ := os.Stat(core.Paths.ConfigFile); info.Mode().Perm() != 0o600 {
		t.Errorf("a config.toml created by the window has mode %v; want 0600", info.Mode().Perm())
	}
}

func tierOf(v api.PermissionsView, tool string) api.TierRow {
	for _, r := range v.Tiers {
		if r.Tool == tool {
			return r
		}
	}
	return api.TierRow{}
}

// Tiers and rules edited in the window reach the broker at once.
func TestTiersAndRules(t *testing.T) {
	core := openCoreWith(t, personConfig, nil)
	f := NewFacade(core)
	v, err := f.PermissionsView()
	if err != nil {
		t.Fatal(err)
	}
	if r := tierOf(v, "bash"); r.Tier != "P1" || r.From != "default" || r.Default != "P1" {
		t.Fatalf("bash = %+v; want P1 by default", r)
	}
	if r := tierOf(v, "ops_apply"); r.Tier != "P2" || !r.Fixed {
		t.Fatalf("ops_apply = %+v; want P2, fixed", r)
	}
	if v.ApprovalPolicy != "on-request" || v.Reviewer != "user" || len(v.Rules) != 1 || v.Rules[0].Pattern != "git status *" {
		t.Fatalf("view = %+v", v)
	}

	v, err = f.SetTier("web_fetch", "P2")
	if err != nil {
		t.Fatal(err)
	}
	if r := tierOf(v, "web_fetch"); r.Tier != "P2" || r.From != "file" {
		t.Fatalf("web_fetch = %+v; want P2 from the file", r)
	}
	ev := core.Broker.Check(context.Background(), permission.Request{Tool: "web_fetch", Params: []byte(`{"url":"https://example.com"}`), Context: permission.Context{Cwd: t.TempDir()}})
	if ev.BaseTier != permission.P2 {
		t.Fatalf("the broker still sees web_fetch as %s", ev.BaseTier)
	}
	if _, err := f.SetTier("web_fetch", "P9"); err == nil {
		t.Fatal("tier P9 accepted")
	}
	v, err = f.SetTier("web_fetch", "")
	if err != nil {
		t.Fatal(err)
	}
	if r := tierOf(v, "web_fetch"); r.Tier != "P1" || r.From != "default" {
		t.Fatalf("web_fetch after reset = %+v", r)
	}

	v, err = f.AddRule("bash", "rm *", "deny")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rules) != 2 || v.Rules[1].Action != "deny" {
		t.Fatalf("rules = %+v", v.Rules)
	}
	if _, err := f.AddRule("bash", "x", "maybe"); err == nil {
		t.Fatal("action maybe accepted")
	}
	if _, err := f.RemoveRule(0, "bash", "not the pattern"); !errors.Is(err, config.ErrChangedOnDisk) {
		t.Fatalf("removing a rule that does not match = %v; want a refusal", err)
	}
	v, err = f.RemoveRule(0, "bash", "git status *")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rules) != 1 || v.Rules[0].Pattern != "rm *" {
		t.Fatalf("rules after removing the first = %+v", v.Rules)
	}
	text := readFile(t, core.Paths.ConfigFile)
	if !strings.Contains(text, "# my settings: keep this") || strings.Contains(text, "git status") {
		t.Fatalf("config.toml:\n%s", text)
	}
}

// Revoking a grant in the window: it disappears, and the next identical request asks.
func TestRevokeGrant(t *testing.T) {
	core, home := openCore(t)
	f := NewFacade(core)
	cwd := filepath.Join(home, "work")
	first := ask(t, core, writeReq("g1", cwd))
	waitPending(t, f, "g1")
	if err := f.Answer("g1", true, "always", ""); err != nil {
		t.Fatal(err)
	}
	<-first
	v, err := f.PermissionsView()
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Grants) != 1 || v.Grants[0].Tool != "write_file" || v.Grants[0].Scope != "always" || v.Grants[0].CreatedBy != "window" {
		t.Fatalf("grants = %+v; want the one Allow always made", v.Grants)
	}
	v, err = f.RevokeGrant(v.Grants[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Grants) != 0 {
		t.Fatalf("grants after revoking = %+v", v.Grants)
	}
	if _, err := f.RevokeGrant("g-nonexistent"); err == nil || !strings.Contains(err.Error(), "grant not found") {
		t.Fatalf("revoking an unknown grant = %v", err)
	}
	again := ask(t, core, writeReq("g2", cwd))
	waitPending(t, f, "g2")
	if err := f.Answer("g2", false, "", ""); err != nil {
		t.Fatal(err)
	}
	if d := <-again; d.Verdict != permission.Deny {
		t.Fatalf("decision = %+v", d)
	}
}

func TestAgentHooks(t *testing.T) {
	home := t.TempDir()
	got := agentHooks(home)
	if len(got) != 3 {
		t.Fatalf("agents = %+v", got)
	}
	for _, a := range got {
		if a.Installed || a.Install == "" || a.Meaning == "" || !strings.Contains(a.Detail, "yet") {
			t.Errorf("nothing installed, yet %+v", a)
		}
	}
	must := func(path, text string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.Join(home, ".claude", "settings.json"), `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "airlock hook claude --wait 590s", "timeout": 600}]}]}}`)
	must(filepath.Join(home, ".claude.json"), `{"mcpServers": {"gov": {"command": "/usr/local/bin/airlock", "args": ["mcp", "--department", "x"]}}}`)
	must(filepath.Join(home, ".codex", "config.toml"), "[mcp_servers.other]\ncommand = \"npx\"\nargs = [\"mcp\"]\n")
	got = agentHooks(home)
	if !got[0].Installed || !strings.Contains(got[0].Detail, "Bash") {
		t.Errorf("claude hook = %+v", got[0])
	}
	if !got[1].Installed || !strings.Contains(got[1].Detail, `"gov"`) {
		t.Errorf("claude mcp = %+v", got[1])
	}
	if got[2].Installed || !strings.Contains(got[2].Detail, "no [mcp_servers]") {
		t.Errorf("codex = %+v", got[2])
	}
	must(filepath.Join(home, ".claude", "settings.json"), `{not json`)
	if got = agentHooks(home); got[0].Installed || !strings.Contains(got[0].Detail, "not valid JSON") {
		t.Errorf("broken settings.json = %+v", got[0])
	}
}

// The hooks Airlock runs itself come from config.toml.
func TestHooksView(t *testing.T) {
	core := openCoreWith(t, "[[hooks.before_tool_use]]\ncommand = [\"/usr/local/bin/check\", \"--strict\"]\ntools = [\"bash\"]\n", nil)
	v := NewFacade(core).HooksView()
	if len(v.Hooks) != 1 || v.Hooks[0].When != "before_tool_use" || v.Hooks[0].Command[1] != "--strict" || v.Hooks[0].Tools[0] != "bash" {
		t.Fatalf("hooks = %+v", v.Hooks)
	}
	if len(v.Agents) != 3 {
		t.Fatalf("agents = %+v", v.Agents)
	}
}

// Quick edits from the window, one after the other or at once, all land: the window's
// own writes are never mistaken for someone else's.
func TestQuickEditsAllLand(t *testing.T) {
	core := openCoreWith(t, personConfig, nil)
	f := NewFacade(core)
	tools := []string{"a", "b", "c", "d", "e", "f"}
	errs := make(chan error, len(tools))
	for _, tool := range tools {
		go func() {
			_, err := f.SetTier(tool, "P2")
			errs <- err
		}()
	}
	for range tools {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	v, err := f.PermissionsView()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if r := tierOf(v, tool); r.Tier != "P2" || r.From != "file" {
			t.Errorf("%s = %+v; want P2 from the file", tool, r)
		}
	}
	if !strings.Contains(readFile(t, core.Paths.ConfigFile), "# my settings: keep this") {
		t.Error("comment lost")
	}
}

// While config.toml is broken, an edit from the window is refused with the file's own
// mistakes, and the file is left for the person to fix.
func TestSetSettingOnABrokenFile(t *testing.T) {
	core := openCoreWith(t, personConfig, nil)
	f := NewFacade(core)
	broken := "approval_policy = \"sometimes\"\n" + personConfig
	if err := os.WriteFile(core.Paths.ConfigFile, []byte(broken), 0o640); err != nil {
		t.Fatal(err)
	}
	if st := core.Config.Reload(); st.Error == nil {
		t.Fatal("the broken file loaded")
	}
	_, err := f.SetSetting("sandbox_workspace_write.network_access", true)
	if err == nil || !strings.Contains(err.Error(), "was not written") || !strings.Contains(err.Error(), "sometimes") {
		t.Fatalf("err = %v; want the file's own mistake and that nothing was written", err)
	}
	if readFile(t, core.Paths.ConfigFile) != broken {
		t.Fatal("the broken file was changed")
	}
}
