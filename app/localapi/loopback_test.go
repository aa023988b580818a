package localapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// The guard with loopback origins (airlock mcp --http's): the Host must be loopback, an
// Origin absent or on loopback, and the token right; each refusal names its way out.
func TestLoopbackGuard(t *testing.T) {
	token := strings.Repeat("t", 43)
	g := LoopbackGuard{Token: token, LoopbackOrigins: true, OriginHint: "origin hint", TokenHint: "token hint"}
	for _, tc := range []struct {
		name, host, origin, auth string
		code                     string // "" = passes
	}{
		{"token, no origin", "127.0.0.1:9", "", "Bearer " + token, ""},
		{"localhost host", "localhost:9", "", "Bearer " + token, ""},
		{"ipv6 host", "[::1]:9", "", "Bearer " + token, ""},
		{"loopback origin", "127.0.0.1:9", "http://localhost:5173", "Bearer " + token, ""},
		{"loopback ip origin", "127.0.0.1:9", "https://127.0.0.1", "Bearer " + token, ""},
		{"no token", "127.0.0.1:9", "", "", "bad_token"},
		{"wrong token", "127.0.0.1:9", "", "Bearer " + strings.Repeat("x", 43), "bad_token"},
		{"token prefix", "127.0.0.1:9", "", "Bearer " + token[:20], "bad_token"},
		{"not bearer", "127.0.0.1:9", "", "Basic " + token, "bad_token"},
		{"bare token", "127.0.0.1:9", "", token, "bad_token"},
		{"foreign origin", "127.0.0.1:9", "https://evil.example", "Bearer " + token, "foreign_origin"},
		{"origin naming loopback as a subdomain", "127.0.0.1:9", "http://127.0.0.1.evil.example", "Bearer " + token, "foreign_origin"},
		{"localhost subdomain origin", "127.0.0.1:9", "http://localhost.evil.example", "Bearer " + token, "foreign_origin"},
		{"null origin", "127.0.0.1:9", "null", "Bearer " + token, "foreign_origin"},
		{"file origin", "127.0.0.1:9", "file://", "Bearer " + token, "foreign_origin"},
		{"rebinding host", "evil.example:9", "", "Bearer " + token, "bad_host"},
		{"rebinding host on a loopback-looking name", "127.0.0.1.nip.io:9", "", "Bearer " + token, "bad_host"},
		{"host checked before the token", "evil.example", "", "", "bad_host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "http://127.0.0.1:9/mcp", nil)
			r.Host = tc.host
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			err := g.Check(r)
			var ae *api.Error
			switch {
			case tc.code == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.code != "" && (!errors.As(err, &ae) || ae.Code != tc.code):
				t.Fatalf("Check = %v, want %s", err, tc.code)
			case tc.code == "foreign_origin" && ae.Hint != "origin hint", tc.code == "bad_token" && ae.Hint != "token hint":
				t.Fatalf("hint %q does not name the way out", ae.Hint)
			}
		})
	}
}

// Wrap answers a refusal itself, a 401 with WWW-Authenticate, and never runs the handler.
func TestLoopbackGuardWrap(t *testing.T) {
	ran := false
	h := LoopbackGuard{Token: strings.Repeat("t", 43)}.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "http://127.0.0.1:9/mcp", nil))
	if w.Code != http.StatusUnauthorized || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer ") || ran {
		t.Fatalf("status %d, WWW-Authenticate %q, handler ran %v", w.Code, w.Header().Get("WWW-Authenticate"), ran)
	}
}

// Only loopback addresses are bound; the rest are refused before a socket exists, saying
// what was wrong and what to use.
func TestListenLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string // "" = listens
	}{
		{"127.0.0.1:0", ""},
		{"localhost:0", ""},
		{"0.0.0.0:8765", "every interface"},
		{":8765", "every interface"},
		{"[::]:8765", "every interface"},
		{"192.0.2.1:8765", "an address other machines can reach"},
		{"example.com:8765", "a name, which may resolve off this machine"},
		{"127.0.0.1", "give HOST:PORT"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			l, err := ListenLoopback(tc.addr)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				l.Close()
				return
			}
			if l != nil {
				l.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ListenLoopback(%s) = %v, want %q", tc.addr, err, tc.want)
			}
			if !strings.Contains(tc.want, "HOST:PORT") && (!errors.Is(err, ErrNotLoopback) || !strings.Contains(err.Error(), "use a loopback address such as 127.0.0.1:8765")) {
				t.Fatalf("ListenLoopback(%s) = %v: not ErrNotLoopback with the way out", tc.addr, err)
			}
		})
	}
}
