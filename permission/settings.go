package permission

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Settings are the permission keys of config.toml (and of a project's
// .airlock/policy.toml). The app decodes the file straight into it: go-toml ignores the
// keys that belong to other packages.
type Settings struct {
	ApprovalPolicy    string            `toml:"approval_policy" json:"approval_policy,omitempty"`
	ApprovalsReviewer string            `toml:"approvals_reviewer" json:"approvals_reviewer,omitempty"`
	Permission        PermissionSection `toml:"permission" json:"permission"`
	Hooks             HooksSection      `toml:"hooks" json:"hooks"`
	Reviewer          ReviewerSection   `toml:"reviewer" json:"reviewer"`
	Ops               OpsSection        `toml:"ops" json:"ops"`
}

// PermissionSection is [permission].
type PermissionSection struct {
	Tiers map[string]string `toml:"tiers" json:"tiers,omitempty"` // tool → P0 | P1 | P2
	Rules []RuleSetting     `toml:"rules" json:"rules,omitempty"`
	// RequestTimeout bounds how long a request waits for the person ("" or "0": forever).
	RequestTimeout string `toml:"request_timeout" json:"request_timeout,omitempty"`
}

// RuleSetting is one [[permission.rules]] entry.
type RuleSetting struct {
	Tool    string `toml:"tool" json:"tool"`
	Pattern string `toml:"pattern" json:"pattern"`
	Action  string `toml:"action" json:"action"`
}

// HooksSection is [hooks].
type HooksSection struct {
	BeforeToolUse []HookSetting `toml:"before_tool_use" json:"before_tool_use,omitempty"`
	AfterToolUse  []HookSetting `toml:"after_tool_use" json:"after_tool_use,omitempty"`
}

// HookSetting is one [[hooks.before_tool_use]] or [[hooks.after_tool_use]] entry.
type HookSetting struct {
	Command []string `toml:"command" json:"command"`
	Tools   []string `toml:"tools" json:"tools,omitempty"`     // empty: every tool; wildcards allowed
	Timeout string   `toml:"timeout" json:"timeout,omitempty"` // default 10s
}

// ReviewerSection is [reviewer].
type ReviewerSection struct {
	Command []string `toml:"command" json:"command,omitempty"`
	Timeout string   `toml:"timeout" json:"timeout,omitempty"` // default 60s
}

// OpsSection is [ops]; only strict matters here.
type OpsSection struct {
	Strict *bool `toml:"strict" json:"strict,omitempty"`
}

// Layer names of a resolved setting.
const (
	FromDefault = "default"
	FromFile    = "file"
	FromProject = "project"
	FromEnv     = "env"
	FromFlag    = "flag"
	// FromProfile is a chosen profile's setting, beneath the keys of its level.
	FromProfile = "profile"
)

// ProfileSettings are a chosen profile's permission settings (approval policy,
// reviewer, tiers). Name is "" when no profile was chosen at that level.
type ProfileSettings struct {
	Name     string
	Settings Settings
}

// Defaults.
const (
	DefaultHookTimeout     = 10 * time.Second
	DefaultReviewerTimeout = 60 * time.Second
)

// EnvApprovalPolicy overrides approval_policy.
const EnvApprovalPolicy = "AIRLOCK_APPROVAL_POLICY"

// ProjectPolicy is one untrusted project policy file.
type ProjectPolicy struct {
	Path     string
	Settings Settings
}

// Flags are command-line overrides; empty means not given.
type Flags struct {
	ApprovalPolicy    string
	ApprovalsReviewer string
}

// Sources are the inputs of Resolve.
type Sources struct {
	File     Settings // the trusted user configuration
	FilePath string   // for messages, e.g. ~/.config/airlock/config.toml
	Projects []ProjectPolicy
	// LookupEnv reads the environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	Flags     Flags
	// FileProfile, EnvProfile and FlagProfile are the profiles chosen by config.toml, by
	// AIRLOCK_PROFILE and by --profile (or a run's department or task): each sits just
	// beneath the keys of its level.
	FileProfile, EnvProfile, FlagProfile ProfileSettings
	// RunProfile is the profile a request's run recorded (its department's or task's).
	// A request names its run itself, which proves nothing, so this profile may only
	// tighten: tiers raised, a stricter approval policy; the rest is ignored.
	RunProfile ProfileSettings
	// TrustProject applies the project files in full (AIRLOCK_TRUST_PROJECT_CONFIG=1,
	// parsed once by the caller); otherwise they may only tighten.
	TrustProject bool
}

// Hook is a resolved hook command.
type Hook struct {
	Command []string      `json:"command"`
	Tools   []string      `json:"tools,omitempty"`
	Timeout time.Duration `json:"timeout"`
	Source  string        `json:"source,omitempty"`
}

// Effective is the resolved permission configuration, with the layer of each setting
// for the UI.
type Effective struct {
	ApprovalPolicy     ApprovalPolicy    `json:"approval_policy"`
	ApprovalPolicyFrom string            `json:"approval_policy_from"`
	Reviewer           ReviewerMode      `json:"reviewer"`
	ReviewerFrom       string            `json:"reviewer_from"`
	ReviewerCommand    []string          `json:"reviewer_command,omitempty"`
	ReviewerTimeout    time.Duration     `json:"reviewer_timeout"`
	Tiers              map[string]Tier   `json:"tiers"`      // configured tiers only (defaults not repeated)
	TiersFrom          map[string]string `json:"tiers_from"` // tool → layer
	Rules              []Rule            `json:"rules"`
	BeforeHooks        []Hook            `json:"before_hooks,omitempty"`
	AfterHooks         []Hook            `json:"after_hooks,omitempty"`
	OpsStrict          bool              `json:"ops_strict"`
	OpsStrictFrom      string            `json:"ops_strict_from"`
	RequestTimeout     time.Duration     `json:"request_timeout"` // 0: wait forever
	ProjectTrusted     bool              `json:"project_trusted"`
	// Profile names the strongest profile that was chosen ("" when none was).
	Profile             string   `json:"profile,omitempty"`
	IgnoredFromProjects []string `json:"ignored_from_projects,omitempty"` // what the UI must say it ignored
}

// DefaultEffective is the configuration with nothing set: on-request, user, no rules.
func DefaultEffective() Effective {
	e, _ := Resolve(Sources{LookupEnv: func(string) (string, bool) { return "", false }})
	return e
}

// ParseApprovalPolicy validates an approval policy name.
func ParseApprovalPolicy(s string) (ApprovalPolicy, error) {
	switch p := ApprovalPolicy(strings.TrimSpace(s)); p {
	case PolicyUntrusted, PolicyOnRequest, PolicyOnFailure, PolicyNever:
		return p, nil
	}
	return "", fmt.Errorf("%q: want untrusted, on-request, on-failure or never", s)
}

// ParseReviewerMode validates approvals_reviewer.
func ParseReviewerMode(s string) (ReviewerMode, error) {
	switch m := ReviewerMode(strings.TrimSpace(s)); m {
	case ReviewerUser, ReviewerAuto:
		return m, nil
	}
	return "", fmt.Errorf("%q: want user or auto_review", s)
}

// policyRank orders approval policies from the loosest to the strictest.
func policyRank(p ApprovalPolicy) int {
	switch p {
	case PolicyNever:
		return 0
	case PolicyOnFailure:
		return 1
	case PolicyOnRequest:
		return 2
	}
	return 3
}

// Resolve validates the sources and applies precedence flag > env > file > default.
// Untrusted project policy files only tighten, on top of every other layer: their deny
// rules, tier raises and a stricter approval policy are kept; everything else is listed
// in IgnoredFromProjects. Trusted ones (TrustProject) sit between the file and the
// environment. Errors name the key, its source and the valid values. Callers go through
// the core's one resolution (app/policy), which loads the project files.
func Resolve(src Sources) (Effective, error) {
	lookup := src.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	file := src.FilePath
	if file == "" {
		file = "config.toml"
	}
	e := Effective{
		ApprovalPolicy: PolicyOnRequest, ApprovalPolicyFrom: FromDefault,
		Reviewer: ReviewerUser, ReviewerFrom: FromDefault,
		ReviewerTimeout: DefaultReviewerTimeout,
		Tiers:           map[string]Tier{}, TiersFrom: map[string]string{},
		OpsStrictFrom: FromDefault,
	}
	e.ProjectTrusted = src.TrustProject
	var errs []error
	profile := func(p ProfileSettings) {
		if p.Name == "" {
			return
		}
		e.Profile = p.Name
		if err := e.apply(p.Settings, "profile "+p.Name, FromProfile, true); err != nil {
			errs = append(errs, err)
		}
	}
	profile(src.FileProfile)
	if err := e.apply(src.File, file, FromFile, true); err != nil {
		errs = append(errs, err)
	}
	if e.ProjectTrusted {
		for _, p := range src.Projects {
			if err := e.apply(p.Settings, p.Path, FromProject, true); err != nil {
				errs = append(errs, err)
			}
		}
	}
	profile(src.EnvProfile)
	if v, ok := lookup(EnvApprovalPolicy); ok && v != "" {
		p, err := ParseApprovalPolicy(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%s: %w", EnvApprovalPolicy, v, err))
		} else {
			e.ApprovalPolicy, e.ApprovalPolicyFrom = p, FromEnv
		}
	}
	profile(src.FlagProfile)
	if v := src.Flags.ApprovalPolicy; v != "" {
		p, err := ParseApprovalPolicy(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("--approval-policy %s: %w", v, err))
		} else {
			e.ApprovalPolicy, e.ApprovalPolicyFrom = p, FromFlag
		}
	}
	if v := src.Flags.ApprovalsReviewer; v != "" {
		m, err := ParseReviewerMode(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("--approvals-reviewer %s: %w", v, err))
		} else {
			e.Reviewer, e.ReviewerFrom = m, FromFlag
		}
	}
	if p := src.RunProfile; p.Name != "" {
		e.Profile = p.Name
		if err := e.apply(p.Settings, "profile "+p.Name, FromProfile, false); err != nil {
			errs = append(errs, err)
		}
	}
	if !e.ProjectTrusted {
		// After the environment and the flags: what a checkout tightens stays tight.
		for _, p := range src.Projects {
			if err := e.apply(p.Settings, p.Path, FromProject, false); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if e.Reviewer == ReviewerAuto && len(e.ReviewerCommand) == 0 && e.ReviewerFrom == FromProfile {
		errs = append(errs, fmt.Errorf("profile %s has approvals_reviewer = \"auto_review\", which needs [reviewer] command = [\"/path/to/reviewer\"] in %s; or choose a profile that asks you (ask)", e.Profile, file))
	} else if e.Reviewer == ReviewerAuto && len(e.ReviewerCommand) == 0 {
		errs = append(errs, fmt.Errorf("%s: approvals_reviewer = \"auto_review\" needs [reviewer] command = [\"/path/to/reviewer\"]; or set approvals_reviewer = \"user\"", file))
	}
	if len(errs) > 0 {
		return Effective{}, errors.Join(errs...)
	}
	if _, err := NewRuleSet(e.Rules); err != nil {
		return Effective{}, err
	}
	return e, nil
}

// apply layers one settings file onto e.
func (e *Effective) apply(s Settings, path, layer string, trusted bool) error {
	var errs []error
	keyErr := func(key string, err error) { errs = append(errs, fmt.Errorf("%s: %s %w", path, key, err)) }
	ignore := func(what string) {
		why := " (project policy files may only tighten)"
		if layer == FromProfile {
			why = " (a run's profile may only tighten what the configuration says)"
		}
		e.IgnoredFromProjects = append(e.IgnoredFromProjects, path+": "+what+why)
	}

	if s.ApprovalPolicy != "" {
		p, err := ParseApprovalPolicy(s.ApprovalPolicy)
		switch {
		case err != nil:
			keyErr("approval_policy =", err)
		case trusted:
			e.ApprovalPolicy, e.ApprovalPolicyFrom = p, layer
		case policyRank(p) > policyRank(e.ApprovalPolicy):
			e.ApprovalPolicy, e.ApprovalPolicyFrom = p, layer
		default:
			ignore("approval_policy = " + s.ApprovalPolicy)
		}
	}
	if s.ApprovalsReviewer != "" {
		m, err := ParseReviewerMode(s.ApprovalsReviewer)
		switch {
		case err != nil:
			keyErr("approvals_reviewer =", err)
		case trusted:
			e.Reviewer, e.ReviewerFrom = m, layer
		default:
			ignore("approvals_reviewer")
		}
	}
	for tool, t := range s.Permission.Tiers {
		tier, ok := ParseTier(t)
		switch {
		case !ok:
			keyErr(fmt.Sprintf("[permission.tiers] %s = %q:", tool, t), errors.New("want P0, P1 or P2"))
		case trusted:
			e.Tiers[tool], e.TiersFrom[tool] = tier, layer
		default:
			cur, had := e.Tiers[tool]
			if !had {
				cur = NewTierTable(nil).For(tool, "")
			}
			if tier.Rank() > cur.Rank() {
				e.Tiers[tool], e.TiersFrom[tool] = tier, layer
			} else if tier != cur {
				ignore(fmt.Sprintf("[permission.tiers] %s = %q", tool, t))
			}
		}
	}
	for i, r := range s.Permission.Rules {
		act := Action(strings.TrimSpace(r.Action))
		switch act {
		case ActionAllow, ActionAsk, ActionDeny:
		default:
			keyErr(fmt.Sprintf("[[permission.rules]] #%d action = %q:", i+1, r.Action), errors.New("want allow, ask or deny"))
			continue
		}
		if r.Tool == "" {
			keyErr(fmt.Sprintf("[[permission.rules]] #%d:", i+1), errors.New("tool is missing: name a tool or use \"*\""))
			continue
		}
		if !trusted && act != ActionDeny {
			ignore(fmt.Sprintf("[[permission.rules]] %s %s %q", act, r.Tool, r.Pattern))
			continue
		}
		e.Rules = append(e.Rules, Rule{Tool: r.Tool, Pattern: r.Pattern, Action: act, Trusted: trusted, Source: path})
	}
	if s.Permission.RequestTimeout != "" {
		d, err := parseDuration(s.Permission.RequestTimeout)
		switch {
		case err != nil:
			keyErr("[permission] request_timeout =", err)
		case trusted:
			e.RequestTimeout = d
		default:
			ignore("[permission] request_timeout")
		}
	}
	for _, kind := range []struct {
		name string
		list []HookSetting
		dst  *[]Hook
	}{{"before_tool_use", s.Hooks.BeforeToolUse, &e.BeforeHooks}, {"after_tool_use", s.Hooks.AfterToolUse, &e.AfterHooks}} {
		for i, h := range kind.list {
			if !trusted {
				ignore("[[hooks." + kind.name + "]]")
				continue
			}
			if len(h.Command) == 0 || h.Command[0] == "" {
				keyErr(fmt.Sprintf("[[hooks.%s]] #%d command:", kind.name, i+1), errors.New("is empty: give the program and its arguments, e.g. [\"/usr/local/bin/my-hook\"]"))
				continue
			}
			timeout := DefaultHookTimeout
			if h.Timeout != "" {
				d, err := parseDuration(h.Timeout)
				if err != nil || d <= 0 {
					keyErr(fmt.Sprintf("[[hooks.%s]] #%d timeout = %q:", kind.name, i+1, h.Timeout), errors.New("want a positive duration such as \"5s\""))
					continue
				}
				timeout = d
			}
			*kind.dst = append(*kind.dst, Hook{Command: h.Command, Tools: h.Tools, Timeout: timeout, Source: path})
		}
	}
	if len(s.Reviewer.Command) > 0 || s.Reviewer.Timeout != "" {
		if !trusted {
			ignore("[reviewer]")
		} else {
			if len(s.Reviewer.Command) > 0 {
				e.ReviewerCommand = s.Reviewer.Command
			}
			if s.Reviewer.Timeout != "" {
				d, err := parseDuration(s.Reviewer.Timeout)
				if err != nil || d <= 0 {
					keyErr(fmt.Sprintf("[reviewer] timeout = %q:", s.Reviewer.Timeout), errors.New("want a positive duration such as \"30s\""))
				} else {
					e.ReviewerTimeout = d
				}
			}
		}
	}
	if s.Ops.Strict != nil {
		if trusted {
			e.OpsStrict, e.OpsStrictFrom = *s.Ops.Strict, layer
		} else {
			ignore("[ops] strict")
		}
	}
	return errors.Join(errs...)
}

func parseDuration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want a duration such as \"30s\" or \"5m\" (\"0\" for none)", s)
	}
	return d, nil
}
