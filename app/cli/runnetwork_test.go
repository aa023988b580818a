package cli

import (
	"strings"
	"testing"
)

// `airlock runs show ID` of an allowlist run prints where it connected, per domain, with
// refused connections in capitals; a run that was not under an allowlist prints no
// network section and does not ask for one.
func TestRunsShowPrintsTheNetworkSummary(t *testing.T) {
	run := func(id, network string) string {
		return `{"id":` + id + `,"task_id":1,"task_name":"fetch","status":"succeeded","trigger":"manual","cwd":"/w",
			"scheduled_at":"2026-12-01T10:00:00Z","policy":{"sandbox_mode":"workspace-write","network":"` + network + `","approval_policy":"on-request","backend":"auto","execution_mode":"local"}}`
	}
	home := t.TempDir()
	serveOps(t, home, map[string]string{
		"GET /v1/runs/7": run("7", "allowlist"),
		"GET /v1/runs/8": run("8", "off"),
		"GET /v1/runs/7/network": `{"run_id":7,"domains":[
			{"domain":"api.example.com","ports":[443],"connections":2,"allowed":2,"refused":0,"asked":0,"bytes_up":1200,"bytes_down":48000,"duration_ms":350,"last_reason":"allowed by allowed_domains"},
			{"domain":"tracker.test","ports":[80,443],"connections":1,"allowed":0,"refused":1,"asked":1,"bytes_up":0,"bytes_down":0,"duration_ms":0,"last_reason":"denied by the person"}]}`,
	})
	out, errb, err := runCLI(home, "runs", "show", "7")
	if err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	got := out.String()
	for _, want := range []string{
		"network    where the run connected, through the egress proxy:\n",
		"DOMAIN",
		"api.example.com  443",
		"2 allowed",
		"1.2 KB",
		"48.0 KB",
		"350ms",
		"tracker.test     80,443",
		"1 REFUSED, 1 asked",
		"denied by the person",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("runs show lacks %q:\n%s", want, got)
		}
	}
	out, errb, err = runCLI(home, "runs", "show", "8")
	if err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	if strings.Contains(out.String(), "network ") {
		t.Errorf("a run with the network off shows a network section:\n%s", out)
	}
}
