package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox/egress/rules"
)

// alwaysWritable are device paths any mode may write (they store nothing).
var alwaysWritable = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/tty"}

// CheckWrite reports whether the policy lets a process write (create, modify,
// delete, rename) path. Relative paths are relative to the policy's Cwd. The
// path is resolved with realpath of its deepest existing ancestor, so symlink
// escapes and `..` are judged where the kernel would land.
func (p Policy) CheckWrite(path string) error {
	return p.checkWrite(path, true)
}

func (p Policy) checkWrite(path string, followFinal bool) error {
	if p.Mode == ModeFullAccess {
		return nil
	}
	abs := filepath.Clean(absFrom(path, p.Cwd, p.Home))
	if slices.Contains(alwaysWritable, abs) || strings.HasPrefix(abs, "/dev/fd/") {
		return nil
	}
	if d := p.hiddenWrite(abs, followFinal); d != nil {
		return d
	}
	if p.Mode == ModeReadOnly {
		var grant *Grant
		if !p.isProtected(abs) {
			grant = p.liftable(writeGrant(abs)) // a protected path stays read-only even for one call
		}
		return &IsolationDeniedError{Reason: ReasonWrite, Path: abs, Grant: grant,
			Why:  "sandbox_mode is read-only (" + p.Sources[KeyMode].String() + "), which allows no writes",
			Hint: "run with --sandbox workspace-write to write inside the working directory"}
	}
	target := absFrom(path, p.Cwd, p.Home)
	base := ""
	for _, r := range p.WritableRoots {
		if strings.HasPrefix(target, r+"/") {
			base = r // roots are real directories (Resolve made them so)
			break
		}
	}
	real, err := resolveFrom(target, base, followFinal)
	if err != nil {
		return &IsolationDeniedError{Reason: ReasonWrite, Path: abs,
			Why:  fmt.Sprintf("the path cannot be resolved safely (%v)", err),
			Hint: "write to a plain path inside the working directory"}
	}
	root := p.rootOf(real)
	if root == "" {
		return &IsolationDeniedError{Reason: ReasonWrite, Path: describe(abs, real), Grant: p.liftable(writeGrant(real)),
			Why:  "it is outside the writable roots (" + strings.Join(p.WritableRoots, ", ") + ")",
			Hint: "add its directory to sandbox_workspace_write.writable_roots (or --writable-root), or run with --sandbox full-access"}
	}
	if prot := p.protectedAt(real, root); prot != "" {
		return &IsolationDeniedError{Reason: ReasonWrite, Path: describe(abs, real),
			Why:  prot + " is a protected path: read-only inside the writable roots and never created by a sandboxed run",
			Hint: "make this change outside the sandbox yourself, or run with --sandbox full-access"}
	}
	return nil
}

// hiddenWrite refuses a write into a hidden path (Airlock's own state, the credentials)
// outright: the OS layer hides it from every command and Escalate never lifts that, so
// no escalation is offered (a question whose "allow" fails is a dead end).
func (p Policy) hiddenWrite(abs string, followFinal bool) *IsolationDeniedError {
	real, err := resolvePath(abs, followFinal)
	if err != nil {
		real = abs
	}
	if withinAny(real, p.Unhidden) {
		return nil
	}
	for _, h := range p.Hidden {
		if within(abs, h) || within(real, h) {
			// ReasonRead: the denial of a hidden path, whatever the access.
			return &IsolationDeniedError{Reason: ReasonRead, Path: describe(abs, real),
				Why:  hiddenWhy(h, p.Home) + "; no sandboxed run writes there, and no escalation can give it",
				Hint: "make this change yourself, outside any sandbox"}
		}
	}
	return nil
}

// liftable is g when Escalate would give it, else nil: an escalation is offered only
// when allowing it runs the call.
func (p Policy) liftable(g *Grant) *Grant {
	if g == nil {
		return nil
	}
	if _, err := p.Escalate(*g); err != nil {
		return nil
	}
	return g
}

// describe shows the path as written and, when different, where it leads.
func describe(abs, real string) string {
	if abs == real {
		return abs
	}
	return abs + " (resolves to " + real + ")"
}

// rootOf returns the writable root containing real, or "".
func (p Policy) rootOf(real string) string {
	for _, r := range p.WritableRoots {
		if within(real, r) {
			return r
		}
	}
	return ""
}

// protectedAt returns the protected path that covers real (inside root), or "".
func (p Policy) protectedAt(real, root string) string {
	for i, prot := range p.Protected {
		if within(real, prot) {
			return prot
		}
		// A protected path that is itself reached through a symlink: compare where it leads too.
		rp := ""
		if i < len(p.protectedReal) {
			rp = p.protectedReal[i]
		} else if fi, err := os.Lstat(prot); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			rp, _ = resolvePath(prot, true)
		}
		if rp != "" && rp != prot && within(real, rp) {
			return prot
		}
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == "." {
		return ""
	}
	parts := strings.Split(rel, "/")
	for i, c := range parts {
		for _, n := range p.ProtectedNames {
			if !strings.Contains(n, "/") && c == n {
				return filepath.Join(append([]string{root}, parts[:i+1]...)...)
			}
		}
	}
	return ""
}

// CheckRead reports whether path may be read. Reads are never restricted,
// except for the paths every sandbox but full-access hides (Airlock's socket
// directory, the session bus, the keyring, the SSH agent, the credential files of
// CredentialPaths).
func (p Policy) CheckRead(path string) error {
	if p.Mode == ModeFullAccess {
		return nil
	}
	abs := filepath.Clean(absFrom(path, p.Cwd, p.Home))
	real, err := resolvePath(abs, true)
	if err != nil {
		real = abs
	}
	for _, r := range p.Revealed {
		if within(real, r) {
			return nil
		}
	}
	for _, h := range p.Hidden {
		if within(abs, h) || within(real, h) {
			d := &IsolationDeniedError{Reason: ReasonRead, Path: describe(abs, real),
				Why:  hiddenWhy(h, p.Home),
				Hint: "a sandboxed run cannot reach it in any mode but full-access"}
			if slices.Contains(CredentialPaths(p.Home), h) {
				// A file tool may read it once if the person allows (P2, asked every time).
				d.Grant = &Grant{Readable: []string{real}}
			}
			return d
		}
	}
	return nil
}

// CheckNetwork reports whether the policy allows network access to host ("" = any).
// Under an allowlist connected to the egress proxy it does: the proxy judges each
// destination by the lists.
func (p Policy) CheckNetwork(host string) error {
	if p.Network.On() || (p.Network == NetworkAllowlist && p.EgressConnected) {
		return nil
	}
	why := "network access is off (" + p.Sources[KeyNetwork].String() + ")"
	hint := "run with --network (network_access = true in [sandbox_workspace_write])"
	if p.Network == NetworkAllowlist {
		// Never more access than asked: an allowlist without its proxy is no network.
		why = "network access is " + api.AllowlistNotConnected + " (" + p.Sources[KeyNetwork].String() + ")"
	}
	if p.Mode == ModeReadOnly {
		hint = "read-only mode has no network; run with --sandbox workspace-write --network"
	}
	return &IsolationDeniedError{Reason: ReasonNetwork, Path: host, Why: why, Hint: hint, Grant: &Grant{Network: true}}
}

// CheckDomains is the sandbox's verdict on a network tool that runs outside Airlock's
// egress proxy (an agent's own web fetch or web search, through the hook): what it may
// reach are domains (a fetch's host, a search's allowed_domains). With the network on it
// passes; off, it is refused as CheckNetwork refuses; under network_access = "allowlist"
// each domain must be in [network] allowed_domains and none in denied_domains, and a call
// that names no domain (a search of the whole web) is refused, since it could reach any.
func (p Policy) CheckDomains(tool string, domains []string) error {
	if p.Network.On() || p.Network != NetworkAllowlist {
		return p.CheckNetwork(strings.Join(domains, ","))
	}
	src := p.Sources[KeyNetwork].String()
	deny := func(domain, why, hint string) error {
		return &IsolationDeniedError{Reason: ReasonNetwork, Path: domain, Why: why, Hint: hint, Grant: &Grant{Network: true}}
	}
	if len(domains) == 0 {
		return deny("", tool+" names no domain, so it may reach any, and network access is an allowlist ("+src+")",
			"name the domains it may reach (a web search's allowed_domains), each in [network] allowed_domains")
	}
	var lists NetworkLists
	if p.Allowlist != nil {
		lists = *p.Allowlist
	}
	rs, err := lists.Rules()
	if err != nil {
		return deny("", "the [network] lists do not compile: "+err.Error(), "fix [network] in config.toml")
	}
	for _, d := range domains {
		name, isIP, err := rules.NormalizeHost(d)
		if err != nil {
			return deny(d, fmt.Sprintf("%q is not a domain: %v", d, err), "name a domain such as example.com")
		}
		switch rs.Match(name, isIP, 443) {
		case rules.ListedDenied:
			return deny(name, name+" is in [network] denied_domains ("+src+")", "denied_domains always win; remove it there to allow it")
		case rules.Unlisted:
			return deny(name, name+" is not in [network] allowed_domains ("+src+")", "add it to [network] allowed_domains in config.toml")
		}
	}
	return nil
}

// isProtected reports whether path (absolute) is, or lies in, a protected path: an
// absolute one, one reached through a link, or a protected name in any component.
func (p Policy) isProtected(path string) bool {
	real, err := resolvePath(path, true)
	if err != nil {
		real = path
	}
	for i, prot := range p.Protected {
		if within(path, prot) || within(real, prot) || (i < len(p.protectedReal) && p.protectedReal[i] != "" && within(real, p.protectedReal[i])) {
			return true
		}
	}
	// Protected names apply inside the working directory and the writable roots.
	for _, base := range append([]string{p.Cwd}, p.WritableRoots...) {
		if base == "" || !within(real, base) {
			continue
		}
		rel, err := filepath.Rel(base, real)
		if err != nil {
			continue
		}
		for _, c := range strings.Split(rel, "/") {
			if slices.Contains(p.ProtectedNames, c) {
				return true
			}
		}
	}
	return false
}
