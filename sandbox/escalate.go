package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/airlock-app/airlock/api"
)

// Grant is the extra access one call gets when a person allows its escalation:
// these paths writable, or the network on, and nothing else. It is
// never remembered: the policy of the next call is the policy in force.
type Grant = api.Grant

// ErrNoGrant is returned by GrantFor when a denial cannot be lifted by a grant.
var ErrNoGrant = errors.New("no escalation can lift this denial")

// GrantFor merges the grants that lift every denial. It fails with ErrNoGrant when one
// of them has none (a hidden path, a protected path, a command the analysis cannot see):
// offering an escalation that would still fail is a way out that does not exist.
func GrantFor(denials []*IsolationDeniedError) (Grant, error) {
	var g Grant
	for _, d := range denials {
		if d.Grant == nil {
			return Grant{}, fmt.Errorf("%w: %s", ErrNoGrant, d.Error())
		}
		for _, w := range d.Grant.Writable {
			if !slices.Contains(g.Writable, w) {
				g.Writable = append(g.Writable, w)
			}
		}
		g.Network = g.Network || d.Grant.Network
		for _, r := range d.Grant.Readable {
			if !slices.Contains(g.Readable, r) {
				g.Readable = append(g.Readable, r)
			}
		}
	}
	slices.Sort(g.Writable)
	slices.Sort(g.Readable)
	return g, nil
}

// writeGrant is the grant that lets one write of target (real, absolute) through: the
// target itself when it exists, else the deepest existing directory above it (the
// write creates what is missing there). nil when nothing above it exists.
func writeGrant(target string) *Grant {
	for p := filepath.Clean(target); ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if p != target {
				if st, err := os.Stat(real); err != nil || !st.IsDir() {
					return nil
				}
			}
			return &Grant{Writable: []string{real}}
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// Escalate returns the policy of one call that a person allowed with g: the grant's
// paths become writable roots (a read-only policy becomes workspace-write with only
// those roots) and the network goes on when asked. Protected and hidden paths stay as
// they are, also inside the granted paths; a grant that would reach a hidden path, or
// a path that no longer exists, is refused.
func (p Policy) Escalate(g Grant) (Policy, error) {
	return p.Widen(g, Source{Layer: LayerEscalation, Detail: "allowed once by the person: " + g.String()})
}

// LayerRun names what one run adds to its own policy (an agent task's run directory
// and model API).
const LayerRun = "run"

// WithRunAllowed returns the policy with hosts added to its allowlist (under
// network_access = "allowlist"; other settings are unchanged), for one run: the
// [network] lists stay as configured, denied_domains still win.
func (p Policy) WithRunAllowed(hosts []string, why string) Policy {
	if len(hosts) == 0 || p.Network != NetworkAllowlist {
		return p
	}
	lists := DefaultNetworkLists()
	if p.Allowlist != nil {
		lists = *p.Allowlist
	}
	lists.AllowedDomains = append(slices.Clone(lists.AllowedDomains), hosts...)
	out := p
	out.Allowlist = &lists
	out.Sources = maps.Clone(p.Sources)
	if out.Sources == nil {
		out.Sources = map[string]Source{}
	}
	out.Sources[KeyNetworkLists] = Source{Layer: LayerRun, Detail: why}
	return out
}

// Widen is Escalate with the source to record: it gives g's access, and only that,
// on top of p.
func (p Policy) Widen(g Grant, src Source) (Policy, error) {
	if g.IsZero() || p.Mode == ModeFullAccess {
		return p, nil
	}
	out := p
	out.Sources = maps.Clone(p.Sources)
	if out.Sources == nil {
		out.Sources = map[string]Source{}
	}
	for _, r := range g.Readable {
		if !slices.Contains(out.Revealed, r) {
			out.Revealed = append(slices.Clone(out.Revealed), r)
		}
	}
	if g.Network && !out.Network.On() {
		out.Network = NetworkOn
		out.Allowlist = nil
		out.Sources[KeyNetwork] = src
	}
	if len(g.Writable) > 0 {
		if out.Mode == ModeReadOnly {
			out.Mode = ModeWorkspaceWrite
			out.WritableRoots = nil
			out.Sources[KeyMode] = src
		}
		roots := slices.Clone(out.WritableRoots)
		for _, w := range g.Writable {
			if !filepath.IsAbs(w) {
				return Policy{}, fmt.Errorf("escalation: %s is not an absolute path", w)
			}
			real, err := filepath.EvalSymlinks(w)
			if err != nil {
				return Policy{}, fmt.Errorf("escalation: the granted path %s: %w", w, err)
			}
			for _, h := range out.Hidden {
				if within(real, h) && !withinAny(real, out.Unhidden) {
					return Policy{}, fmt.Errorf("escalation: %s is inside %s, which stays hidden", real, h)
				}
			}
			if p.isProtected(real) {
				return Policy{}, fmt.Errorf("escalation: %s is a protected path, which stays read-only", real)
			}
			if !slices.ContainsFunc(roots, func(r string) bool { return within(real, r) }) {
				roots = append(roots, real)
			}
		}
		out.WritableRoots = roots
		out.Sources[KeyWritableRoots] = src
		out.setProtected(p.protectedEntries)
	}
	return out, nil
}

// WithUnhidden returns p with dir shown to its commands although it lies inside a hidden
// directory (Policy.Unhidden): an agent task's run sees its own run directory. dir must
// be absolute and exist; it is kept resolved.
func (p Policy) WithUnhidden(dir string) (Policy, error) {
	if !filepath.IsAbs(dir) {
		return Policy{}, fmt.Errorf("unhide %s: not an absolute path", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return Policy{}, fmt.Errorf("unhide %s: %w", dir, err)
	}
	if !slices.Contains(p.Unhidden, real) {
		p.Unhidden = append(slices.Clone(p.Unhidden), real)
	}
	return p, nil
}
