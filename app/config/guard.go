package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// The answer path's keys: what decides who may answer, what asks, and how far a run
// reaches. A reloaded file that loosens one of them (against the configuration in
// force) holds that key at its value in force until the person confirms the file;
// a change that tightens it, or leaves it, takes effect at once. Any process of the
// user can write config.toml, so the file alone never loosens these.
//
// Where no order is known (a PAM service, a hook, a profile's definition), any change
// counts as loosening: the person confirms it.
type guardKey struct {
	key    string
	looser func(cur, next File) bool
	keep   func(dst *File, cur File)
}

// rankOf orders the choices of a key from strictest to loosest; a value not listed
// (and an absent one) takes def's place.
func rankOf(order []string, v *string, def string) int {
	s := def
	if v != nil && *v != "" {
		s = *v
	}
	if i := slices.Index(order, s); i >= 0 {
		return i
	}
	return len(order) // unknown: loosest, so it is confirmed
}

func ranked(key string, order []string, def string, field func(*File) **string) guardKey {
	return guardKey{key: key,
		looser: func(cur, next File) bool {
			return rankOf(order, *field(&next), def) > rankOf(order, *field(&cur), def)
		},
		keep: func(dst *File, cur File) { *field(dst) = *field(&cur) },
	}
}

// changed guards a key whose every change is confirmed.
func changed[T any](key string, field func(*File) *T) guardKey {
	return guardKey{key: key,
		looser: func(cur, next File) bool { return !reflect.DeepEqual(*field(&cur), *field(&next)) },
		keep:   func(dst *File, cur File) { *field(dst) = *field(&cur) },
	}
}

// listed guards a list: growing it loosens (widen true: allowed domains, writable
// roots), or shrinking it does (widen false: denied domains, protected paths).
func listed(key string, widen bool, def []string, field func(*File) *[]string) guardKey {
	get := func(f File) []string {
		if v := *field(&f); v != nil {
			return v
		}
		return def
	}
	return guardKey{key: key,
		looser: func(cur, next File) bool {
			a, b := get(cur), get(next)
			if !widen {
				a, b = b, a
			}
			for _, x := range b {
				if !slices.Contains(a, x) {
					return true
				}
			}
			return false
		},
		keep: func(dst *File, cur File) { *field(dst) = *field(&cur) },
	}
}

// flag guards a boolean whose loose value is loose (def when absent).
func flag(key string, loose, def bool, field func(*File) **bool) guardKey {
	get := func(f File) bool {
		if v := *field(&f); v != nil {
			return *v
		}
		return def
	}
	return guardKey{key: key,
		looser: func(cur, next File) bool { return get(next) == loose && get(cur) != loose },
		keep:   func(dst *File, cur File) { *field(dst) = *field(&cur) },
	}
}

// limit guards a resource limit: a higher one (or "max") loosens.
func limit(key string, parse func(string) (int64, error), def string, field func(*File) **string) guardKey {
	get := func(f File) int64 {
		s := def
		if v := *field(&f); v != nil && *v != "" {
			s = *v
		}
		n, err := parse(s)
		if err != nil || n == 0 { // 0 is "max": no limit
			return math.MaxInt64
		}
		return n
	}
	return guardKey{key: key,
		looser: func(cur, next File) bool { return get(next) > get(cur) },
		keep:   func(dst *File, cur File) { *field(dst) = *field(&cur) },
	}
}

var guardKeys = []guardKey{
	ranked("approvals.terminal_proof", []string{"os", "tty"}, "os", func(f *File) **string { return &f.Approvals.TerminalProof }),
	changed("approvals.pam_service", func(f *File) **string { return &f.Approvals.PAMService }),
	ranked("approval_policy", approvalOrder, "on-request", func(f *File) **string { return &f.ApprovalPolicy }),
	ranked("approvals_reviewer", reviewerOrder, "user", func(f *File) **string { return &f.ApprovalsReviewer }),
	{key: "reviewer",
		looser: func(cur, next File) bool {
			return len(next.Reviewer.Command) > 0 && !reflect.DeepEqual(cur.Reviewer, next.Reviewer)
		},
		keep: func(dst *File, cur File) { dst.Reviewer = cur.Reviewer }},
	{key: "permission.tiers", looser: tiersLooser, keep: func(dst *File, cur File) { dst.Permission.Tiers = cur.Permission.Tiers }},
	{key: "permission.rules", looser: rulesLooser, keep: func(dst *File, cur File) { dst.Permission.Rules = cur.Permission.Rules }},
	changed("hooks", func(f *File) *Hooks { return &f.Hooks }),
	{key: "profile", looser: profileLooser, keep: func(dst *File, cur File) { dst.Profile, dst.Profiles = cur.Profile, cur.Profiles }},
	{key: "sandbox_mode",
		looser: func(cur, next File) bool { return sandboxRank(next.SandboxMode) > sandboxRank(cur.SandboxMode) },
		keep:   func(dst *File, cur File) { dst.SandboxMode = cur.SandboxMode }},
	{key: "sandbox_workspace_write.network_access",
		looser: func(cur, next File) bool {
			return networkRank(next.SandboxWorkspaceWrite.Network()) > networkRank(cur.SandboxWorkspaceWrite.Network())
		},
		keep: func(dst *File, cur File) {
			dst.SandboxWorkspaceWrite.NetworkAccess = cur.SandboxWorkspaceWrite.NetworkAccess
		}},
	listed("sandbox_workspace_write.writable_roots", true, nil, func(f *File) *[]string { return &f.SandboxWorkspaceWrite.WritableRoots }),
	listed("network.allowed_domains", true, nil, func(f *File) *[]string { return &f.Network.AllowedDomains }),
	listed("network.denied_domains", false, nil, func(f *File) *[]string { return &f.Network.DeniedDomains }),
	flag("network.ask_unknown", true, true, func(f *File) **bool { return &f.Network.AskUnknown }),
	flag("network.allow_local", true, false, func(f *File) **bool { return &f.Network.AllowLocal }),
	changed("isolation.backend", func(f *File) **string { return &f.Isolation.Backend }),
	listed("isolation.protected", false, nil, func(f *File) *[]string { return &f.Isolation.Protected }),
	changed("execution_mode", func(f *File) **string { return &f.ExecutionMode }),
	limit("limits.memory", api.ParseMemoryLimit, sandbox.DefaultLimits.Memory, func(f *File) **string { return &f.Limits.Memory }),
	limit("limits.cpu", api.ParseCPULimit, sandbox.DefaultLimits.CPU, func(f *File) **string { return &f.Limits.CPU }),
	{key: "limits.pids",
		looser: func(cur, next File) bool { return pids(next) > pids(cur) },
		keep:   func(dst *File, cur File) { dst.Limits.Pids = cur.Limits.Pids }},
	flag("limits.required", false, false, func(f *File) **bool { return &f.Limits.Required }),
	listed("workspace.roots", true, []string{"~/Airlock"}, func(f *File) *[]string { return &f.Workspace.Roots }),
	flag("ops.strict", false, false, func(f *File) **bool { return &f.Ops.Strict }),
	// Not waiting hands a hook's question to the agent's own prompt, outside Airlock.
	flag("approvals.wait_unattended", false, false, func(f *File) **bool { return &f.Approvals.WaitUnattended }),
}

func sandboxRank(v *string) int {
	if v != nil && *v == "danger-full-access" {
		v = new(string)
		*v = "full-access"
	}
	return rankOf([]string{"read-only", "workspace-write", "full-access"}, v, "workspace-write")
}

func networkRank(n *api.NetworkAccess) int {
	if n == nil {
		return 0
	}
	switch n.Norm() {
	case api.NetworkAllowlist:
		return 1
	case api.NetworkOn:
		return 2
	}
	return 0
}

func pids(f File) int {
	if f.Limits.Pids != nil {
		return *f.Limits.Pids
	}
	return sandbox.DefaultLimits.Pids
}

// withProfile is f with its chosen profile's settings beneath its own keys, as the
// resolution takes them (ok false: the profile cannot be resolved).
func withProfile(f File) (File, bool) {
	p, chosen, err := ChosenProfile(f, "config.toml")
	if err != nil {
		return f, false
	}
	if !chosen {
		return f, true
	}
	set := func(dst **string, v string) {
		if *dst == nil && v != "" {
			*dst = &v
		}
	}
	set(&f.SandboxMode, p.SandboxMode)
	set(&f.ApprovalPolicy, p.ApprovalPolicy)
	set(&f.ApprovalsReviewer, p.Reviewer)
	if f.SandboxWorkspaceWrite.NetworkAccess == nil && p.Network != nil {
		f.SandboxWorkspaceWrite.NetworkAccess = NetworkSetting(*p.Network)
	}
	if len(p.Tiers) > 0 {
		tiers := make(map[string]string, len(p.Tiers)+len(f.Permission.Tiers))
		for k, v := range p.Tiers {
			tiers[k] = v
		}
		for k, v := range f.Permission.Tiers {
			tiers[k] = v
		}
		f.Permission.Tiers = tiers
	}
	return f, true
}

// profileLooser: choosing another profile, or redefining one of [profiles] (a
// department or task may have chosen it), loosens when the settings it brings loosen
// one of the keys it sets.
func profileLooser(cur, next File) bool {
	if reflect.DeepEqual(cur.Profile, next.Profile) && reflect.DeepEqual(cur.Profiles, next.Profiles) {
		return false
	}
	if chosenLooser(cur, next) {
		return true
	}
	for name := range next.Profiles {
		n := File{Profile: &name, Profiles: next.Profiles}
		c := File{} // a new name: against no profile at all
		if _, ok := cur.Profiles[name]; ok {
			c = File{Profile: &name, Profiles: cur.Profiles}
		}
		if chosenLooser(c, n) {
			return true
		}
	}
	return false
}

// chosenLooser: the profile next chooses, beneath its keys, loosens what cur's does.
func chosenLooser(cur, next File) bool {
	c, _ := withProfile(cur)
	n, ok := withProfile(next)
	if !ok {
		return true
	}
	str := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	return sandboxRank(n.SandboxMode) > sandboxRank(c.SandboxMode) ||
		networkRank(n.SandboxWorkspaceWrite.Network()) > networkRank(c.SandboxWorkspaceWrite.Network()) ||
		LooserApproval(str(n.ApprovalPolicy), str(c.ApprovalPolicy)) ||
		looserReviewer(str(n.ApprovalsReviewer), str(c.ApprovalsReviewer)) ||
		tiersLooser(c, n)
}

// tiersLooser: a tool's tier lowered, or a tier removed (the built-in one may be
// lower), or a new tier below P2 (the built-in one may be higher).
func tiersLooser(cur, next File) bool {
	for tool, n := range next.Permission.Tiers {
		if looserTier(n, cur.Permission.Tiers[tool]) {
			return true
		}
	}
	for tool := range cur.Permission.Tiers {
		if _, ok := next.Permission.Tiers[tool]; !ok {
			return true
		}
	}
	return false
}

// rulesLooser: the rules loosen unless next is cur with some allow rules taken out
// (the first matching rule decides, so any other edit may let a call through).
func rulesLooser(cur, next File) bool {
	i := 0
	for _, r := range cur.Permission.Rules {
		if i < len(next.Permission.Rules) && next.Permission.Rules[i] == r {
			i++
			continue
		}
		if r.Action != "allow" {
			return true // a deny or ask rule removed
		}
	}
	return i != len(next.Permission.Rules)
}

// Loosened lists the answer-path keys that next loosens against cur, the file in force.
func Loosened(cur, next File) []string {
	var out []string
	for _, g := range guardKeys {
		if g.looser(cur, next) {
			out = append(out, g.key)
		}
	}
	return out
}

// Hold returns next with each key of keys kept at its value in cur.
func Hold(cur, next File, keys []string) File {
	for _, g := range guardKeys {
		if slices.Contains(keys, g.key) {
			g.keep(&next, cur)
		}
	}
	return next
}

// Guarded is a file read from disk against the configuration in force: what takes
// effect now, and what waits for the person (nil: nothing).
func Guarded(cur, next File) (File, []string) {
	keys := Loosened(cur, next)
	if len(keys) == 0 {
		return next, nil
	}
	return Hold(cur, next, keys), keys
}

// The orders of the answer path's choices, strictest first: one definition for a
// reloaded file and for a department or task set over the API.
var (
	approvalOrder = []string{"untrusted", "on-request", "on-failure", "never"}
	reviewerOrder = []string{"user", "auto_review"}
)

// LooserApproval reports whether approval policy next asks less than cur ("": on-request).
func LooserApproval(next, cur string) bool {
	return rankOf(approvalOrder, &next, "on-request") > rankOf(approvalOrder, &cur, "on-request")
}

// looserReviewer reports whether reviewer next answers where cur asks the person.
func looserReviewer(next, cur string) bool {
	return rankOf(reviewerOrder, &next, "user") > rankOf(reviewerOrder, &cur, "user")
}

// LooserSandbox reports whether sandbox mode next confines less than cur.
func LooserSandbox(next, cur string) bool { return sandboxRank(&next) > sandboxRank(&cur) }

// LooserNetwork reports whether network next reaches more than cur.
func LooserNetwork(next, cur api.NetworkAccess) bool { return networkRank(&next) > networkRank(&cur) }

// looserTier reports whether tier next asks less than cur ("": unknown, so any tier
// below P2 may be lower).
func looserTier(next, cur string) bool {
	rank := func(s string) int { return strings.Index("P0P1P2", strings.ToUpper(s)) }
	if cur == "" {
		return rank(next) < rank("P2")
	}
	return rank(next) < rank(cur)
}

// HigherLimits names the limits of next above cur's ("max" is above every size).
func HigherLimits(next, cur api.Limits) []string {
	size := func(parse func(string) (int64, error), s string) int64 {
		n, err := parse(s)
		if s == "" || err != nil {
			return -1 // unset: the layer beneath decides
		}
		if n == 0 {
			return math.MaxInt64
		}
		return n
	}
	var out []string
	if a, b := size(api.ParseMemoryLimit, next.Memory), size(api.ParseMemoryLimit, cur.Memory); a > b && b >= 0 {
		out = append(out, "limits.memory "+next.Memory)
	}
	if a, b := size(api.ParseCPULimit, next.CPU), size(api.ParseCPULimit, cur.CPU); a > b && b >= 0 {
		out = append(out, "limits.cpu "+next.CPU)
	}
	if next.Pids > cur.Pids && cur.Pids > 0 {
		out = append(out, fmt.Sprintf("limits.pids %d", next.Pids))
	}
	return out
}
