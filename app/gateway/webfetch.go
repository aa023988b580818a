package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type webFetchIn struct {
	URL      string `json:"url" jsonschema:"the http or https URL to GET"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"read at most this many bytes of the body (default and maximum 1 MiB)"`
}

func (s *Server) addWebFetchTool() {
	governed(s, &mcp.Tool{Name: api.ToolWebFetch, Annotations: annotations("Fetch a URL", toolKind{ReadOnly: true, Idempotent: true, OpenWorld: true}),
		Description: "HTTP GET a URL and return its status, content type and body (text, cut at 1 MiB). Refused when the " +
			"sandbox policy has the network off, or on \"allowlist\" (web_fetch is not connected to the egress proxy yet)."},
		func(in *webFetchIn) (string, error) {
			u, err := url.Parse(in.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
				return in.URL, fmt.Errorf("url %q is not an http(s) URL with a host", in.URL)
			}
			if err := precheck(s.opts.Policy.CheckNetwork(u.Hostname())); err != nil {
				return in.URL, err
			}
			if in.MaxBytes < 0 || in.MaxBytes > s.opts.FetchCap {
				in.MaxBytes = s.opts.FetchCap
			}
			return in.URL, nil
		},
		func(ctx context.Context, in webFetchIn) (*mcp.CallToolResult, api.Outcome) {
			if err := s.policy(ctx).CheckNetwork(mustHost(in.URL)); err != nil {
				return errorResult("%v", isolationError(err)), api.Outcome{Ran: false, Error: err.Error(), SandboxDenied: true}
			}
			text, err := s.fetch(ctx, in)
			if err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(text), ranOK(nil)
		})
}

func (s *Server) fetch(ctx context.Context, in webFetchIn) (string, error) {
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
	client := &http.Client{CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		return s.policy(ctx).CheckNetwork(r.URL.Hostname())
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
