package permission

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/airlock-app/airlock/sandbox"
)

func sandboxPolicy(t *testing.T, cwd string) sandbox.Policy {
	t.Helper()
	p, err := sandbox.Resolve(sandbox.Inputs{Cwd: cwd, Home: t.TempDir(), Env: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("sandbox.Resolve: %v", err)
	}
	return p
}

func TestSandboxIsolation(t *testing.T) {
	cwd := t.TempDir()
	pol := sandboxPolicy(t, cwd)
	iso := SandboxIsolation{PolicyFor: func(context.Context, Request) (sandbox.Policy, error) { return pol, nil }}
	ctx := context.Background()
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}), func(o *BrokerOptions) { o.Isolation = iso })
	in := func(r Request) Request { r.Context.Cwd = cwd; r.Context.Policy.Mode = "workspace-write"; return r }
	cases := []struct {
		req         Request
		interactive bool
	}{
		{in(bash("echo hi > out.txt")), false},
		{in(bash("echo pwned >> /etc/passwd")), true},
		{in(bash("curl https://example.com")), true},
		{in(bash("sudo timeout 5 wget https://example.com")), true},
		{in(Request{Tool: ToolWriteFile, Params: params("path", filepath.Join(cwd, "a.txt"))}), false},
		{in(Request{Tool: ToolWriteFile, Params: params("path", "/etc/hosts")}), true},
		{in(Request{Tool: ToolWriteFile, Params: params("path", filepath.Join(cwd, ".git", "config"))}), true},
		{in(Request{Tool: ToolWebFetch, Params: params("url", "https://example.com/x")}), true},
		{in(Request{Tool: ToolReadFile, Params: params("path", "/etc/hosts")}), false},
		// Credentials are hidden: an agent's read of a private key asks the person.
		{in(Request{Tool: ToolReadFile, Params: params("path", filepath.Join(pol.Home, ".ssh", "id_ed25519"))}), true},
		{in(Request{Tool: ToolListDir, Params: params("path", filepath.Join(pol.Home, ".aws"))}), true},
		{in(Request{Tool: ToolReadFile, Params: params("path", filepath.Join(pol.Home, "notes.txt"))}), false},
	}
	for _, c := range cases {
		d := b.Check(ctx, c.req).Decision
		if c.interactive && (d.Kind != KindIsolationEscalation || !d.InteractiveOnly || d.Verdict != Ask) {
			t.Errorf("%s %s: want an isolation_escalation ask, got %+v", c.req.Tool, c.req.Subject(), d)
		}
		if !c.interactive && d.InteractiveOnly {
			t.Errorf("%s %s: unexpected escalation %+v", c.req.Tool, c.req.Subject(), d)
		}
	}
	// never: an escalation is denied at once.
	never, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{ApprovalPolicy: "never"}), func(o *BrokerOptions) { o.Isolation = iso })
	if d, _ := never.Await(ctx, in(bash("echo x > /etc/passwd"))); d.Verdict != Deny || d.Kind != KindIsolationEscalation {
		t.Fatalf("never + sandbox denial = %+v", d)
	}
	// A policy that cannot be found refuses the call (fails closed) instead of asking.
	broken := SandboxIsolation{PolicyFor: func(context.Context, Request) (sandbox.Policy, error) {
		return sandbox.Policy{}, errors.New("run unknown")
	}}
	b.SetIsolation(broken)
	if d := b.Check(ctx, in(bash("ls"))).Decision; d.Verdict != Deny || d.Layer != LayerIsolation {
		t.Fatalf("broken isolation = %+v", d)
	}
}
