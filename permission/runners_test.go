package permission

import (
	"context"
	"strings"
	"testing"
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
