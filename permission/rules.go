package permission

import (
	"fmt"
	"strings"
)

// Action is what a matching rule does.
type Action string

// Rule actions.
const (
	ActionAllow Action = "allow"
	ActionAsk   Action = "ask"
	ActionDeny  Action = "deny"
)

// Rule is one [[permission.rules]] entry. Tool may itself use wildcards ("*" for every
// tool). Rules that are not Trusted (from a project policy file) only ever deny.
type Rule struct {
	Tool    string `json:"tool"`
	Pattern string `json:"pattern"`
	Action  Action `json:"action"`
	Trusted bool   `json:"trusted"`
	Source  string `json:"source,omitempty"` // where it came from, for messages
}

// String renders a rule for reasons and audit.
func (r Rule) String() string {
	return fmt.Sprintf("%s %s %q", r.Action, r.Tool, r.Pattern)
}

type compiledRule struct {
	Rule
	tool    Pattern
	pattern Pattern
	index   int
}

// RuleSet is a compiled, ordered list of rules.
type RuleSet struct {
	byTool   map[string][]*compiledRule // rules whose tool is a plain name
	anyTool  []*compiledRule            // rules whose tool has a wildcard
	hasRules bool
}

// Segment is one simple command of a shell request, as the rules see it.
type Segment struct {
	Source    string // as written, wrappers included ("sudo rm -rf x")
	Unwrapped string // the command after wrappers were stripped ("rm -rf x")
}

// RuleMatch is the result of evaluating the rules.
type RuleMatch struct {
	Action Action // "" when no rule matched
	Rule   *Rule
}

// NewRuleSet compiles rules, dropping allow/ask rules that are not trusted.
func NewRuleSet(rules []Rule) (*RuleSet, error) {
	rs := &RuleSet{byTool: map[string][]*compiledRule{}}
	for i, r := range rules {
		switch r.Action {
		case ActionAllow, ActionAsk, ActionDeny:
		default:
			return nil, fmt.Errorf("permission.rules[%d]: action %q: want allow, ask or deny", i, r.Action)
		}
		if r.Tool == "" {
			return nil, fmt.Errorf("permission.rules[%d]: tool is empty: name a tool or use \"*\"", i)
		}
		if !r.Trusted && r.Action != ActionDeny {
			continue
		}
		c := &compiledRule{Rule: r, tool: CompilePattern(r.Tool), pattern: CompilePattern(r.Pattern), index: i}
		if r.Pattern == "" {
			c.pattern = CompilePattern("*")
		}
		if strings.ContainsAny(r.Tool, "*?") {
			rs.anyTool = append(rs.anyTool, c)
		} else {
			rs.byTool[r.Tool] = append(rs.byTool[r.Tool], c)
		}
		rs.hasRules = true
	}
	return rs, nil
}

// candidates returns the rules for a tool in configuration order.
func (rs *RuleSet) candidates(tool string) []*compiledRule {
	named := rs.byTool[tool]
	if len(rs.anyTool) == 0 {
		return named
	}
	var out []*compiledRule
	i, j := 0, 0
	for i < len(named) || j < len(rs.anyTool) {
		if j >= len(rs.anyTool) || (i < len(named) && named[i].index < rs.anyTool[j].index) {
			out = append(out, named[i])
			i++
			continue
		}
		if rs.anyTool[j].tool.Match(tool) {
			out = append(out, rs.anyTool[j])
		}
		j++
	}
	return out
}

// Evaluate applies the rules to a request's subject. For shell requests, segments are
// its simple commands: a deny matching the whole command or any segment (as written or
// unwrapped) wins; otherwise, with several segments, the command is allowed only when
// every segment's last matching rule allows, and asks when any segment's asks, so
// "git status *" does not allow "git status; rm -rf ~".
func (rs *RuleSet) Evaluate(tool, subject string, segments []Segment) RuleMatch {
	if rs == nil || !rs.hasRules {
		return RuleMatch{}
	}
	cands := rs.candidates(tool)
	if len(cands) == 0 {
		return RuleMatch{}
	}
	for _, c := range cands {
		if c.Action != ActionDeny {
			continue
		}
		if c.pattern.Match(subject) {
			return RuleMatch{Action: ActionDeny, Rule: &c.Rule}
		}
		for _, s := range segments {
			if c.pattern.Match(s.Source) || (s.Unwrapped != s.Source && c.pattern.Match(s.Unwrapped)) {
				return RuleMatch{Action: ActionDeny, Rule: &c.Rule}
			}
		}
	}
	if len(segments) <= 1 {
		return lastAllowAsk(cands, subject)
	}
	var allowed RuleMatch
	for _, s := range segments {
		m := lastAllowAsk(cands, s.Source)
		switch m.Action {
		case ActionAsk:
			return m
		case "":
			return RuleMatch{}
		}
		allowed = m
	}
	return allowed
}

func lastAllowAsk(cands []*compiledRule, s string) RuleMatch {
	for i := len(cands) - 1; i >= 0; i-- {
		c := cands[i]
		if c.Action == ActionDeny {
			continue
		}
		if c.pattern.Match(s) {
			return RuleMatch{Action: c.Action, Rule: &c.Rule}
		}
	}
	return RuleMatch{}
}
