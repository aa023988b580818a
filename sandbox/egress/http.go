package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/elazarl/goproxy"
)

// goproxyLogger sends goproxy's diagnostics (only produced when Verbose) to slog.
type goproxyLogger struct{ l *slog.Logger }

func (g goproxyLogger) Printf(format string, v ...any) {
	g.l.Debug("egress: http proxy", "msg", fmt.Sprintf(format, v...))
}

// newHTTP builds the HTTP side: CONNECT tunnels and plain http:// requests. Every
// outgoing connection goes through authorize and dial; goproxy never dials by itself,
// and it never reads the proxy variables of this process.
func (p *Proxy) newHTTP() http.Handler {
	gp := goproxy.NewProxyHttpServer()
	gp.Logger = goproxyLogger{p.log}
	gp.ConnectDial = nil
	gp.Tr = &http.Transport{Proxy: nil, DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("egress: no per-request dialer") // never reached: each request gets its own
	}}
	gp.NonproxyHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "This is Airlock's egress proxy: set HTTP_PROXY/HTTPS_PROXY (or ALL_PROXY=socks5h://…) to it.\n", http.StatusBadRequest)
	})
	gp.ConnectionErrHandler = func(w io.Writer, _ *goproxy.ProxyCtx, err error) {
		writeRefusal(w, "HTTP/1.1", err)
	}

	gp.OnRequest().HandleConnectFunc(func(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		h, port, err := splitHostPort(host, 443)
		var a *attempt
		if err == nil {
			a, err = p.authorize(ctx.Req.Context(), ProtoConnect, h, port)
		} else {
			err = p.refuse(&attempt{rec: Record{Protocol: ProtoConnect, Domain: host}}, ReasonInvalid, err.Error())
		}
		if err != nil {
			ctx.Resp = refusalResponse(ctx.Req, err)
			return goproxy.RejectConnect, host
		}
		ctx.Dialer = func(dctx context.Context, _, _ string) (net.Conn, error) { return p.dial(dctx, a) }
		return goproxy.OkConnect, host
	})

	gp.OnRequest().DoFunc(func(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		if req.URL.Scheme != "http" {
			// goproxy would open TLS itself without checking the certificate.
			err := p.refuse(&attempt{rec: Record{Protocol: ProtoHTTP, Domain: req.URL.Hostname()}}, ReasonUnsupported,
				"only http:// URLs are proxied as requests; https goes through CONNECT (HTTPS_PROXY)")
			return req, refusalResponse(req, err)
		}
		h, port, err := splitHostPort(req.URL.Host, 80)
		var a *attempt
		if err == nil {
			a, err = p.authorize(req.Context(), ProtoHTTP, h, port)
		} else {
			err = p.refuse(&attempt{rec: Record{Protocol: ProtoHTTP, Domain: req.URL.Host}}, ReasonInvalid, err.Error())
		}
		if err != nil {
			return req, refusalResponse(req, err)
		}
		// A transport of its own per request: no pooled connection outlives the
		// decision it was made under, and each connection is one Record.
		tr := &http.Transport{
			Proxy:             nil,
			DisableKeepAlives: true,
			DialContext:       func(dctx context.Context, _, _ string) (net.Conn, error) { return p.dial(dctx, a) },
		}
		ctx.RoundTripper = goproxy.RoundTripperFunc(func(r *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
			resp, err := tr.RoundTrip(r)
			if err != nil {
				return nil, err
			}
			resp.Body = &closeHook{ReadCloser: resp.Body, after: tr.CloseIdleConnections}
			return resp, nil
		})
		return req, nil
	})
	return gp
}

// closeHook runs after once the body is closed.
type closeHook struct {
	io.ReadCloser
	after func()
}

func (c *closeHook) Close() error {
	err := c.ReadCloser.Close()
	c.after()
	return err
}

func splitHostPort(hostport string, defPort int) (string, int, error) {
	u := &url.URL{Host: hostport}
	h, ps := u.Hostname(), u.Port()
	if h == "" {
		return "", 0, fmt.Errorf("%w: %q has no host", ErrInvalidHost, hostport)
	}
	if ps == "" {
		return h, defPort, nil
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %q: port is not a number", ErrInvalidHost, hostport)
	}
	return h, port, nil
}

// refusalText explains a refusal to the person reading the client's error: that
// Airlock refused it, and how to allow it.
func refusalText(err error) string {
	var re *RefusedError
	if !errors.As(err, &re) {
		return "Airlock's egress proxy could not connect: " + err.Error() + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Airlock refused the connection to %s: %s", net.JoinHostPort(re.Domain, strconv.Itoa(re.Port)), re.Reason)
	if re.Detail != "" {
		fmt.Fprintf(&b, " (%s)", re.Detail)
	}
	b.WriteString(".\n")
	switch re.Reason {
	case ReasonDeniedByList:
		fmt.Fprintf(&b, "To allow it, remove the matching entry from denied_domains in the [network] section of config.toml; denied_domains always win over allowed_domains.\n")
	case ReasonNotListed, ReasonDeniedByPerson, ReasonDecideFailed:
		fmt.Fprintf(&b, "To allow it, add %q to allowed_domains in the [network] section of config.toml (\"*.%s\" also covers its subdomains), or answer Allow when Airlock asks.\n", re.Domain, re.Domain)
	case ReasonLocalAddress:
		b.WriteString("Destinations on this machine or its local network are refused; set allow_local = true in the [network] section of config.toml to allow them.\n")
	}
	return b.String()
}

// refusalResponse is the 403 (502 when the destination itself failed) a refused HTTP
// client gets.
func refusalResponse(req *http.Request, err error) *http.Response {
	code := http.StatusForbidden
	var re *RefusedError
	if errors.As(err, &re) && (re.Reason == ReasonDialFailed || re.Reason == ReasonResolveFailed) {
		code = http.StatusBadGateway
	}
	resp := goproxy.NewResponse(req, goproxy.ContentTypeText, code, refusalText(err))
	resp.Header.Set("X-Airlock-Egress", "refused")
	return resp
}

// writeRefusal answers a CONNECT whose dial failed after it was allowed.
func writeRefusal(w io.Writer, proto string, err error) {
	body := refusalText(err)
	fmt.Fprintf(w, "%s 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Airlock-Egress: refused\r\n\r\n%s", proto, len(body), body)
}
