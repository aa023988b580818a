package permission

import (
	"context"
	"encoding/json"
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
		// A protected path: no escalation can make .git writable, so it is refused.
		{in(Request{Tool: ToolWriteFile, Params: params("path", filepath.Join(cwd, ".git", "config"))}), false},
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

// A command that runs in the throwaway micro-VM is judged by the VM's guarantees: writes
// anywhere vanish with it, so they are no escalation; the network still follows the
// policy; nothing is relaxed for a command on the host or for a file tool (which runs on
// the host whatever the session's execution mode).
func TestSandboxIsolationMicroVM(t *testing.T) {
	cwd := t.TempDir()
	pol := sandboxPolicy(t, cwd)
	iso := SandboxIsolation{PolicyFor: func(context.Context, Request) (sandbox.Policy, error) { return pol, nil }}
	ctx := context.Background()
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}), func(o *BrokerOptions) { o.Isolation = iso })
	in := func(mode string, r Request) Request {
		r.Context.Cwd = cwd
		r.Context.Policy.Mode = "workspace-write"
		r.Context.Policy.ExecutionMode = mode
		return r
	}
	execArgv := func(argv ...string) Request {
		p, _ := json.Marshal(map[string]any{"argv": argv})
		return Request{Tool: ToolExec, Params: p}
	}
	key := filepath.Join(pol.Home, ".ssh", "id_ed25519")
	cases := []struct {
		name       string
		req        Request
		escalation bool
	}{
		{"vm: write to /root", in("sandbox", bash("echo x > /root/x")), false},
		{"vm: write to /etc", in("sandbox", bash("echo pwned >> /etc/passwd")), false},
		{"vm: computed write target", in("sandbox", bash(`echo x > "$HOME/x"`)), false},
		{"vm: exec argv writing /root", in("sandbox", execArgv("sh", "-c", "echo x > /root/x")), false},
		{"vm: network off still denies curl", in("sandbox", bash("curl https://example.com")), true},
		{"vm: network off still denies /dev/tcp", in("sandbox", bash("echo x > /dev/tcp/10.0.0.1/80")), true},
		// Nothing can be granted to a command that does not parse: refused, not asked.
		{"vm: unparseable command", in("sandbox", bash("echo 'unterminated")), false},
		{"host: write to /root", in("local", bash("echo x > /root/x")), true},
		{"host (no mode): write to /root", in("", bash("echo x > /root/x")), true},
		{"auto is not a place: write to /root", in("auto", bash("echo x > /root/x")), true},
		{"host: exec argv writing /root", in("local", execArgv("sh", "-c", "echo x > /root/x")), true},
		{"vm session, file tool write (runs on the host)", in("sandbox", Request{Tool: ToolWriteFile, Params: params("path", "/root/x")}), true},
		{"vm session, credential read_file (runs on the host)", in("sandbox", Request{Tool: ToolReadFile, Params: params("path", key)}), true},
		{"host: credential read_file", in("local", Request{Tool: ToolReadFile, Params: params("path", key)}), true},
		{"vm: other tool with a command param", in("sandbox", Request{Tool: "run_command", Params: params("command", "echo x > /root/x")}), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := b.Check(ctx, c.req).Decision
			isEsc := d.Kind == KindIsolationEscalation && d.InteractiveOnly
			if isEsc != c.escalation {
				t.Errorf("%s %s (execution mode %q): escalation = %v, want %v (%+v)", c.req.Tool, c.req.Subject(), c.req.Context.Policy.ExecutionMode, isEsc, c.escalation, d)
			}
		})
	}
	// network on: the same curl in the VM passes the isolation layer.
	netPol := pol
	netPol.Network = sandbox.NetworkOn
	b.SetIsolation(SandboxIsolation{PolicyFor: func(context.Context, Request) (sandbox.Policy, error) { return netPol, nil }})
	if d := b.Check(ctx, in("sandbox", bash("curl https://example.com"))).Decision; d.Kind == KindIsolationEscalation {
		t.Errorf("vm + network on: curl escalated: %+v", d)
	}
}
