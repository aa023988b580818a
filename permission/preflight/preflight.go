// Package preflight is the dangerous-command classifier for shell commands. It parses a
// command line with sandbox/shellcmd (every pipeline and list segment, substitutions,
// wrappers such as sudo, env -S, timeout, xargs, and sh -c / eval) and reports, with a
// human reason, the commands that destroy data or systems, mutate cloud infrastructure,
// or would let an agent answer Airlock's own questions. It also says whether a command
// is on the known-safe read-only list, the only commands the untrusted approval policy
// does not ask more about than on-request does.
package preflight

import (
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// Category groups findings.
type Category = api.FindingCategory

// Categories. Every category except CategoryOpaque and CategoryCredentialRead makes a
// request interactive-only; every finding raises it to P2.
const (
	CategoryDestructivePath Category = "destructive_path" // rm -rf /, chmod -R 777 /
	CategorySystem          Category = "system"           // shutdown, reboot, mkfs, dd to a device
	CategoryDataLoss        Category = "data_loss"        // git push --force, DROP TABLE
	CategoryCloud           Category = "cloud_mutation"   // aws … delete-*, kubectl delete, terraform destroy
	CategoryForkBomb        Category = "fork_bomb"
	CategoryPersistence     Category = "persistence"   // plants code that runs unconfined later: ~/.bashrc, authorized_keys, crontab FILE
	CategorySelfApproval    Category = "self_approval" // answers Airlock's own questions
	// CategoryCredentialRead reads keys and tokens (cat ~/.ssh/id_rsa, tar c ~/.aws, gh auth
	// token): P2, but nothing is destroyed, so it is neither bash_destructive nor
	// interactive-only.
	CategoryCredentialRead Category = "credential_read"
	CategoryEvasion        Category = "evasion" // nesting too deep to check: treated as destructive
	CategoryOpaque         Category = "opaque"  // cannot be analysed: raise to P2, not interactive-only
)

// Finding is one reason a command is dangerous.
type Finding = api.Finding

// FindingDestructive reports whether the finding makes the command bash_destructive.
func FindingDestructive(f Finding) bool {
	return f.Category != CategorySelfApproval && f.Category != CategoryOpaque && f.Category != CategoryCredentialRead
}

// Options tune the analysis to the machine.
type Options struct {
	// Home is the user's home directory (rm -r of it is flagged like ~).
	Home string
	// AirlockPaths are Airlock's own files and directories (config, database, socket,
	// AIRLOCK_HOME); writing them is self-approval. Common locations are always checked.
	AirlockPaths []string
	// Cwd is the directory the command runs in ("" when unknown): a relative path there
	// can name a credential file (cat .ssh/id_rsa in the home directory). Only the
	// credential-read check uses it.
	Cwd string
}

// Segment is one simple command, as the rules see it.
type Segment = api.Segment

// Analysis is everything the permission pipeline needs from one parse.
type Analysis struct {
	Findings   []Finding
	Segments   []Segment
	KnownSafe  bool  // every command is on the known-safe read-only list
	ParseError error // the command could not be parsed (it is then not safe, and opaque)
}

// Interactive reports whether the analysis makes a request interactive-only.
func (a Analysis) Interactive() bool {
	for _, f := range a.Findings {
		if f.Category != CategoryOpaque && f.Category != CategoryCredentialRead {
			return true
		}
	}
	return false
}

// CredentialRead reports whether any finding reads credentials.
func (a Analysis) CredentialRead() bool {
	for _, f := range a.Findings {
		if f.Category == CategoryCredentialRead {
			return true
		}
	}
	return false
}

// Destructive reports whether any finding is destructive (bash_destructive).
func (a Analysis) Destructive() bool {
	for _, f := range a.Findings {
		if FindingDestructive(f) {
			return true
		}
	}
	return false
}

// SelfApproval reports whether any finding is self-approval.
func (a Analysis) SelfApproval() bool {
	for _, f := range a.Findings {
		if f.Category == CategorySelfApproval {
			return true
		}
	}
	return false
}

// Reasons returns the findings' reasons, each once.
func (a Analysis) Reasons() []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range a.Findings {
		r := f.Reason
		if f.Command != "" {
			r = f.Reason + ": " + f.Command
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// Classify returns the dangerous findings in a command line (nil when there are none).
// A command that cannot be parsed gives one opaque finding.
func Classify(command string) []Finding {
	return Analyze(command, Options{}).Findings
}

// IsKnownSafe reports whether every command in the line is on the known-safe read-only
// list (ls, cat, grep, find without -exec/-delete, …; git never is).
func IsKnownSafe(command string) bool {
	return Analyze(command, Options{}).KnownSafe
}

// maxDepth bounds how deep nested shells (sh -c inside sh -c, su -c, ssh host CMD) are
// followed; deeper nesting is reported as opaque.
const maxDepth = 4

// Analyze parses and classifies a command line.
func Analyze(command string, opts Options) Analysis {
	a := analyzer{opts: opts, safe: true, budget: parseBudget(command)}
	script, err := shellcmd.Parse(command)
	if err != nil {
		return Analysis{ParseError: err, Findings: []Finding{unparsed(err)}}
	}
	a.script(command, script, 0, true)
	a.crossSegment(command, script)
	a.credentialPipe(command)
	a.forkBomb(command, command)
	return Analysis{Findings: a.findings, Segments: a.segments, KnownSafe: a.safe && len(a.findings) == 0}
}

type analyzer struct {
	opts     Options
	findings []Finding
	segments []Segment
	safe     bool
	seen     map[string]bool
	// parses counts the nested scripts parsed (bounded by maxParses), and budget is
	// how many more bytes of them may be parsed.
	parses, budget int
	// opaqueState is what opaque.go follows across the commands of a line.
	opaqueState
	// cwd is where earlier `cd` commands of the line moved ("" when unknown), so that
	// `cd / && rm -r *` is seen for what it deletes.
	cwd string
	// namedCredential is a command that names a credential path without reading it, and
	// xargsReads one that reads what xargs is fed (together: find ~/.ssh | xargs cat).
	namedCredential, xargsReads string
	// fds are the files the line redirected descriptors from or to (3< ~/.ssh), by
	// number, for /dev/fd/3 and /proc/self/fd/3.
	fds map[string]string
	// fsResolves counts the paths resolved on disk; realCwdOf and realCwdIs cache the
	// last working directory resolved.
	fsResolves int
	// cwdLost is set once the line cd'd deeper than is followed (and said so).
	cwdLost bool
	// agentDirsAre are the real targets of linked .claude directories (agentDirs).
	agentDirsAre         []string
	agentDirsDone        bool
	realCwdOf, realCwdIs string
}

// maxFds bounds the descriptors followed.
const maxFds = 64

// noteFds records the files c's redirections open, by descriptor.
func (a *analyzer) noteFds(c shellcmd.Command) {
	for _, r := range c.Redirects {
		fd := r.FD
		switch r.Op {
		case "<", "<>":
			if fd == "" {
				fd = "0"
			}
		case ">", ">>", ">|":
			if fd == "" {
				fd = "1"
			}
		default:
			continue
		}
		t := text(r.Target)
		if t == "" {
			continue
		}
		if !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "~") && !strings.HasPrefix(t, "$") {
			if here := a.currentCwd(); here != "" {
				t = here + "/" + t
			}
		}
		if a.fds == nil {
			a.fds = map[string]string{}
		}
		if _, ok := a.fds[fd]; ok || len(a.fds) < maxFds {
			a.fds[fd] = t
		}
	}
}

func (a *analyzer) add(cat Category, reason, src string) {
	key := string(cat) + "\x00" + reason + "\x00" + src
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	if a.seen[key] {
		return
	}
	a.seen[key] = true
	src = strings.TrimSpace(src)
	if len(src) > maxFindingCommand {
		src = strings.ToValidUTF8(src[:maxFindingCommand], "") + "…"
	}
	a.findings = append(a.findings, Finding{Category: cat, Reason: reason, Command: src})
}

// script classifies every command of a parsed script. top is true for the command line
// itself (its commands become rule segments).
func (a *analyzer) script(src string, s *shellcmd.Script, depth int, top bool) {
	a.opaqueScript(s, depth)
	for _, c := range s.Commands {
		if top {
			a.segments = append(a.segments, Segment{Source: c.Source, Unwrapped: unwrappedText(c)})
		}
		if a.safe && !safeCommand(c) {
			a.safe = false
		}
		restore := a.wrapperChdir(c)
		a.command(c, depth)
		a.opaque(c, depth)
		restore()
	}
}

// wrapperChdir moves the working directory for one command run by a wrapper that
// changes it (env -C DIR, sudo -D DIR), so that `env -C ~/.ssh cat id_rsa` is seen to
// read ~/.ssh/id_rsa. It returns what puts the line's directory back.
func (a *analyzer) wrapperChdir(c shellcmd.Command) func() {
	dir, found, literal := "", false, true
	for i, w := range c.WrapperArgs {
		if i >= len(c.Wrappers) || (c.Wrappers[i] != "env" && c.Wrappers[i] != "sudo") {
			continue
		}
		own := len(w) - len(c.Args)
		for j := 1; j < own && j < len(w); j++ {
			v := text(w[j])
			val, ok := "", false
			switch {
			case v == "-C" || v == "--chdir" || c.Wrappers[i] == "sudo" && v == "-D":
				if j+1 < len(w) {
					val, ok = text(w[j+1]), true
					literal = literal && w[j+1].Literal
				}
			case strings.HasPrefix(v, "--chdir="):
				val, ok = strings.TrimPrefix(v, "--chdir="), true
				literal = literal && w[j].Literal
			case len(v) > 2 && (strings.HasPrefix(v, "-C") || c.Wrappers[i] == "sudo" && strings.HasPrefix(v, "-D")):
				val, ok = v[2:], true
				literal = literal && w[j].Literal
			}
			if ok {
				if !strings.HasPrefix(val, "/") && !strings.HasPrefix(val, "~") && !strings.HasPrefix(val, "$") {
					if here := a.currentCwd(); here != "" {
						val = here + "/" + val
					}
				}
				dir, found = val, true
			}
		}
	}
	if !found {
		return func() {}
	}
	if !literal {
		a.safe = false
		a.add(CategoryOpaque, cannotSee+"it runs in a directory only known at run time", c.Source)
	}
	saved := a.cwd
	a.cwd = dir
	return func() { a.cwd = saved }
}

// nested parses and classifies a command string run by another command (sh -c at the
// second level, su -c, ssh host CMD, watch CMD).
func (a *analyzer) nested(script, via string, depth int) {
	if depth+1 > maxDepth {
		a.add(CategoryEvasion, "commands nested this deep cannot be checked, which only hiding a command needs", via)
		a.safe = false
		return
	}
	a.parseNested(script, via, depth+1)
}

// maxParses bounds how many nested scripts one analysis parses. Seeing through a wrapper
// re-parses what it runs at the same depth, so `pkexec pkexec … rm` would otherwise cost
// one parse of the rest of the line per wrapper: work growing with the square of the
// length, from one command.
const maxParses = 64

// parseBudget bounds the bytes of nested scripts one analysis parses, relative to the
// command's own length (each wrapper seen through re-parses the rest of the line).
func parseBudget(command string) int { return 8*len(command) + 64<<10 }

// maxFindingCommand is how much of a command a finding quotes.
const maxFindingCommand = 1 << 10

// parseNested parses and classifies script at the given depth.
func (a *analyzer) parseNested(script, via string, depth int) {
	if !a.mayParse(script, via) {
		return
	}
	s, err := shellcmd.Parse(script)
	if err != nil {
		a.parseFailed(err, via)
		return
	}
	a.script(script, s, depth, false)
	a.forkBomb(script, via)
}

// unwrappedText renders the command after wrappers, for deny rules.
func unwrappedText(c shellcmd.Command) string {
	var b strings.Builder
	for i, w := range c.Args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.Raw)
	}
	return b.String()
}

// text is a word's value, or for a word with expansions its source with quotes removed
// ("$HOME"/x → $HOME/x), so that variable targets can still be recognised.
func text(w shellcmd.Word) string {
	if w.Literal {
		return w.Value
	}
	if !strings.ContainsAny(w.Raw, `"'`) {
		return w.Raw
	}
	return strings.NewReplacer(`"`, "", `'`, "").Replace(w.Raw)
}

// call is a simple command reduced to what the checks need.
type call struct {
	prog string
	args []string // texts of the arguments after the program
	src  string
	cmd  shellcmd.Command
}

func newCall(c shellcmd.Command) call {
	cl := call{prog: c.Program(), src: c.Source, cmd: c}
	if len(c.Args) > 1 {
		cl.args = make([]string, len(c.Args)-1)
		for i, w := range c.Args[1:] {
			cl.args[i] = text(w)
		}
	}
	return cl
}

func (cl call) has(flags ...string) bool {
	for _, a := range cl.args {
		for _, f := range flags {
			if a == f {
				return true
			}
		}
	}
	return false
}

func (cl call) hasPrefix(prefixes ...string) bool {
	for _, a := range cl.args {
		for _, p := range prefixes {
			if strings.HasPrefix(a, p) {
				return true
			}
		}
	}
	return false
}

// shortFlag reports whether any single-dash flag cluster (-rf) contains one of chars,
// stopping at "--".
func (cl call) shortFlag(chars string) bool {
	for _, a := range cl.args {
		if a == "--" {
			return false
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], chars) {
			return true
		}
	}
	return false
}

// positionals returns the non-flag arguments, honouring "--" and skipping the values
// of flags listed in valued.
func positionals(args []string, valued map[string]bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			if valued[a] {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
