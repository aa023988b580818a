package localapi

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/airlock-app/airlock/api"
)

// ErrNotLoopback is returned (wrapped) for a listen address off the loopback interface.
var ErrNotLoopback = errors.New("not a loopback address")

// ListenLoopback listens on addr, which must be a loopback address (127.0.0.1:PORT,
// [::1]:PORT or localhost:PORT; port 0 picks one): anything else would let other
// machines connect, so it is refused before a socket is bound.
func ListenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w: give HOST:PORT, e.g. 127.0.0.1:8765", addr, err)
	}
	if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
		what := "a name, which may resolve off this machine"
		if host == "" || (ip != nil && ip.IsUnspecified()) {
			what = "every interface, so other machines could connect"
		} else if ip != nil {
			what = "an address other machines can reach"
		}
		return nil, fmt.Errorf("refusing to listen on %s (%s): %w; use a loopback address such as 127.0.0.1:%s",
			addr, what, ErrNotLoopback, portOf(addr))
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if a, ok := l.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
		l.Close()
		return nil, fmt.Errorf("refusing to listen on %s (it bound %s): %w", addr, l.Addr(), ErrNotLoopback)
	}
	return l, nil
}

func portOf(addr string) string {
	if _, p, err := net.SplitHostPort(addr); err == nil && p != "" {
		return p
	}
	return "PORT"
}

// LoopbackGuard is what a request to a loopback TCP listener must pass before any
// handler runs: a loopback Host (a DNS-rebinding page names its own host), an Origin
// that is absent or allowed (a browser page elsewhere is refused), and the bearer token.
// The local API's TCP listener and `airlock mcp --http` both use it.
type LoopbackGuard struct {
	// Token is the bearer token every request must carry.
	Token string
	// AllowedOrigins are browser origins accepted besides none.
	AllowedOrigins []string
	// LoopbackOrigins also accepts any Origin whose host is a loopback address or
	// localhost (a local web client; it still needs the token).
	LoopbackOrigins bool
	// OriginHint and TokenHint are the way out named in a 403 for the Origin and a 401.
	OriginHint, TokenHint string
}

// Check returns the *api.Error a request fails with, or nil.
func (g LoopbackGuard) Check(r *http.Request) error {
	if !loopbackHost(r.Host) {
		return &api.Error{Status: http.StatusForbidden, Code: "bad_host", Message: fmt.Sprintf("Host %q is not a loopback name", r.Host), Hint: "connect to 127.0.0.1"}
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
		return &api.Error{Status: http.StatusForbidden, Code: "foreign_origin", Message: fmt.Sprintf("requests from the web origin %s are refused", origin), Hint: g.OriginHint}
	}
	given, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found || g.Token == "" || subtle.ConstantTimeCompare([]byte(given), []byte(g.Token)) != 1 {
		return &api.Error{Status: http.StatusUnauthorized, Code: "bad_token", Message: "missing or wrong bearer token", Hint: g.TokenHint}
	}
	return nil
}

// Wrap runs next only for requests that pass Check, answering the others with the
// error as JSON (and a 401 with WWW-Authenticate: Bearer, RFC 6750).
func (g LoopbackGuard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.Check(r); err != nil {
			var ae *api.Error
			if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="airlock"`)
			}
			WriteError(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (g LoopbackGuard) originAllowed(origin string) bool {
	for _, o := range g.AllowedOrigins {
		if origin == o {
			return true
		}
	}
	if !g.LoopbackOrigins {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopbackHost(u.Host)
}

// loopbackHost reports whether a Host header (or an origin's host) names this machine's
// loopback: 127.0.0.0/8, ::1 or localhost, with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
