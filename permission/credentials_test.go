package permission

import (
	"context"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/permission/preflight"
)

// Reading credentials is P2 whatever tool does it, on the host as in a run: asked every
// time, only "once" offered, never from the tray, denied under approval_policy never. It
// is not bash_destructive, and not interactive-only.
func TestCredentialReadsAreP2(t *testing.T) {
	ctx := context.Background()
	const home = "/home/u"
	withHome := func(o *BrokerOptions) { o.Preflight = preflight.Options{Home: home} }
	b, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}), withHome)
	host := func(tool string, kv ...string) Request {
		return Request{Tool: tool, Params: params(kv...), Context: Context{Session: "claude:s1", Department: "dev", Cwd: home + "/proj",
			Policy: PolicySummary{Mode: "full-access"}}} // as the hook's tools run: no sandbox hides anything
	}
	inHome := func(r Request) Request { r.Context.Cwd = home; return r }
	tests := []struct {
		name   string
		req    Request
		tier   Tier
		reason string
	}{
		{"bash cat key", host(ToolBash, "command", "cat ~/.ssh/id_rsa"), P2, "SSH keys (~/.ssh/id_rsa)"},
		{"bash base64", host(ToolBash, "command", "base64 $HOME/.aws/credentials"), P2, "AWS credentials"},
		{"bash redirect", host(ToolBash, "command", "cat < ${HOME}/.netrc"), P2, "~/.netrc"},
		{"bash sudo", host(ToolBash, "command", "sudo cat /home/u/.ssh/id_rsa"), P2, "SSH keys"},
		{"bash relative in home", inHome(host(ToolBash, "command", "cat .ssh/id_rsa")), P2, "SSH keys"},
		{"bash tar home", host(ToolBash, "command", "tar czf /tmp/h.tgz ~"), P2, "the credentials under ~"},
		{"bash gh token", host(ToolBash, "command", "gh auth token"), P2, "GitHub"},
		{"bash echo", host(ToolBash, "command", "echo hi"), P1, ""},
		{"bash echo path", host(ToolBash, "command", "echo ~/.ssh/id_rsa"), P1, ""},
		{"bash ls", host(ToolBash, "command", "ls -la ~/.ssh"), P1, ""},
		{"bash public key", host(ToolBash, "command", "ssh-keygen -l -f ~/.ssh/id_rsa.pub"), P1, ""},
		{"read key", host(ToolReadFile, "path", "~/.ssh/id_rsa"), P2, "SSH keys"},
		{"read key absolute", host(ToolReadFile, "path", home+"/.aws/credentials"), P2, "AWS credentials"},
		{"read key relative", host(ToolReadFile, "path", "../.ssh/id_rsa"), P2, "SSH keys"},
		{"read public key", host(ToolReadFile, "path", home+"/.ssh/id_rsa.pub"), P0, ""},
		{"read source", host(ToolReadFile, "path", home+"/proj/main.go"), P0, ""},
		{"read key by file_path", host(ToolReadFile, "file_path", home+"/.netrc"), P2, "login passwords"},
		{"grep keys by dir", host(ToolSearchFiles, "dir", home+"/.aws", "regex", "secret"), P2, "AWS credentials"},
		{"grep in ~/.ssh", host(ToolSearchFiles, "path", home+"/.ssh", "regex", "BEGIN"), P2, "SSH keys"},
		{"grep in home", host(ToolSearchFiles, "path", home, "regex", "password"), P2, "the credentials under ~"},
		{"glob in ~/.ssh", host(ToolSearchFiles, "path", home+"/.ssh", "glob", "*"), P0, ""},
		{"grep in project", host(ToolSearchFiles, "path", home+"/proj", "regex", "TODO"), P0, ""},
		{"list ~/.ssh", host(ToolListDir, "path", home+"/.ssh"), P0, ""},
	}
	for _, tt := range tests {
		ev := b.Check(ctx, tt.req)
		d := ev.Decision
		if d.Tier != tt.tier || d.Verdict == Allow && tt.tier == P2 {
			t.Errorf("%s: %s by %s at %s (%v), want tier %s", tt.name, d.Verdict, d.Layer, d.Tier, d.Reasons, tt.tier)
		}
		if tt.tier == P2 && (d.InteractiveOnly || d.Kind != "" || d.Verdict != Ask) {
			t.Errorf("%s: %+v, want a plain P2 ask (not interactive-only, not %s)", tt.name, d, KindBashDestructive)
		}
		if tt.reason != "" && !strings.Contains(strings.Join(d.Reasons, "\n"), tt.reason) {
			t.Errorf("%s: reasons %v do not say %q", tt.name, d.Reasons, tt.reason)
		}
	}

	// Asked every time: only once is offered, the tray cannot allow it, and a person's
	// allow leaves no grant behind.
	b2, ev := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}), withHome)
	req := host(ToolBash, "command", "cat ~/.ssh/id_rsa")
	p, ch := ask(t, b2, ev, req)
	if p.Tier != P2 || p.InteractiveOnly || len(p.Scopes) != 1 || p.Scopes[0] != ScopeOnce {
		t.Fatalf("pending = %+v", p)
	}
	if _, err := b2.Answer(ctx, p.ID, Answer{Allow: true, By: ByTray}); err == nil {
		t.Fatal("a credential read was allowed from the tray")
	}
	if _, err := b2.Answer(ctx, p.ID, Answer{Allow: true, Scope: ScopeSession, By: ByWindow, Interactive: true}); err == nil {
		t.Fatal("a credential read was remembered for the session")
	}
	if _, err := b2.Answer(ctx, p.ID, Answer{Allow: true, By: ByWindow, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	if d := <-ch; d.Verdict != Allow || d.Scope != ScopeOnce {
		t.Fatalf("answered: %+v", d)
	}
	if d := b2.Check(ctx, req).Decision; d.Verdict != Ask {
		t.Fatalf("asked again: %+v", d)
	}

	// approval_policy never denies it at once; untrusted asks.
	never, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{ApprovalPolicy: "never"}), withHome)
	if d := never.Check(ctx, req).Decision; d.Verdict != Deny {
		t.Fatalf("never: %+v", d)
	}
	untrusted, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{ApprovalPolicy: "untrusted",
		Permission: PermissionSection{Tiers: map[string]string{"bash": "P0"}}}), withHome)
	if d := untrusted.Check(ctx, req).Decision; d.Verdict != Ask || d.Tier != P2 {
		t.Fatalf("untrusted with bash P0: %+v", d)
	}
}

// The reads that printed a private key through the hook with no question: a file operand
// smuggled through an option, or a walk out of /proc/self/cwd. Through the real broker
// (SQLite) each is a plain P2 credential read like `cat ~/.ssh/id_rsa`, and approval
// policy never denies it.
func TestSmuggledCredentialReadsThroughTheBroker(t *testing.T) {
	ctx := context.Background()
	const home = "/home/u"
	withHome := func(o *BrokerOptions) { o.Preflight = preflight.Options{Home: home} }
	def, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{}), withHome)
	never, _ := newBroker(t, openDB(t, t.TempDir()), effective(t, Settings{ApprovalPolicy: "never"}), withHome)
	for _, cmd := range []string{
		"wc --files0-from=$HOME/.ssh/id_rsa",
		"du --files0-from=$HOME/.ssh/id_rsa",
		"date -f$HOME/.ssh/id_rsa",
		"cat /proc/self/cwd/../../.ssh/id_rsa",
		"xargs -a ~/.ssh/id_rsa echo",
		"grep -f ~/.aws/credentials x",
	} {
		req := Request{Tool: ToolBash, Params: params("command", cmd), Context: Context{Session: "claude:s1", Department: "dev",
			Cwd: home + "/src/app", Policy: PolicySummary{Mode: "full-access"}}}
		d := def.Check(ctx, req).Decision
		if d.Tier != P2 || d.Verdict != Ask || d.InteractiveOnly || !strings.Contains(strings.Join(d.Reasons, "\n"), "SSH keys") && !strings.Contains(strings.Join(d.Reasons, "\n"), "AWS") {
			t.Errorf("%s: %s at %s by %s (%v), want a P2 ask that says what it reads", cmd, d.Verdict, d.Tier, d.Layer, d.Reasons)
		}
		if d := never.Check(ctx, req).Decision; d.Verdict == Allow {
			t.Errorf("%s: allowed under never (%s, %v)", cmd, d.Layer, d.Reasons)
		}
	}
}
