package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type webFetchIn struct {
	URL      string `json:"url" jsonschema:"the http or https URL to GET"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"read at most this many bytes of the body (default and maximum 1 MiB)"`
}

// fetchNet replaces how web_fetch resolves names and dials checked addresses (nil: the
// system's); only tests set it, to give fake domains addresses and route them to a
// server on this machine.
type fetchNet struct {
	resolver egress.Resolver
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (s *Server) addWebFetchTool() {
	governed(s, &mcp.Tool{Name: api.ToolWebFetch, Annotations: annotations("Fetch a URL", toolKind{ReadOnly: true, Idempotent: true, OpenWorld: true}),
		Description: "HTTP GET a URL and return its status, content type and body (text, cut at 1 MiB). Every connection, " +
			"redirects included, is checked as Airlock's egress proxy checks a sandbox's: refused when the sandbox policy has " +
			"the network off; under network_access = \"allowlist\" only the allowed domains (an unknown one is asked); " +
			"denied_domains and destinations on this machine or its local network are refused unless the policy allows them."},
		func(in *webFetchIn) (string, error) {
			u, err := url.Parse(in.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
				return in.URL, fmt.Errorf("url %q is not an http(s) URL with a host", in.URL)
			}
			if err := precheck(fetchPolicy(s.opts.Policy).CheckNetwork(u.Hostname())); err != nil {
				return in.URL, err
			}
			if in.MaxBytes < 0 || in.MaxBytes > s.opts.FetchCap {
				in.MaxBytes = s.opts.FetchCap
			}
			return in.URL, nil
		},
		func(ctx context.Context, in webFetchIn) (*mcp.CallToolResult, api.Outcome) {
			pol := fetchPolicy(s.policy(ctx))
			if err := pol.CheckNetwork(mustHost(in.URL)); err != nil {
				return errorResult("%v", isolationError(err)), api.Outcome{Ran: false, Error: err.Error(), SandboxDenied: true}
			}
			text, conns, err := s.fetch(ctx, pol, in)
			if conns != "" {
				text += "\n--- network (checked by Airlock's egress rules) ---\n" + conns
			}
			var refused *egress.RefusedError
			switch {
			case errors.As(err, &refused):
				msg := "isolation error: " + strings.TrimSpace(egress.RefusalText(err))
				return errorResult("%s%s", msg, text), api.Outcome{Ran: false, Error: msg}
			case err != nil:
				return errorResult("%v%s", err, text), ranOK(err)
			}
			return textResult(text), ranOK(nil)
		})
}

// fetchPolicy is the policy web_fetch checks a URL under: under an allowlist the tool
// is always connected to the egress decision (it makes its connections in this process,
// through egress.Proxy.DialContext), so the destination is the lists' to judge.
func fetchPolicy(pol sandbox.Policy) sandbox.Policy {
	if pol.Network == sandbox.NetworkAllowlist {
		pol.EgressConnected = true
	}
	return pol
}

// fetchProxy is the egress decision of one web_fetch call under pol: the [network]
// lists (an unknown domain asked as a network_domain request under an allowlist with
// ask_unknown), every unlisted domain let through when the network is on, and local
// destinations refused unless allow_local in both cases. log receives each connection.
func (s *Server) fetchProxy(pol sandbox.Policy, log func(egress.Record)) (*egress.Proxy, error) {
	lists := sandbox.DefaultNetworkLists()
	if pol.Allowlist != nil {
		lists = *pol.Allowlist
	}
	cfg := egress.Config{
		Allowed: lists.AllowedDomains, Denied: lists.DeniedDomains, AllowLocal: lists.AllowLocal,
		AllowUnlisted: pol.Network.On(), Log: log, Logger: s.opts.Log,
		Resolver: s.net.resolver, Dial: s.net.dial,
	}
	if pol.Network == sandbox.NetworkAllowlist && lists.AskUnknown {
		cfg.Decide = func(ctx context.Context, r egress.Request) (egress.Verdict, error) {
			ok, err := s.askDomain(ctx, r.Domain, r.Port)
			if err != nil {
				return egress.Deny, fmt.Errorf("network_domain request for %s:%d: %w", r.Domain, r.Port, err)
			}
			if ok {
				return egress.Allow, nil
			}
			return egress.Deny, nil
		}
	}
	p, err := egress.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("web_fetch: the [network] lists: %w", err)
	}
	return p, nil
}

// fetch GETs the URL with every connection made through the egress decision, and
// returns the answer, one line per connection, and the error.
func (s *Server) fetch(ctx context.Context, pol sandbox.Policy, in webFetchIn) (text, conns string, err error) {
	if outer, ok := sandbox.Enclosing(); ok && outer == sandbox.NetworkAllowlist && pol.Network != sandbox.NetworkOff {
		return s.fetchThroughRun(ctx, pol, in)
	}
	var mu sync.Mutex
	var records []egress.Record
	var opened []net.Conn
	p, err := s.fetchProxy(pol, func(r egress.Record) {
		s.opts.Log.Info("web_fetch connection", "session", s.session, "record", r.LogLine())
		mu.Lock()
		records = append(records, r)
		mu.Unlock()
	})
	if err != nil {
		return "", "", err
	}
	tr := &http.Transport{
		Proxy: nil, // never this process's proxy variables: the decision is Airlock's
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := p.DialContext(ctx, network, addr)
			if c != nil {
				mu.Lock()
				opened = append(opened, c)
				mu.Unlock()
			}
			return c, err
		},
		TLSHandshakeTimeout: 10 * time.Second,
	}
	text, err = s.get(ctx, pol, tr, in)
	// Closing each connection here reports its record now, so the result lists them all.
	tr.CloseIdleConnections()
	mu.Lock()
	toClose := opened
	mu.Unlock()
	for _, c := range toClose {
		c.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	s.auditConnections(records)
	lines := make([]string, len(records))
	for i, r := range records {
		lines[i] = r.LogLine()
	}
	return text, strings.Join(lines, "\n"), err
}

// auditConnections writes a call's connections to the core's audit, as the core writes
// its proxies' (the audit lives there); without a core they are only in the result.
func (s *Server) auditConnections(records []egress.Record) {
	if s.opts.Client == nil || len(records) == 0 {
		return
	}
	in := api.EgressAudit{Context: s.context("mcp")}
	for _, r := range records {
		in.Connections = append(in.Connections, r.Wire())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := localapi.Call(ctx, s.opts.Client, api.AuditEgress, in); err != nil {
		s.opts.Log.Warn("could not write web_fetch's connections to Airlock's audit", "error", err)
	}
}

// get does the request: at most 5 redirects, each one checked against the policy again
// (and its connection, like every connection, by the egress decision).
func (s *Server) get(ctx context.Context, pol sandbox.Policy, tr http.RoundTripper, in webFetchIn) (string, error) {
	limit := in.MaxBytes
	if limit <= 0 {
		limit = s.opts.FetchCap
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.URL, nil)
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", in.URL, err)
	}
	req.Header.Set("User-Agent", "Airlock-MCP/"+s.opts.Version)
	client := &http.Client{Transport: tr, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if r.URL.Scheme != "http" && r.URL.Scheme != "https" {
			return fmt.Errorf("a redirect to %q is not an http(s) URL", r.URL)
		}
		return pol.CheckNetwork(r.URL.Hostname())
	}}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", in.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return "", fmt.Errorf("read the body of %s: %w", in.URL, err)
	}
	cut := ""
	if int64(len(body)) > limit {
		body = body[:limit]
		cut = fmt.Sprintf("\n[body cut at %d bytes]", limit)
	}
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "text/") && !strings.Contains(ct, "json") && !strings.Contains(ct, "xml") && !strings.Contains(ct, "javascript") && ct != "" {
		return fmt.Sprintf("HTTP %s\ncontent-type: %s\n(%d bytes of binary content not shown)", resp.Status, ct, len(body)), nil
	}
	return fmt.Sprintf("HTTP %s\ncontent-type: %s\n\n%s%s", resp.Status, ct, body, cut), nil
}

// mustHost is the host of a URL prepare already accepted.
func mustHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// fetchThroughRun is web_fetch inside a run under an allowlist (the MCP server of an agent
// task): this process's network namespace has no way out but the run's egress proxy,
// which applies the run's lists to every connection, redirects included, asks the
// person about an unknown domain, and records each in the run's log. A direct dial
// there would only fail.
func (s *Server) fetchThroughRun(ctx context.Context, pol sandbox.Policy, in webFetchIn) (string, string, error) {
	tr := &http.Transport{
		Proxy:               http.ProxyURL(&url.URL{Scheme: "http", Host: sandbox.EgressAddr}),
		TLSHandshakeTimeout: 10 * time.Second,
	}
	defer tr.CloseIdleConnections()
	text, err := s.get(ctx, pol, tr, in)
	return text, "through the run's egress proxy (its connections are in the run's log)", err
}
