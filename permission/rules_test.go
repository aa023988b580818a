package permission

import "testing"

func TestPatternMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"git status *", "git status", true},
		{"git status *", "git status --short", true},
		{"git status *", "git statusx", false},
		{"git status *", "git stat", false},
		{"git status", "git status", true},
		{"git status", "git status -s", false},
		{"npm run ?est", "npm run test", true},
		{"npm run ?est", "npm run tst", false},
		{"*", "", true},
		{"*", "anything at all", true},
		{"rm *", "rm -rf /", true},
		{"/work/*", "/work/a/b/c", true},
		{"/work/*", "/workx", false},
		{"*.go", "main.go", true},
		{"*.go", "main.gox", false},
		{"a*b*c", "a123b456c", true},
		{"a*b*c", "a123b456", false},
		{"git * *", "git push", true},
		{"git * *", "git", false},
		{"é?", "éü", true},
		{"make *", "make", true},
		{"make*", "make", true},
		{"ma?e *", "make", true},
	}
	for _, c := range cases {
		if got := CompilePattern(c.pattern).Match(c.s); got != c.want {
			t.Errorf("%q matches %q = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}

func TestRulesPrecedence(t *testing.T) {
	rules := []Rule{
		{Tool: "bash", Pattern: "rm *", Action: ActionDeny, Trusted: true},
		{Tool: "bash", Pattern: "*", Action: ActionAsk, Trusted: true},
		{Tool: "bash", Pattern: "git *", Action: ActionAllow, Trusted: true},
		{Tool: "bash", Pattern: "git push *", Action: ActionAsk, Trusted: true},
		{Tool: "bash", Pattern: "rm -r build", Action: ActionAllow, Trusted: true},
		{Tool: "*", Pattern: "/etc/*", Action: ActionDeny, Trusted: true},
		{Tool: "web_fetch", Pattern: "https://docs.*", Action: ActionAllow, Trusted: true},
		{Tool: "bash", Pattern: "curl *", Action: ActionAllow, Trusted: false}, // untrusted allow: dropped
		{Tool: "bash", Pattern: "make deploy*", Action: ActionDeny, Trusted: false},
	}
	rs, err := NewRuleSet(rules)
	if err != nil {
		t.Fatal(err)
	}
	seg := func(src, unwrapped string) Segment { return Segment{Source: src, Unwrapped: unwrapped} }
	cases := []struct {
		tool, subject string
		segments      []Segment
		want          Action
		pattern       string
	}{
		{"bash", "git status", nil, ActionAllow, "git *"},
		{"bash", "git push origin", nil, ActionAsk, "git push *"},
		{"bash", "rm -r build", nil, ActionDeny, "rm *"}, // a later allow does not beat a deny
		{"bash", "ls", nil, ActionAsk, "*"},
		{"bash", "curl x", nil, ActionAsk, "*"},
		{"bash", "make deploy prod", nil, ActionDeny, "make deploy*"},
		{"read_file", "/etc/passwd", nil, ActionDeny, "/etc/*"},
		{"bash", "/etc/x", nil, ActionDeny, "/etc/*"},
		{"web_fetch", "https://docs.go.dev", nil, ActionAllow, "https://docs.*"},
		{"web_fetch", "https://evil", nil, "", ""},
		{"write_file", "/work/a", nil, "", ""},
		// Several segments: each must be allowed.
		{"bash", "git status; git log", []Segment{seg("git status", "git status"), seg("git log", "git log")}, ActionAllow, "git *"},
		{"bash", "git status && ls", []Segment{seg("git status", "git status"), seg("ls", "ls")}, ActionAsk, "*"},
		// Deny matches a segment and its unwrapped form.
		{"bash", "git status; sudo rm -rf x", []Segment{seg("git status", "git status"), seg("sudo rm -rf x", "rm -rf x")}, ActionDeny, "rm *"},
	}
	for _, c := range cases {
		m := rs.Evaluate(c.tool, c.subject, c.segments)
		if m.Action != c.want {
			t.Errorf("Evaluate(%s, %q) = %q, want %q", c.tool, c.subject, m.Action, c.want)
			continue
		}
		if c.pattern != "" && (m.Rule == nil || m.Rule.Pattern != c.pattern) {
			t.Errorf("Evaluate(%s, %q) matched %+v, want pattern %q", c.tool, c.subject, m.Rule, c.pattern)
		}
	}
}

func TestRulesSegmentsWithoutAsk(t *testing.T) {
	rs, _ := NewRuleSet([]Rule{{Tool: "bash", Pattern: "git status *", Action: ActionAllow, Trusted: true}})
	m := rs.Evaluate("bash", "git status; rm -rf ~", []Segment{{Source: "git status", Unwrapped: "git status"}, {Source: "rm -rf ~", Unwrapped: "rm -rf ~"}})
	if m.Action != "" {
		t.Fatalf("git status * allowed a compound command with rm: %+v", m)
	}
}

func TestRuleSetErrors(t *testing.T) {
	if _, err := NewRuleSet([]Rule{{Tool: "bash", Pattern: "x", Action: "permit", Trusted: true}}); err == nil {
		t.Fatal("action permit accepted")
	}
	if _, err := NewRuleSet([]Rule{{Pattern: "x", Action: ActionDeny, Trusted: true}}); err == nil {
		t.Fatal("empty tool accepted")
	}
}
