package sandbox

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// Analysis is what the application layer found in a shell command before it runs.
type Analysis struct {
	Command string `json:"command"`
	// Allowed is true when nothing was denied.
	Allowed bool `json:"allowed"`
	// Programs are the programs the command would run (after wrappers), in order.
	Programs []string `json:"programs"`
	// Writes are the write targets found.
	Writes []WriteTarget `json:"writes,omitempty"`
	// Network lists the network clients found (their source text).
	Network []string `json:"network,omitempty"`
	// Notes are things the analysis could not see; the OS layer still contains them.
	Notes []string `json:"notes,omitempty"`
	// Denials are every denial, in source order; the first is also returned as the error.
	Denials []*IsolationDeniedError `json:"denials,omitempty"`
}

// WriteTarget is one path a command would write.
type WriteTarget struct {
	// Path is the target as written.
	Path string `json:"path"`
	// Program wrote it (or "redirect").
	Program string `json:"program"`
	// Source is the simple command's text.
	Source string `json:"source"`
	// Dynamic is true when the target is computed at run time ($VAR, $(…)).
	Dynamic bool `json:"dynamic,omitempty"`
}

// NetworkClients are programs whose only purpose is the network.
var NetworkClients = map[string]bool{
	"curl": true, "wget": true, "nc": true, "ncat": true, "netcat": true, "telnet": true, "ftp": true,
	"tftp": true, "scp": true, "sftp": true, "ssh": true, "dig": true, "nslookup": true, "host": true,
	"socat": true, "lftp": true, "aria2c": true, "ssh-keyscan": true, "whois": true, "ping": true,
}

// AnalyzeCommand parses cmd (bash) and checks it against the policy: write
// targets (redirects, cp mv install tee dd sed -i touch mkdir rm ln curl -o
// wget -O rsync, …) resolved with realpath, protected paths, network-only
// clients through wrappers and `sh -c`/`eval`, and dynamic write targets,
// which are refused. cwd "" means the policy's Cwd. The error is the first
// denial (an *IsolationDeniedError), or a bash denial when cmd does not parse.
func (p Policy) AnalyzeCommand(cmd, cwd string) (Analysis, error) {
	a := Analysis{Command: cmd}
	if cwd == "" {
		cwd = p.Cwd
	}
	script, err := shellcmd.Parse(cmd)
	if err != nil {
		d := &IsolationDeniedError{Reason: ReasonBash, Command: cmd,
			Why:  fmt.Sprintf("the command does not parse (%v), so its effects cannot be checked", err),
			Hint: "fix the command's syntax"}
		if errors.Is(err, shellcmd.ErrTooLarge) || errors.Is(err, shellcmd.ErrTooDeep) {
			d.Why = fmt.Sprintf("the command cannot be checked (%v)", err)
			d.Hint = "split it into smaller commands, or write the script to a file and run that"
		}
		a.Denials = append(a.Denials, d)
		return a, d
	}
	an := analyzer{p: p, a: &a, cwds: []string{cwd}}
	for i := range script.Commands {
		an.command(&script.Commands[i])
	}
	a.Allowed = len(a.Denials) == 0
	if !a.Allowed {
		return a, a.Denials[0]
	}
	return a, nil
}

type analyzer struct {
	p    Policy
	a    *Analysis
	cwds []string // every directory relative paths may be relative to (cd seen)
	// unknownCwd is set after a cd to a computed directory, manyCwds after more cds than
	// maxCwds tracks.
	unknownCwd, manyCwds bool
}

func (an *analyzer) deny(d *IsolationDeniedError) { an.a.Denials = append(an.a.Denials, d) }

func (an *analyzer) command(c *shellcmd.Command) {
	for _, r := range c.Redirects {
		if r.Target.Literal && (strings.HasPrefix(r.Target.Value, "/dev/tcp/") || strings.HasPrefix(r.Target.Value, "/dev/udp/")) {
			an.network(c) // bash opens a socket for these
			continue
		}
		if r.Write {
			an.write(r.Target, "redirect", c.Source, true)
		}
	}
	if len(c.Args) == 0 {
		return
	}
	prog := c.Program()
	if prog == "" {
		an.a.Notes = append(an.a.Notes, fmt.Sprintf("`%s`: the program is computed at run time; only the OS layer contains it", c.Source))
		return
	}
	an.a.Programs = append(an.a.Programs, prog)
	if contains(c.Wrappers, "xargs") {
		an.a.Notes = append(an.a.Notes, fmt.Sprintf("`%s`: xargs adds arguments from its input; only the OS layer contains them", c.Source))
	}
	args := c.Args[1:]
	switch prog {
	case "cd", "pushd":
		an.cd(args)
	case "cp", "install":
		an.copyLike(prog, c, args, false)
	case "mv":
		an.copyLike(prog, c, args, true)
	case "ln", "link":
		an.link(prog, c, args)
	case "rm", "rmdir", "unlink", "shred":
		an.each(prog, c, operands(args, "", nil), false)
	case "touch":
		an.each(prog, c, operands(args, "drt", set("date", "reference")), true)
	case "mkdir", "mkfifo", "mknod":
		an.each(prog, c, operands(args, "mZ", set("mode", "context")), true)
	case "truncate":
		an.each(prog, c, operands(args, "sr", set("size", "reference")), true)
	case "tee":
		an.each(prog, c, operands(args, "", set("output-error")), true)
	case "chmod", "chown", "chgrp":
		ops := operands(args, "", set("reference"))
		if len(ops) > 0 && !hasLongPrefix(args, "--reference") {
			ops = ops[1:]
		}
		an.each(prog, c, ops, true)
	case "dd":
		for _, w := range args {
			if strings.HasPrefix(w.Raw, "of=") || strings.HasPrefix(w.Value, "of=") {
				t := w
				t.Value = strings.TrimPrefix(w.Value, "of=")
				an.write(t, prog, c.Source, true)
			}
		}
	case "sed", "gsed", "perl":
		an.inPlace(prog, c, args)
	case "curl":
		an.curl(c, args)
	case "wget":
		an.wget(c, args)
	case "rsync":
		an.rsync(c, args)
	}
	if NetworkClients[prog] {
		an.network(c)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func hasLongPrefix(args []shellcmd.Word, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a.Value, prefix) {
			return true
		}
	}
	return false
}

// operands returns the non-option words of args: valShort/valLong options consume a value.
func operands(args []shellcmd.Word, valShort string, valLong map[string]bool) []shellcmd.Word {
	var out []shellcmd.Word
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		if !w.Literal || len(v) < 2 || v[0] != '-' {
			out = append(out, w)
			continue
		}
		if v == "--" {
			return append(out, args[i+1:]...)
		}
		if strings.HasPrefix(v, "--") {
			name, _, hasEq := strings.Cut(v[2:], "=")
			if valLong[name] && !hasEq {
				i++
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			if strings.IndexByte(valShort, v[j]) >= 0 {
				if j == len(v)-1 {
					i++
				}
				break
			}
		}
	}
	return out
}

func (an *analyzer) cd(args []shellcmd.Word) {
	ops := operands(args, "", nil)
	if len(ops) == 0 {
		ops = []shellcmd.Word{{Raw: "~", Value: "~", Literal: true}}
	}
	if !ops[0].Literal || ops[0].Value == "-" {
		an.unknownCwd = true
		return
	}
	cwds, ok := cdFrom(an.cwds, ops[0].Value, an.p.Home)
	if !ok {
		an.manyCwds = true
	}
	an.cwds = cwds
}

func (an *analyzer) each(prog string, c *shellcmd.Command, ops []shellcmd.Word, follow bool) {
	for _, w := range ops {
		an.write(w, prog, c.Source, follow)
	}
}

// copyLike handles cp, install and mv: the destination (last operand or -t DIR)
// is written; mv also removes its sources.
func (an *analyzer) copyLike(prog string, c *shellcmd.Command, args []shellcmd.Word, move bool) {
	valShort, valLong := "tS", set("target-directory", "suffix", "backup")
	if prog == "install" {
		valShort, valLong = "tSmogZ", set("target-directory", "suffix", "mode", "owner", "group", "context", "strip-program", "backup")
	}
	ops := operands(args, valShort, valLong)
	target, hasTarget := optionValue(args, 't', "target-directory")
	dirMode := prog == "install" && hasFlag(args, 'd', "directory")
	switch {
	case dirMode:
		an.each(prog, c, ops, true)
		return
	case hasTarget:
		an.write(target, prog, c.Source, true)
	case len(ops) >= 2:
		an.write(ops[len(ops)-1], prog, c.Source, true)
		ops = ops[:len(ops)-1]
	default:
		return
	}
	if move {
		an.each(prog, c, ops, false)
	}
}

func (an *analyzer) link(prog string, c *shellcmd.Command, args []shellcmd.Word) {
	ops := operands(args, "tS", set("target-directory", "suffix", "backup"))
	if t, ok := optionValue(args, 't', "target-directory"); ok {
		an.write(t, prog, c.Source, false)
		return
	}
	switch {
	case len(ops) >= 2:
		an.write(ops[len(ops)-1], prog, c.Source, false)
	case len(ops) == 1:
		// `ln -s TARGET` creates ./basename(TARGET).
		w := ops[0]
		if w.Literal {
			w.Value = path.Base(w.Value)
		}
		an.write(w, prog, c.Source, false)
	}
}

// inPlace handles sed -i / perl -i: the files after the script are rewritten.
func (an *analyzer) inPlace(prog string, c *shellcmd.Command, args []shellcmd.Word) {
	inPlace, haveScript := false, false
	var files []shellcmd.Word
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		if w.Literal && v == "--" {
			files = append(files, args[i+1:]...)
			break
		}
		if w.Literal && strings.HasPrefix(v, "--") {
			name, _, hasEq := strings.Cut(v[2:], "=")
			switch name {
			case "in-place":
				inPlace = true
			case "expression", "file":
				haveScript = true
				if !hasEq {
					i++
				}
			case "line-length":
				if !hasEq {
					i++
				}
			}
			continue
		}
		if w.Literal && len(v) > 1 && v[0] == '-' {
			for j := 1; j < len(v); j++ {
				switch v[j] {
				case 'i':
					inPlace = true
					j = len(v) // the rest is the backup suffix
				case 'e', 'f':
					haveScript = true
					if j == len(v)-1 {
						i++
					}
					j = len(v)
				case 'l':
					if prog != "perl" && j == len(v)-1 {
						i++
					}
					j = len(v)
				}
			}
			continue
		}
		if !haveScript {
			haveScript = true // the first operand is the script
			continue
		}
		files = append(files, w)
	}
	if inPlace {
		an.each(prog, c, files, true)
	}
}

// curlValueShort are curl's short options that take a value.
const curlValueShort = "oDcdHuXAebFKmrTwxyzCEQtUYP"

func (an *analyzer) curl(c *shellcmd.Command, args []shellcmd.Word) {
	cwdTarget := shellcmd.Word{Raw: ".", Value: ".", Literal: true}
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		next := func() (shellcmd.Word, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return shellcmd.Word{}, false
		}
		if !w.Literal || len(v) < 2 || v[0] != '-' {
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasEq := strings.Cut(v[2:], "=")
			switch name {
			case "output", "dump-header", "cookie-jar", "trace", "trace-ascii", "stderr", "output-dir", "etag-save", "libcurl":
				t := w
				t.Value = val
				if !hasEq {
					t, hasEq = next()
				}
				if hasEq && t.Value != "-" {
					an.write(t, "curl", c.Source, true)
				}
			case "remote-name", "remote-name-all", "remote-header-name":
				an.write(cwdTarget, "curl", c.Source, true)
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			ch := v[j]
			if ch == 'O' || ch == 'J' {
				an.write(cwdTarget, "curl", c.Source, true)
				continue
			}
			if strings.IndexByte(curlValueShort, ch) < 0 {
				continue
			}
			t, ok := w, true
			if j+1 < len(v) {
				t.Value = v[j+1:]
			} else {
				t, ok = next()
			}
			if ok && (ch == 'o' || ch == 'D' || ch == 'c') && t.Value != "-" {
				an.write(t, "curl", c.Source, true)
			}
			break
		}
	}
}

func (an *analyzer) wget(c *shellcmd.Command, args []shellcmd.Word) {
	wrote := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		value := func(prefix string) (shellcmd.Word, bool) {
			if v == prefix {
				if i+1 < len(args) {
					i++
					return args[i], true
				}
				return shellcmd.Word{}, false
			}
			w.Value = strings.TrimPrefix(v, prefix)
			return w, true
		}
		var t shellcmd.Word
		ok := false
		switch {
		case v == "-O" || v == "-o" || v == "-a" || v == "-P":
			t, ok = value(v)
		case strings.HasPrefix(v, "-O") || strings.HasPrefix(v, "-P"):
			t, ok = value(v[:2])
		case strings.HasPrefix(v, "--output-document=") || strings.HasPrefix(v, "--output-file=") ||
			strings.HasPrefix(v, "--append-output=") || strings.HasPrefix(v, "--directory-prefix="):
			name, val, _ := strings.Cut(v, "=")
			_ = name
			t, ok = w, true
			t.Value = val
		}
		if ok && t.Value != "-" {
			an.write(t, "wget", c.Source, true)
			wrote = true
		}
	}
	if !wrote {
		an.write(shellcmd.Word{Raw: ".", Value: ".", Literal: true}, "wget", c.Source, true)
	}
}

var rsyncValueOpts = set("rsh", "exclude", "include", "filter", "files-from", "exclude-from", "include-from",
	"password-file", "log-file", "temp-dir", "backup-dir", "compare-dest", "link-dest", "copy-dest",
	"partial-dir", "chmod", "chown", "timeout", "port", "bwlimit", "suffix", "rsync-path")

func (an *analyzer) rsync(c *shellcmd.Command, args []shellcmd.Word) {
	ops := operands(args, "efBTM", rsyncValueOpts)
	if len(ops) == 0 {
		return
	}
	remote := false
	for _, w := range ops {
		if isRemoteSpec(w.Value) {
			remote = true
		}
	}
	dest := ops[len(ops)-1]
	if len(ops) >= 2 && !isRemoteSpec(dest.Value) {
		an.write(dest, "rsync", c.Source, true)
	}
	if remote {
		an.network(c)
	}
}

// isRemoteSpec reports whether an rsync/scp operand names a remote host (host:path, rsync://).
func isRemoteSpec(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	colon := strings.IndexByte(s, ':')
	slash := strings.IndexByte(s, '/')
	return colon > 0 && (slash < 0 || colon < slash)
}

func optionValue(args []shellcmd.Word, short byte, long string) (shellcmd.Word, bool) {
	for i, w := range args {
		v := w.Value
		if v == "--" {
			break
		}
		if v == "-"+string(short) || v == "--"+long {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return shellcmd.Word{}, false
		}
		if strings.HasPrefix(v, "--"+long+"=") {
			w.Value = strings.TrimPrefix(v, "--"+long+"=")
			return w, true
		}
		if len(v) > 2 && v[0] == '-' && v[1] == short {
			w.Value = v[2:]
			return w, true
		}
	}
	return shellcmd.Word{}, false
}

func hasFlag(args []shellcmd.Word, short byte, long string) bool {
	for _, w := range args {
		v := w.Value
		if v == "--"+long {
			return true
		}
		if len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.IndexByte(v[1:], short) >= 0 {
			return true
		}
	}
	return false
}

func (an *analyzer) network(c *shellcmd.Command) {
	an.a.Network = append(an.a.Network, c.Source)
	if err := an.p.CheckNetwork(""); err != nil {
		d := err.(*IsolationDeniedError)
		d.Command = c.Source
		what := c.Program() + " is a network client"
		if !NetworkClients[c.Program()] && c.Program() != "rsync" {
			what = "it opens a network connection"
		}
		d.Why = what + " and " + d.Why
		an.deny(d)
	}
}

// write records and checks one write target.
func (an *analyzer) write(w shellcmd.Word, prog, source string, follow bool) {
	wt := WriteTarget{Path: w.Value, Program: prog, Source: source, Dynamic: !w.Literal}
	if !w.Literal {
		wt.Path = w.Raw
	}
	an.a.Writes = append(an.a.Writes, wt)
	if an.p.Mode == ModeFullAccess {
		return
	}
	if w.Literal && an.manyCwds && !filepath.IsAbs(expandHome(w.Value, an.p.Home)) {
		an.deny(&IsolationDeniedError{Reason: ReasonBash, Path: w.Raw, Command: source,
			Why:  fmt.Sprintf("the command changes directory more ways than the sandbox tracks (%d directories), so it cannot check where a relative path writes", maxCwds),
			Hint: "write the path as an absolute one, split the command, or run with --sandbox full-access"})
		return
	}
	if !w.Literal || (an.unknownCwd && !filepath.IsAbs(expandHome(w.Value, an.p.Home))) {
		an.deny(&IsolationDeniedError{Reason: ReasonBash, Path: w.Raw, Command: source,
			Why:  "the write target is computed at run time, so the sandbox cannot check where it writes",
			Hint: "write the path literally, or run with --sandbox full-access"})
		return
	}
	target := w.Value
	if target == "" {
		return
	}
	bases := an.cwds
	if filepath.IsAbs(expandHome(target, an.p.Home)) {
		bases = bases[:1]
	}
	for _, base := range bases {
		paths := []string{absFrom(target, base, an.p.Home)}
		if strings.ContainsAny(target, "*?[") {
			// The shell expands the glob: check what it matches now too (a match may be a symlink out).
			if matches, err := filepath.Glob(paths[0]); err == nil {
				paths = append(paths, matches...)
			}
		}
		for _, path := range paths {
			if err := an.p.checkWrite(path, follow); err != nil {
				d := err.(*IsolationDeniedError)
				d.Command = source
				an.deny(d)
				return
			}
		}
	}
}
