package permission

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/memchild"
	"github.com/airlock-app/airlock/sandbox"
)

// The reported attack, `cd a;` × N then `ls`, went through the broker's analysis (the
// classifier and the sandbox's write analysis) in time and memory exponential in N: 122
// bytes took the core to 2.2 GB. Through the real broker (SQLite, the sandbox's
// isolation step) it now costs what its length does, and what the analysis gives up on
// is P2, denied under never. The child's memory is capped so a regression fails here.
func TestBrokerAnalysisOfCdChainsIsBounded(t *testing.T) {
	if !memchild.Run(t, memchild.Limits{RSS: 1 << 30, Timeout: 5 * time.Minute}) {
		return
	}
	cwd := t.TempDir()
	pol := sandboxPolicy(t, cwd)
	iso := SandboxIsolation{PolicyFor: func(context.Context, Request) (sandbox.Policy, error) { return pol, nil }}
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{ApprovalPolicy: "never"}), func(o *BrokerOptions) { o.Isolation = iso })
	ctx := context.Background()
	for _, tt := range []struct {
		n     int
		tail  string
		allow bool
	}{
		{24, "ls", true}, {26, "ls", true}, {40, "ls", true},
		{24, "touch x", false}, // relative write after more cds than are tracked: refused
		{5000, "ls", false},    // deeper than is followed: too complex, P2
		{50000, "ls", false},
	} {
		req := bash(strings.Repeat("cd a;", tt.n) + tt.tail)
		req.Context.Cwd = cwd
		d := b.Check(ctx, req).Decision
		if (d.Verdict == Allow) != tt.allow {
			t.Errorf("cd a; × %d then %s: %s by %s (%v), want allowed=%v", tt.n, tt.tail, d.Verdict, d.Layer, d.Reasons, tt.allow)
		}
		if tt.n == 5000 && !strings.Contains(strings.Join(d.Reasons, "\n"), "too complex for Airlock to analyse") {
			t.Errorf("cd a; × 5000: reasons %v do not say it is too complex", d.Reasons)
		}
	}
}
