package config

import (
	"slices"
	"testing"
)

func parsed(t testing.TB, text string) File {
	t.Helper()
	f, err := Parse("config.toml", []byte(text))
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	return f
}

// Each answer-path key: what loosens it waits, what tightens it (or leaves it) does not.
func TestLoosened(t *testing.T) {
	for _, tt := range []struct {
		name, cur, next string
		want            []string
	}{
		{"tty proof", ``, "[approvals]\nterminal_proof = \"tty\"", []string{"approvals.terminal_proof"}},
		{"back to os", "[approvals]\nterminal_proof = \"tty\"", "[approvals]\nterminal_proof = \"os\"", nil},
		{"a PAM service", ``, "[approvals]\npam_service = \"su\"", []string{"approvals.pam_service"}},
		{"on-failure", ``, `approval_policy = "on-failure"`, []string{"approval_policy"}},
		{"never from untrusted", `approval_policy = "untrusted"`, `approval_policy = "never"`, []string{"approval_policy"}},
		{"untrusted", ``, `approval_policy = "untrusted"`, nil},
		{"removing untrusted", `approval_policy = "untrusted"`, ``, []string{"approval_policy"}},
		{"auto review", ``, `approvals_reviewer = "auto_review"`, []string{"approvals_reviewer"}},
		{"a reviewer command", ``, "[reviewer]\ncommand = [\"yes\"]", []string{"reviewer"}},
		{"no reviewer command", "[reviewer]\ncommand = [\"yes\"]", ``, nil},
		{"a lower tier", "[permission.tiers]\nbash = \"P2\"", "[permission.tiers]\nbash = \"P1\"", []string{"permission.tiers"}},
		{"a higher tier", "[permission.tiers]\nbash = \"P1\"", "[permission.tiers]\nbash = \"P2\"", nil},
		{"a new P0 tier", ``, "[permission.tiers]\nbash = \"P0\"", []string{"permission.tiers"}},
		{"an allow rule", ``, "[[permission.rules]]\ntool = \"bash\"\npattern = \"*\"\naction = \"allow\"", []string{"permission.rules"}},
		{"an allow rule removed", "[[permission.rules]]\ntool = \"bash\"\npattern = \"*\"\naction = \"allow\"", ``, nil},
		{"a deny rule removed", "[[permission.rules]]\ntool = \"bash\"\npattern = \"rm *\"\naction = \"deny\"", ``, []string{"permission.rules"}},
		{"full access", ``, `sandbox_mode = "danger-full-access"`, []string{"sandbox_mode"}},
		{"read-only", ``, `sandbox_mode = "read-only"`, nil},
		{"network on", ``, "[sandbox_workspace_write]\nnetwork_access = true", []string{"sandbox_workspace_write.network_access"}},
		{"allowlist from on", "[sandbox_workspace_write]\nnetwork_access = true", "[sandbox_workspace_write]\nnetwork_access = \"allowlist\"", nil},
		{"a writable root", ``, "[sandbox_workspace_write]\nwritable_roots = [\"/srv\"]", []string{"sandbox_workspace_write.writable_roots"}},
		{"an allowed domain", ``, "[network]\nallowed_domains = [\"example.com\"]", []string{"network.allowed_domains"}},
		{"a denied domain removed", "[network]\ndenied_domains = [\"evil.test\"]", ``, []string{"network.denied_domains"}},
		{"allow local", ``, "[network]\nallow_local = true", []string{"network.allow_local"}},
		{"ask unknown off", ``, "[network]\nask_unknown = false", nil},
		{"a protected path removed", "[isolation]\nprotected = [\"~/.aws\"]", ``, []string{"isolation.protected"}},
		{"more memory", ``, "[limits]\nmemory = \"max\"", []string{"limits.memory"}},
		{"fewer pids", ``, "[limits]\npids = 64", nil},
		{"more pids", ``, "[limits]\npids = 100000", []string{"limits.pids"}},
		{"a profile", ``, `profile = "full-access"`, []string{"profile"}},
		{"a profile with a reviewer", "[reviewer]\ncommand = [\"r\"]", "profile = \"approve-for-me\"\n[reviewer]\ncommand = [\"r\"]", []string{"profile"}},
		{"a stricter profile", ``, `profile = "read-only"`, nil},
		{"from full access to ask", `profile = "full-access"`, `profile = "ask"`, nil},
		{"the chosen profile redefined", "profile = \"mine\"\n[profiles.mine]\nsandbox_mode = \"read-only\"", "profile = \"mine\"\n[profiles.mine]\nsandbox_mode = \"full-access\"", []string{"profile"}},
		{"a hook", ``, "[[hooks.before_tool_use]]\ncommand = [\"true\"]", []string{"hooks"}},
		{"a workspace root", ``, "[workspace]\nroots = [\"/\"]", []string{"workspace.roots"}},
		{"a profile a task may use, redefined", "[profiles.mine]\nsandbox_mode = \"read-only\"", "[profiles.mine]\nsandbox_mode = \"full-access\"", []string{"profile"}},
		{"a new profile with full access", ``, "[profiles.mine]\nsandbox_mode = \"full-access\"", []string{"profile"}},
		{"a new strict profile", ``, "[profiles.mine]\nsandbox_mode = \"read-only\"", nil},
		{"not waiting for unattended questions", "[approvals]\nwait_unattended = true", ``, []string{"approvals.wait_unattended"}},
		{"unrelated", ``, "[dispatch]\nconcurrency = 4", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cur, next := parsed(t, tt.cur), parsed(t, tt.next)
			if got := Loosened(cur, next); !slices.Equal(got, tt.want) {
				t.Fatalf("Loosened = %v; want %v", got, tt.want)
			}
		})
	}
}

// Whatever two files say, what takes effect never loosens the one in force, and what
// does not loosen takes effect as written.
func FuzzGuardedNeverLoosens(f *testing.F) {
	for _, s := range [][2]string{
		{``, "[approvals]\nterminal_proof = \"tty\"\n[limits]\npids = 64"},
		{`approval_policy = "untrusted"`, "approval_policy = \"never\"\nsandbox_mode = \"read-only\""},
		{"[permission.tiers]\nbash = \"P2\"", "[permission.tiers]\nbash = \"P0\"\nedit = \"P2\""},
		{"[network]\nallowed_domains = [\"a.test\"]", "[network]\nallowed_domains = [\"b.test\"]\nallow_local = true"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		cur, err := Parse("a.toml", []byte(a))
		if err != nil {
			return
		}
		next, err := Parse("b.toml", []byte(b))
		if err != nil {
			return
		}
		got, keys := Guarded(cur, next)
		if l := Loosened(cur, got); len(l) != 0 {
			t.Fatalf("in force loosens %v (held %v)", l, keys)
		}
		if len(keys) == 0 && !slices.Equal(Loosened(next, got), nil) {
			t.Fatal("a file that loosens nothing was changed")
		}
	})
}
