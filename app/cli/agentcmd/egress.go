package agentcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/airlock-app/airlock/app/gateway"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress"
)

// SessionEgress builds the egress proxy of an MCP session's bash calls under
// network_access = "allowlist": the policy's lists, one line per connection in the call's
// result, and an unlisted domain put to the broker (a network_domain request over the
// local API, shown in the popup, the tray and a notification) when ask_unknown;
// otherwise it is refused with the way out (allowed_domains). The proxy runs in this
// process; only airlock-agent links it, never `airlock`.
func SessionEgress(pol sandbox.Policy) func(log io.Writer, ask gateway.AskDomain) sandbox.Egress {
	lists := sandbox.DefaultNetworkLists()
	if pol.Allowlist != nil {
		lists = *pol.Allowlist
	}
	return func(log io.Writer, ask gateway.AskDomain) sandbox.Egress {
		cfg := egress.Config{
			Allowed: lists.AllowedDomains, Denied: lists.DeniedDomains, AllowLocal: lists.AllowLocal,
			Log: func(r egress.Record) { fmt.Fprintln(log, r.LogLine()) },
		}
		if lists.AskUnknown && ask != nil {
			cfg.Decide = func(ctx context.Context, r egress.Request) (egress.Verdict, error) {
				ok, err := ask(ctx, r.Domain, r.Port)
				if err != nil {
					return egress.Deny, fmt.Errorf("network_domain request for %s:%d: %w", r.Domain, r.Port, err)
				}
				if ok {
					return egress.Allow, nil
				}
				return egress.Deny, nil
			}
		}
		return sandbox.Egress(egress.Hook(cfg))
	}
}
