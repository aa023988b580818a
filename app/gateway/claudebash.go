package gateway

import (
	"errors"
	"fmt"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// BashSandbox is how the hook confines Claude Code's own Bash. Claude Code runs Bash in
// its own process, where only the classifier would stand between a command and the
// person's credentials; so the hook answers with the command rewritten (updatedInput)
// to run through `airlock exec` under the session's policy, and the OS hides
// credentials, Airlock's state and everything outside the workspace whatever the
// classifier knows. The zero value is on but cannot run anything: a Bash call it would
// allow is refused with the reason, never run on the host.
type BashSandbox struct {
	// Unconfined is the explicit setting that turns it off ([hooks] claude_bash_sandbox =
	// false in config.toml): Claude Code's Bash then runs on the host, unconfined, and
	// every Bash answer says so.
	Unconfined bool
	// Airlock is the airlock executable whose exec runs each command.
	Airlock string
	// Policy resolves the sandbox policy of a command run in cwd: the one resolution
	// `airlock exec` makes there, under the hook's profile (inside a run, the run's
	// network). Required unless Unconfined.
	Policy func(cwd string) (sandbox.Policy, error)
	// Profile is the hook's profile, passed on to exec.
	Profile string
	// Err says why the sandbox cannot be used (airlock not found): a Bash call is then
	// refused with it.
	Err error
}

// UnconfinedSetting names the setting that leaves Claude Code's Bash on the host.
const UnconfinedSetting = "[hooks] claude_bash_sandbox = false"

// confinedBash is one Bash call's place: the policy its command runs under.
type confinedBash struct {
	policy sandbox.Policy
}

// bashPlan resolves the policy a Bash call in cwd runs under; ok is false when the
// hook runs it unconfined (the explicit setting). err is why it cannot be confined.
func (h ClaudeHook) bashPlan(cwd string) (plan confinedBash, ok bool, err error) {
	b := h.Bash
	if b.Unconfined {
		return confinedBash{}, false, nil
	}
	switch {
	case b.Err != nil:
		return confinedBash{}, true, b.Err
	case b.Airlock == "" || b.Policy == nil:
		return confinedBash{}, true, errors.New("the hook was not given an airlock to run the command with")
	}
	pol, err := b.Policy(cwd)
	if err != nil {
		return confinedBash{}, true, fmt.Errorf("the sandbox policy for %s: %w", cwd, err)
	}
	return confinedBash{policy: pol}, true, nil
}

// wrap is command run through `airlock exec` under the plan's policy, in cwd, with the
// one-time grant a person allowed (nil: none). It keeps stdout, stderr and the exit
// status (exec passes the command's through; 122, 124 and 125 are Airlock's own).
func (h ClaudeHook) wrap(p confinedBash, cwd, command string, g *api.Grant) string {
	argv := []string{h.Bash.Airlock, "exec", "--sandbox=" + string(p.policy.Mode), "--network=" + string(p.policy.Network.Norm()), "--cwd", cwd}
	if h.Bash.Profile != "" {
		argv = append(argv, "--profile", h.Bash.Profile)
	}
	if g != nil {
		for _, w := range g.Writable {
			argv = append(argv, "--grant-writable", w)
		}
		if g.Network {
			argv = append(argv, "--grant-network")
		}
	}
	argv = append(argv, "--", "bash", "-c", command)
	return api.ShellJoin(argv)
}

// unwrapBash is the command a Bash command wrap made with airlock runs, for the audit of what
// Claude Code reports afterwards; ok is false for any other command line.
func unwrapBash(line, airlock string) (command string, ok bool) {
	argv, ok := splitShellJoin(line)
	n := len(argv)
	if !ok || airlock == "" || n < 6 || argv[0] != airlock || argv[1] != "exec" || argv[n-4] != "--" || argv[n-3] != "bash" || argv[n-2] != "-c" {
		return "", false
	}
	return argv[n-1], true
}

// splitShellJoin is the inverse of api.ShellJoin: the words of a line made only of
// plain words and single-quoted ones ('\” for a quote). ok is false for anything else.
func splitShellJoin(s string) ([]string, bool) {
	var out []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ':
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
			i++
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case c == '\\' && i+1 < len(s) && s[i+1] == '\'':
			w.WriteByte('\'')
			inWord = true
			i += 2
		case strings.IndexByte("-_./=:,+@%", c) >= 0 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			w.WriteByte(c)
			inWord = true
			i++
		default:
			return nil, false
		}
	}
	if inWord {
		out = append(out, w.String())
	}
	return out, true
}

// bashNote is what a Bash answer adds to its reason: where the command runs and what
// allowing it really does.
func (h ClaudeHook) bashNote(p confinedBash, confined bool, g *api.Grant) string {
	if !confined {
		return "UNCONFINED: Claude Code's Bash runs on your machine outside any sandbox (" + UnconfinedSetting +
			" in config.toml), so allowing runs the whole command with your user's rights"
	}
	net := p.policy.Network.Describe()
	if g != nil && !g.IsZero() {
		return fmt.Sprintf("it runs in Airlock's sandbox (airlock exec, %s, network %s); allowing lifts only %s — credentials and Airlock's state stay hidden",
			p.policy.Mode, net, g.String())
	}
	return fmt.Sprintf("it runs in Airlock's sandbox (airlock exec, %s, network %s): credentials, Airlock's state and what lies outside the workspace stay out of its reach",
		p.policy.Mode, net)
}

// unconfinedReason rewrites what the broker says allowing an escalation gives, which
// holds for Airlock's sandbox only: an unconfined Bash gets no grant, it gets everything.
func unconfinedReason(reason string, g *api.Grant) string {
	if g == nil {
		return reason
	}
	return strings.ReplaceAll(reason, "allowing it once gives "+g.String(),
		"allowing it runs the whole command on your machine, unconfined")
}
