package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// A command over the parser's limits is denied with what to do instead, never analysed.
func TestAnalyzeCommandOverLimits(t *testing.T) {
	p, _ := testPolicy(t, "workspace-write", false)
	for _, cmd := range []string{
		strings.Repeat("$(", 29<<10) + "x" + strings.Repeat(")", 29<<10),
		"echo " + strings.Repeat("a", 300<<10),
	} {
		_, err := p.AnalyzeCommand(cmd, "")
		var d *IsolationDeniedError
		if !errors.As(err, &d) || d.Reason != ReasonBash || !strings.Contains(d.Why, "cannot be checked") || !strings.Contains(d.Hint, "split it") {
			t.Errorf("AnalyzeCommand(%.20q…) = %v, want a bash denial that says how to split it", cmd, err)
		}
	}
}
