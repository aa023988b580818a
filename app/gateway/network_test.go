package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// TestWebFetchUnderAnAllowlist: until the egress proxy is connected, web_fetch under
// network_access = "allowlist" reaches nothing — not even an allowed domain — and says
// why; the session's requests carry the allowlist to the broker.
func TestWebFetchUnderAnAllowlist(t *testing.T) {
	hit := false
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer web.Close()
	ws := t.TempDir()
	allowlist := sandbox.NetworkAllowlist
	pol, err := sandbox.Resolve(sandbox.Inputs{Cwd: ws, Env: func(string) string { return "" }, Home: t.TempDir(),
		Flags: sandbox.Layer{Network: &allowlist}, File: sandbox.Layer{NetworkTable: sandbox.NetworkTable{AllowedDomains: []string{"127.0.0.1"}, AllowLocal: new(true)}}})
	if err != nil {
		t.Fatal(err)
	}
	b := &recordingBroker{decide: func(r api.Request) api.Decision { return api.Decision{Verdict: api.Allow, Tier: "P1", Layer: "grant"} }}
	cs := connect(t, Options{Policy: pol, Broker: b})
	res, text := callText(t, cs, api.ToolWebFetch, map[string]any{"url": web.URL + "/x"})
	if !res.IsError || !strings.Contains(text, "proxy is not connected") {
		t.Fatalf("web_fetch under an allowlist: %v %q", res.IsError, text)
	}
	if hit {
		t.Fatal("web_fetch reached the server under an allowlist without its proxy")
	}
	for _, r := range b.asked {
		if r.Context.Policy.Network != api.NetworkAllowlist {
			t.Errorf("the session's request says network %q", r.Context.Policy.Network)
		}
	}
}
