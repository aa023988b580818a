package sandboxrunner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress"
	"github.com/airlock-app/airlock/sandbox/egress/egresstest"
)

// TestApplyUnderAnAllowlistGoesThroughTheProxy: an apply whose plan needs the network,
// under network_access = "allowlist", runs in the real sandbox connected to a real
// egress proxy: curl (taking the proxy from the environment) reaches the API host the
// list allows, is refused for another, and cannot go around the proxy; each connection
// is a line of the run's output. Without an Egress hook the same run has no network.
func TestApplyUnderAnAllowlistGoesThroughTheProxy(t *testing.T) {
	needSandbox(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	var hits atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "reached %s on %s\n", r.URL.Path, r.Host)
	}))
	defer api.Close()
	allowlist := func(_ context.Context, dir string) (sandbox.Policy, error) {
		mode, n := "workspace-write", sandbox.NetworkAllowlist
		return sandbox.Resolve(sandbox.Inputs{Flags: sandbox.Layer{Mode: &mode, Network: &n}, Env: func(string) string { return "" }, Cwd: dir,
			File: sandbox.Layer{NetworkTable: sandbox.NetworkTable{AllowedDomains: []string{"api.cloud.test"}}}})
	}
	hook := func(_ ops.RunSpec, pol sandbox.Policy, log io.Writer) sandbox.Egress {
		return sandbox.Egress(egress.Hook(egress.Config{
			Allowed: pol.Allowlist.AllowedDomains, Denied: pol.Allowlist.DeniedDomains, AllowLocal: pol.Allowlist.AllowLocal,
			Resolver: egresstest.DNS{"api.cloud.test": {"203.0.113.20"}, "other.cloud.test": {"203.0.113.21"}},
			Dial:     egresstest.Dial(api.Listener.Addr().String(), false),
			Log:      func(r egress.Record) { fmt.Fprintf(log, "airlock: %s\n", r.LogLine()) },
		}))
	}
	apply := ops.RunSpec{Dir: workDir(t), Network: true, Purpose: "apply", PlanID: "op-test", Timeout: 60 * time.Second, Command: ops.Command{Shell: fmt.Sprintf(
		`curl -sS --max-time 20 http://api.cloud.test/v1/apply; echo "== other"; curl -sS --max-time 20 http://other.cloud.test/v1/apply
echo "== direct"; curl -sS --max-time 5 --noproxy '*' %s/direct; echo "direct rc=$?"`, api.URL)}}

	res, err := Runner{Policy: allowlist, Egress: hook}.Run(context.Background(), apply)
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout) + string(res.Stderr)
	t.Logf("apply output:\n%s", out)
	for _, want := range []string{
		"reached /v1/apply on api.cloud.test",
		"airlock: network: api.cloud.test:80 allow (allowed by allowed_domains)",
		"Airlock refused the connection to other.cloud.test:80: not in allowed_domains",
		"airlock: network: other.cloud.test:80 deny (not in allowed_domains)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the apply's output lacks %q", want)
		}
	}
	if strings.Contains(out, "reached /direct") || strings.Contains(out, "direct rc=0") || hits.Load() != 1 {
		t.Errorf("ESCAPE: %d requests reached the API server, want 1 (the allowed one through the proxy)", hits.Load())
	}

	// No hook: the allowlist is no network, and the run says so.
	res, err = Runner{Policy: allowlist}.Run(context.Background(), apply)
	if err != nil {
		t.Fatal(err)
	}
	out = string(res.Stdout) + string(res.Stderr)
	if strings.Contains(out, "reached") || hits.Load() != 1 || !strings.Contains(out, "the egress proxy is not connected here") {
		t.Errorf("without the proxy the apply reached something (%d requests) or did not say why:\n%s", hits.Load(), out)
	}
}
