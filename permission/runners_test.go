package permission

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/permission/preflight"
)

// Each of these deleted the home directory under approval_policy never. Through the real
// broker (SQLite) each is now P2 and is not allowed under never; the default policy asks.
func TestHiddenRunnersNotAllowedUnderNever(t *testing.T) {
	ctx := context.Background()
	never, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{ApprovalPolicy: "never"}))
	def, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}))
	for _, cmd := range []string{
		`awk 'BEGIN{system("rm -rf ~")}'`,
		`sed -n '1e rm -rf ~' f`,
		`git -c alias.x='!rm -rf ~' x`,
		`gdb -batch -ex 'shell rm -rf ~'`,
		`vim -es -c '!rm -rf ~'`,
		"ed <<< '!rm -rf ~'",
		"make -f /dev/stdin <<< $'all:\\n\\trm -rf ~'",
		`sed 's/.*/rm -rf ~/e' f`,
		`git -c core.sshCommand='rm -rf ~' fetch`,
	} {
		req := bash(cmd)
		if d := never.Check(ctx, req).Decision; d.Verdict == Allow {
			t.Errorf("%s: allowed under never (%s, %v)", cmd, d.Layer, d.Reasons)
		}
		d := def.Check(ctx, req).Decision
		if d.Tier != P2 || d.Verdict == Allow || !strings.Contains(strings.Join(d.Reasons, "\n"), "Airlock cannot see what this runs") {
			t.Errorf("%s: %s at %s (%v), want a P2 that says Airlock cannot see what it runs", cmd, d.Verdict, d.Tier, d.Reasons)
		}
	}
}

// A write to Claude Code's settings through a symlinked .claude directory (to the link's
// target) is self-approval through the broker too: never a silent allow.
func TestAgentSettingsThroughALinkedDir(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	proj, cfg := home+"/proj", home+"/cfg"
	for _, d := range []string{proj, cfg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(cfg, proj+"/.claude"); err != nil {
		t.Fatal(err)
	}
	withHome := func(o *BrokerOptions) { o.Preflight = preflight.Options{Home: home} }
	never, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{ApprovalPolicy: "never"}), withHome)
	for _, req := range []Request{
		{Tool: ToolBash, Params: params("command", `echo '{"hooks":{}}' > ../cfg/settings.json`)},
		{Tool: ToolWriteFile, Params: params("path", cfg+"/settings.local.json", "content", "{}")},
	} {
		req.Context = Context{Session: "claude:s1", Department: "dev", Cwd: proj, Policy: PolicySummary{Mode: "full-access"}}
		d := never.Check(ctx, req).Decision
		if d.Verdict == Allow || d.Kind != KindSelfApproval {
			t.Errorf("%s %s: %s (%s, kind %q, %v), want a self-approval refusal", req.Tool, req.Params, d.Verdict, d.Layer, d.Kind, d.Reasons)
		}
	}
}
