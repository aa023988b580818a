package permission

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/airlock-app/airlock/api"
)

// Action is what a matching rule does.
type Action = api.RuleAction

// Rule actions.
const (
	ActionAllow Action = "allow"
	ActionAsk   Action = "ask"
	ActionDeny  Action = "deny"
)

// Rule is one [[permission.rules]] entry. Tool may itself use wildcards ("*" for every
// tool). Rules that are not Trusted (from a project policy file) only ever deny.
type Rule = api.Rule

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
	merged   sync.Map     // tool → *ruleIndex
	cached   atomic.Int64 // entries in merged, bounded so unknown tool names cannot grow it
}

// maxCachedTools bounds the per-tool index cache.
const maxCachedTools = 1024

// ruleIndex holds one tool's rules in configuration order, indexed by the first word
// of their pattern so that a subject is only matched against rules that can match it.
type ruleIndex struct {
	byWord  map[string][]*compiledRule // rules whose first word is known, by that word, in order
	generic []*compiledRule            // rules whose pattern starts with a wildcard within its first word
}

// candidates are the rules that may match a subject: those of its first word and the
// generic ones, each list in configuration order. They are walked merged rather than
// copied into every word's list, which cost words × rules when the index was built.
type candidates struct{ word, generic []*compiledRule }

// first returns the first candidate, in configuration order, for which f is true.
func (c candidates) first(f func(*compiledRule) bool) *compiledRule {
	i, j := 0, 0
	for i < len(c.word) || j < len(c.generic) {
		var r *compiledRule
		if j >= len(c.generic) || i < len(c.word) && c.word[i].index < c.generic[j].index {
			r, i = c.word[i], i+1
		} else {
			r, j = c.generic[j], j+1
		}
		if f(r) {
			return r
		}
	}
	return nil
}

// last returns the last candidate, in configuration order, for which f is true.
func (c candidates) last(f func(*compiledRule) bool) *compiledRule {
	i, j := len(c.word)-1, len(c.generic)-1
	for i >= 0 || j >= 0 {
		var r *compiledRule
		if j < 0 || i >= 0 && c.word[i].index > c.generic[j].index {
			r, i = c.word[i], i-1
		} else {
			r, j = c.generic[j], j-1
		}
		if f(r) {
			return r
		}
	}
	return nil
}

// firstWord returns the text before the first space.
func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}

// patternWord returns the first word every match of p must start with, if fixed.
func patternWord(p Pattern) (string, bool) {
	if !p.glob {
		return firstWord(p.src), true
	}
	if i := strings.IndexByte(p.prefix, ' '); i >= 0 {
		return p.prefix[:i], true
	}
	return "", false
}

func newRuleIndex(rules []*compiledRule) *ruleIndex {
	idx := &ruleIndex{byWord: map[string][]*compiledRule{}}
	for _, r := range rules {
		if w, ok := patternWord(r.pattern); ok {
			idx.byWord[w] = append(idx.byWord[w], r)
			continue
		}
		idx.generic = append(idx.generic, r)
	}
	return idx
}

// forSubject returns the rules that may match s.
func (idx *ruleIndex) forSubject(s string) candidates {
	return candidates{word: idx.byWord[firstWord(s)], generic: idx.generic}
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

// index returns the indexed rules of a tool (built once per tool).
func (rs *RuleSet) index(tool string) *ruleIndex {
	if c, ok := rs.merged.Load(tool); ok {
		return c.(*ruleIndex)
	}
	idx := newRuleIndex(rs.merge(tool))
	if rs.cached.Add(1) <= maxCachedTools {
		rs.merged.Store(tool, idx)
	}
	return idx
}

func (rs *RuleSet) merge(tool string) []*compiledRule {
	named := rs.byTool[tool]
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
	idx := rs.index(tool)
	if len(idx.generic) == 0 && len(idx.byWord) == 0 {
		return RuleMatch{}
	}
	if m, ok := firstDeny(idx, subject); ok {
		return m
	}
	for _, s := range segments {
		if m, ok := firstDeny(idx, s.Source); ok {
			return m
		}
		if s.Unwrapped != s.Source {
			if m, ok := firstDeny(idx, s.Unwrapped); ok {
				return m
			}
		}
	}
	if len(segments) <= 1 {
		return lastAllowAsk(idx.forSubject(subject), subject)
	}
	var allowed RuleMatch
	for _, s := range segments {
		m := lastAllowAsk(idx.forSubject(s.Source), s.Source)
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

func firstDeny(idx *ruleIndex, s string) (RuleMatch, bool) {
	c := idx.forSubject(s).first(func(c *compiledRule) bool { return c.Action == ActionDeny && c.pattern.Match(s) })
	if c == nil {
		return RuleMatch{}, false
	}
	return RuleMatch{Action: ActionDeny, Rule: &c.Rule}, true
}

func lastAllowAsk(cands candidates, s string) RuleMatch {
	c := cands.last(func(c *compiledRule) bool { return c.Action != ActionDeny && c.pattern.Match(s) })
	if c == nil {
		return RuleMatch{}
	}
	return RuleMatch{Action: c.Action, Rule: &c.Rule}
}
