package permission

import (
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"testing"
)

// scaleRules are n rules each with a first word of its own, and every tenth one generic
// (a pattern starting with a wildcard): the shape that made the index words × rules.
func scaleRules(n int) []Rule {
	rules := make([]Rule, 0, n)
	for i := 0; i < n; i++ {
		r := Rule{Tool: "bash", Pattern: fmt.Sprintf("tool%d run *", i), Action: ActionAllow, Trusted: true}
		if i%10 == 0 {
			r.Pattern = fmt.Sprintf("*--flag-%d*", i)
			r.Action = ActionAsk
		}
		rules = append(rules, r)
	}
	return rules
}

// Indexing the rules costs allocations in proportion to their number, not to words ×
// generic rules (counted, not timed).
func TestRuleIndexIsLinear(t *testing.T) {
	perRule := func(n int) float64 {
		rs, err := NewRuleSet(scaleRules(n))
		if err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(1, func() {
			rs.merged.Clear()
			rs.cached.Store(0)
			rs.index("bash")
		}) / float64(n)
	}
	bytesPerRule := func(n int) float64 {
		rs, err := NewRuleSet(scaleRules(n))
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rs.index("bash")
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	a, b := perRule(500), perRule(5000)
	if b > 2*a || b > 4 {
		t.Fatalf("index allocations per rule: %.2f at 500 rules, %.2f at 5,000", a, b)
	}
	ba, bb := bytesPerRule(500), bytesPerRule(5000)
	if bb > 2*ba {
		t.Fatalf("index bytes per rule: %.0f at 500 rules, %.0f at 5,000", ba, bb)
	}
	t.Logf("index per rule: %.2f allocations and %.0f bytes at 500 rules, %.2f and %.0f at 5,000", a, ba, b, bb)
}

// The index keeps configuration order across a word's rules and the generic ones: the
// result equals a plain scan of every rule.
func TestRuleIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"git", "npm", "rm", "make"}
	patterns := []string{"%s *", "%s push *", "*", "* --force*", "%s", "?%s *", "%s*"}
	actions := []Action{ActionAllow, ActionAsk, ActionDeny}
	for round := 0; round < 200; round++ {
		var rules []Rule
		for i := 0; i < 12; i++ {
			p := patterns[rng.Intn(len(patterns))]
			if strings.Contains(p, "%s") {
				p = fmt.Sprintf(p, words[rng.Intn(len(words))])
			}
			rules = append(rules, Rule{Tool: "bash", Pattern: p, Action: actions[rng.Intn(len(actions))], Trusted: true})
		}
		rs, err := NewRuleSet(rules)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"git push --force", "git status", "npm test", "rm -rf x", "make", "ls", "gitx push"} {
			got := rs.Evaluate("bash", s, nil)
			want := scan(rules, s)
			if got.Action != want.Action || (got.Rule == nil) != (want.Rule == nil) || got.Rule != nil && *got.Rule != *want.Rule {
				t.Fatalf("rules %v, %q: index says %v, scan says %v", rules, s, got, want)
			}
		}
	}
}

// scan is the rule semantics without an index: the first matching deny, else the last
// matching allow or ask.
func scan(rules []Rule, s string) RuleMatch {
	for i := range rules {
		if rules[i].Action == ActionDeny && CompilePattern(rules[i].Pattern).Match(s) {
			return RuleMatch{Action: ActionDeny, Rule: &rules[i]}
		}
	}
	for i := len(rules) - 1; i >= 0; i-- {
		if rules[i].Action != ActionDeny && CompilePattern(rules[i].Pattern).Match(s) {
			return RuleMatch{Action: rules[i].Action, Rule: &rules[i]}
		}
	}
	return RuleMatch{}
}
