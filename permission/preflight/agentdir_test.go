package preflight

import (
	"os"
	"path/filepath"
	"testing"
)

// Claude Code's settings written through a symlinked .claude (or to the link's target,
// or through a link made in the same line) are self-approval, like a write to
// .claude/settings.json itself.
func TestAgentSettingsThroughLinks(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	cfg := filepath.Join(home, "cfg")
	for _, d := range []string{proj, cfg, filepath.Join(home, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(cfg, filepath.Join(proj, ".claude")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(home, ".claude", "settings.json"), filepath.Join(proj, "notes.json"))
	os.Symlink(filepath.Join(home, ".claude"), filepath.Join(proj, "c"))
	opts := Options{Home: home, Cwd: proj}
	for _, cmd := range []string{
		"echo '{}' > .claude/settings.json",
		"echo '{}' > " + cfg + "/settings.json", // the link's target
		"echo '{}' > ../cfg/settings.local.json",
		"cp evil.json ../cfg/settings.json",
		"echo '{}' > notes.json", // a link to ~/.claude/settings.json
		"tee c/settings.json < evil.json",
		"ln -s ~/.claude x && echo '{}' > x/settings.json",
		"cp -r evil/. ~/.claude",
		"rm -rf .claude",
	} {
		if a := Analyze(cmd, opts); !a.SelfApproval() {
			t.Errorf("%s: %v, want self-approval", cmd, a.Reasons())
		}
	}
	for _, p := range []string{cfg + "/settings.json", "notes.json", "c/settings.local.json"} {
		if fs := FileWrite(p, proj, Options{Home: home}); !(Analysis{Findings: fs}).SelfApproval() {
			t.Errorf("FileWrite(%s): %v, want self-approval", p, fs)
		}
	}
	for _, cmd := range []string{"echo x > " + cfg + "/other.txt", "echo x > out.json", "cat .claude/settings.json"} {
		if a := Analyze(cmd, opts); a.SelfApproval() {
			t.Errorf("%s: %v, want no self-approval", cmd, a.Reasons())
		}
	}
}
