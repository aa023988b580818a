package permission

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// Isolation is the sandbox's application-layer verdict on a request (the
// pipeline's step 1). Check returns nil when the sandbox policy allows the call, or an error (the
// sandbox's *IsolationDeniedError) naming what it denies and the way out. A denial
// becomes an interactive-only isolation_escalation request; under approval_policy
// never it is denied at once.
type Isolation interface {
	Check(ctx context.Context, req Request) error
}

// IsolationFunc adapts a function to Isolation.
type IsolationFunc func(ctx context.Context, req Request) error

// Check calls f.
func (f IsolationFunc) Check(ctx context.Context, req Request) error { return f(ctx, req) }

// SandboxIsolation is the Isolation backed by package sandbox's application layer:
// shell commands through Policy.AnalyzeCommand, file writes through CheckWrite, reads
// through CheckRead (hidden paths), web fetches through CheckNetwork.
type SandboxIsolation struct {
	// PolicyFor returns the effective sandbox policy of the request's run or session
	// (recorded when it started). Required.
	PolicyFor func(ctx context.Context, req Request) (sandbox.Policy, error)
}

// Check implements Isolation.
func (s SandboxIsolation) Check(ctx context.Context, req Request) error {
	if s.PolicyFor == nil {
		return errors.New("no sandbox policy source configured")
	}
	pol, err := s.PolicyFor(ctx, req)
	if err != nil {
		return fmt.Errorf("sandbox policy for %s: %w", req.Tool, err)
	}
	if req.IsShell() {
		a, err := pol.AnalyzeCommand(req.Command(), req.Context.Cwd)
		if err != nil && RunsInMicroVM(req) {
			return microVMDenial(a.Denials)
		}
		if len(a.Denials) > 1 {
			// Every denial, so an escalation grants what all of them need.
			errs := make([]error, len(a.Denials))
			for i, d := range a.Denials {
				errs[i] = d
			}
			return errors.Join(errs...)
		}
		return err
	}
	p := req.ParamMap()
	str := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := p[k].(string); ok && v != "" {
				return v
			}
		}
		return ""
	}
	switch req.Tool {
	case ToolWriteFile, ToolEditFile:
		if path := str("path", "file", "file_path"); path != "" {
			return pol.CheckWrite(path)
		}
		return errors.New(req.Tool + " without a path cannot be checked")
	case ToolReadFile, ToolListDir, ToolSearchFiles:
		if path := str("path", "dir", "directory", "file_path"); path != "" {
			return pol.CheckRead(path)
		}
	case ToolWebFetch:
		raw := str("url")
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			return pol.CheckNetwork("")
		}
		if pol.Network == sandbox.NetworkAllowlist && !pol.EgressConnected {
			// The agent's own fetch (the hook): no proxy of Airlock's sees its connection,
			// so its host is judged by the lists here.
			return pol.CheckDomains(req.Tool, []string{u.Hostname()})
		}
		return pol.CheckNetwork(u.Hostname())
	}
	if api.IsNetworkTool(req.Tool) {
		// A web or code search reaches the network by itself: the network setting
		// governs it as it governs web_fetch.
		return pol.CheckDomains(req.Tool, domainsOf(p))
	}
	return nil
}

// domainsOf lists the domains a network tool's parameters name: a search's
// allowed_domains (a list or one string), or the host of its url.
func domainsOf(p map[string]any) []string {
	var out []string
	switch v := p["allowed_domains"].(type) {
	case []any:
		for _, d := range v {
			if s, ok := d.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	case string:
		if v != "" {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		if raw, _ := p["url"].(string); raw != "" {
			if u, err := url.Parse(raw); err == nil && u.Hostname() != "" {
				out = append(out, u.Hostname())
			}
		}
	}
	return out
}

// RunsInMicroVM reports whether req is a command that runs in the throwaway micro-VM
// (its context says execution mode "sandbox" and it is a bash or exec call). Only such a
// command is judged by the VM's guarantees; a file or web tool runs on the host.
func RunsInMicroVM(req Request) bool {
	return req.Context.Policy.ExecutionMode == string(sandbox.ExecSandbox) && (req.Tool == ToolBash || req.Tool == ToolExec)
}

// microVMDenial is what remains of a command's host-policy denials when it runs in the
// micro-VM: writes anywhere (literal or computed) vanish with the VM and the VM holds no
// host file but the workspace, so only the network (which follows the policy: off means
// no network device) and a command that cannot be parsed at all still count.
func microVMDenial(denials []*sandbox.IsolationDeniedError) error {
	for _, d := range denials {
		switch {
		case d.Reason == sandbox.ReasonWrite || d.Reason == sandbox.ReasonRead:
		case d.Reason == sandbox.ReasonBash && d.Path != "": // a computed write target
		default:
			return d
		}
	}
	return nil
}

// denialsOf lists the sandbox denials in err (one, or several joined).
func denialsOf(err error) []*sandbox.IsolationDeniedError {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*sandbox.IsolationDeniedError
		for _, e := range j.Unwrap() {
			out = append(out, denialsOf(e)...)
		}
		return out
	}
	if d, ok := err.(*sandbox.IsolationDeniedError); ok {
		return []*sandbox.IsolationDeniedError{d}
	}
	if inner := errors.Unwrap(err); inner != nil {
		return denialsOf(inner)
	}
	return nil
}
