package ops

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// namedPath is one place an apply command names a path: a whole word, the value of an
// --opt=value or VAR=value word, a token inside a word (sqlite3's '.read migrate.sql'),
// or a redirection's target.
type namedPath struct {
	text string
	// read is true where the command reads the file named (< f, -f f, --file=f, a
	// script a shell or an interpreter runs, the program itself): a file there must be
	// pinned even if it does not exist yet.
	read bool
	// data is true where what is read is only shown (the operands of cat, head, tail):
	// a read-only snapshot reads the live state there, and pins nothing.
	data bool
}

// opaqueRead is a place the command reads a file Airlock cannot name: a variable, a
// substitution or a glob in a read position.
type opaqueRead struct {
	raw, where string
	data       bool // a viewer's operand (see namedPath.data)
}

// fileFlags are the options whose value is a file the program reads, by program ("" for
// every program). Long forms are also recognised as --flag=value.
var fileFlags = map[string][]string{
	"":                  {"--file", "--filename", "--from-file", "--input", "--init-file", "--var-file", "--values", "--env-file", "--script"},
	"psql":              {"-f"},
	"kubectl":           {"-f", "-k"},
	"oc":                {"-f"},
	"helm":              {"-f"},
	"docker":            {"-f"},
	"docker-compose":    {"-f"},
	"podman":            {"-f"},
	"make":              {"-f"},
	"awk":               {"-f"},
	"gawk":              {"-f"},
	"sed":               {"-f"},
	"sqlite3":           {"-init"},
	"ansible-playbook":  {"-i", "-e"},
	"mongosh":           {"-f"},
	"redis-cli":         {"-f"},
	"clickhouse-client": {"--queries-file"},
	"cqlsh":             {"-f"},
}

// operandReaders are programs whose operands are files they read or run.
var operandReaders = map[string]bool{
	"cat": true, "tac": true, "head": true, "tail": true, "source": true, ".": true,
	"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true, "lua": true,
	"terraform": true, "tofu": true, "ansible-playbook": true,
}

// viewers are programs whose operands are files they only show, never run.
var viewers = map[string]bool{"cat": true, "tac": true, "head": true, "tail": true}

// dotCommands read the file named by the next token inside a word (sqlite3 '.read f',
// psql '\i f', mysql 'source f').
var dotCommands = map[string]bool{".read": true, ".import": true, "\\i": true, "\\ir": true, "\\include": true, "source": true, "\\.": true}

// applyPaths is the one analysis of the files an apply command names: the paths, and
// the reads it cannot see. CommandFor rewrites what it finds; approval refuses a file
// found here that is not pinned.
func applyPaths(c Command) ([]namedPath, []opaqueRead, error) {
	var cmds []shellcmd.Command
	switch c.Kind() {
	case "argv":
		sc := shellcmd.Command{Source: c.String()}
		for _, a := range c.Argv {
			sc.Args = append(sc.Args, shellcmd.Word{Raw: a, Value: a, Literal: true})
		}
		cmds = append(cmds, sc)
		if shellcmd.IsShell(path.Base(c.Argv[0])) {
			for i := 1; i+1 < len(c.Argv); i++ {
				if c.Argv[i] == "-c" {
					s, err := shellcmd.Parse(c.Argv[i+1])
					if err != nil {
						return nil, nil, fmt.Errorf("the script given to %s -c cannot be parsed to find the files it reads: %w", c.Argv[0], err)
					}
					cmds = append(cmds, s.Commands...)
					break
				}
			}
		}
	case "shell":
		s, err := shellcmd.Parse(c.Shell)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot be parsed to find the files it reads: %w", err)
		}
		cmds = s.Commands
	default:
		return nil, nil, nil
	}
	var paths []namedPath
	var opaque []opaqueRead
	for _, sc := range cmds {
		p, o := commandPaths(sc)
		paths = append(paths, p...)
		opaque = append(opaque, o...)
	}
	return paths, opaque, nil
}

func commandPaths(c shellcmd.Command) ([]namedPath, []opaqueRead) {
	var paths []namedPath
	var opaque []opaqueRead
	data := false // set below for a viewer's operands
	add := func(w shellcmd.Word, read bool, where string) {
		if !w.Literal || strings.ContainsAny(w.Value, "*?[") || strings.HasPrefix(w.Value, "~") {
			if read {
				opaque = append(opaque, opaqueRead{raw: w.Raw, where: where, data: data})
			}
			return
		}
		if w.Value != "" {
			paths = append(paths, namedPath{text: w.Value, read: read, data: read && data})
		}
	}
	for _, r := range c.Redirects {
		switch r.Op {
		case "<", "<>":
			add(r.Target, true, "the redirection "+r.Op+" "+r.Target.Raw)
		}
	}
	for _, a := range c.Assigns {
		add(a.Value, false, "")
	}
	if len(c.Args) == 0 {
		return paths, opaque
	}
	prog := c.Program()
	if v := c.Args[0]; v.Literal && strings.Contains(v.Value, "/") {
		add(v, true, "the program")
	} else if !v.Literal {
		opaque = append(opaque, opaqueRead{raw: v.Raw, where: "the program"})
	}
	flags := append(append([]string(nil), fileFlags[""]...), fileFlags[prog]...)
	isFlag := func(s string) bool {
		for _, f := range flags {
			if s == f {
				return true
			}
		}
		return false
	}
	readsOperands := operandReaders[prog] || (shellcmd.IsShell(prog) && !hasArg(c, "-c"))
	for i := 1; i < len(c.Args); i++ {
		w := c.Args[i]
		data = false
		if !w.Literal {
			if isFlag(c.Args[i-1].Value) || readsOperands {
				opaque = append(opaque, opaqueRead{raw: w.Raw, where: "an operand of " + prog, data: viewers[prog] && !isFlag(c.Args[i-1].Value)})
			}
			continue
		}
		v := w.Value
		if isFlag(v) && i+1 < len(c.Args) {
			add(c.Args[i+1], true, v+" "+c.Args[i+1].Raw)
			i++
			continue
		}
		if k := strings.IndexByte(v, '='); k > 0 {
			val := shellcmd.Word{Raw: v[k+1:], Value: v[k+1:], Literal: true}
			add(val, isFlag(v[:k]), v)
		}
		if strings.HasPrefix(v, "-") && !strings.ContainsAny(v, " \t\n") {
			continue
		}
		data = viewers[prog]
		add(w, readsOperands && !strings.ContainsAny(v, " \t\n"), "")
		data = false
		if strings.ContainsAny(v, " \t\n") {
			toks := strings.Fields(v)
			for j, t := range toks {
				read := j > 0 && dotCommands[strings.ToLower(toks[j-1])]
				add(shellcmd.Word{Raw: t, Value: strings.Trim(t, `'";`), Literal: true}, read, "")
			}
		}
	}
	return paths, opaque
}

func hasArg(c shellcmd.Command, a string) bool {
	for _, w := range c.Args[1:] {
		if w.Literal && w.Value == a {
			return true
		}
	}
	return false
}

// systemDirs hold files no plan pins: the programs and their libraries.
var systemDirs = []string{"/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/etc/", "/dev/", "/proc/", "/sys/", "/nix/store/"}

// pathRef is a path as a command in dir names it: cleaned, and its real path when it
// exists.
type pathRef struct{ clean, real string }

func resolveRef(dir, p string) pathRef {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	r := pathRef{clean: filepath.Clean(p)}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		r.real = real
	}
	return r
}

// same reports whether two references name the same file, by any spelling.
func (r pathRef) same(o pathRef) bool {
	return r.clean == o.clean || (r.real != "" && r.real == o.real)
}

// approvedCommand is one command a plan's approval covers and Airlock runs with the
// approved copies of the inputs: the apply, the confirm that keeps a commit-confirm
// apply, and the snapshot taken before and after the apply.
type approvedCommand struct {
	field string // the plan's field
	name  string // how a message names it: "apply", "confirm", "snapshot"
	cmd   Command
	// live is true for a read-only run that exists to read the live state (the
	// snapshot): what it only shows (cat running.conf) is read as it is; what it runs
	// (the program, a script, an -f file) must be pinned like the apply's.
	live bool
}

// approvedCommands are the plan's commands that run under its approval.
func approvedCommands(p *OperationPlan) []approvedCommand {
	out := []approvedCommand{{field: "apply", name: "apply", cmd: p.Apply}}
	if !p.Confirm.IsZero() {
		out = append(out, approvedCommand{field: "confirm", name: "confirm", cmd: p.Confirm})
	}
	if !p.Snapshot.IsZero() {
		out = append(out, approvedCommand{field: "snapshot", name: "snapshot", cmd: p.Snapshot, live: true})
	}
	return out
}

// checkApplyReads refuses a plan whose apply, confirm or snapshot reads a file which is
// not pinned: a file the command names that is neither one of the plan's inputs nor its
// target, a read position naming a file that is not an input, or a read Airlock cannot
// see. Every command the approval covers runs the bytes that were approved.
func checkApplyReads(p *OperationPlan) error {
	for _, ac := range approvedCommands(p) {
		if err := checkReads(p, ac); err != nil {
			return err
		}
	}
	return nil
}

func checkReads(p *OperationPlan, ac approvedCommand) error {
	paths, opaque, err := applyPaths(ac.cmd)
	if err != nil {
		return fieldErr(ac.field, err.Error())
	}
	for _, o := range opaque {
		if ac.live && o.data {
			continue
		}
		return fieldErr(ac.field, fmt.Sprintf("reads a file Airlock cannot name (%s, in %s): write the file's path literally "+
			"and declare it in inputs, so the %s runs the bytes that were approved", o.raw, o.where, ac.name))
	}
	var pinned []pathRef
	for _, in := range p.Inputs {
		pinned = append(pinned, resolveRef(p.Workdir, in))
	}
	var target *pathRef
	if p.Target.Device != "" {
		t := resolveRef(p.Workdir, p.Target.Device)
		target = &t
	}
	for _, np := range paths {
		if ac.live && (!np.read || np.data) {
			continue // the live state the snapshot is there to read
		}
		ref := resolveRef(p.Workdir, np.text)
		if anySame(pinned, ref) || (target != nil && ref.same(*target)) {
			continue
		}
		real := ref.real
		if real == "" {
			real = ref.clean
		}
		if systemPath(real) {
			continue
		}
		fi, err := os.Stat(ref.clean)
		switch {
		case err == nil && fi.Mode().IsRegular():
			return fieldErr("inputs", fmt.Sprintf("does not hold %s, which the %s command names: the %s would read it as it is "+
				"when it runs, not as it was approved; declare it in inputs (or, if the apply changes it, name it as target.device)", np.text, ac.name, ac.name))
		case err == nil && fi.IsDir() && np.read:
			return fieldErr(ac.field, fmt.Sprintf("reads the directory %s: a directory cannot be pinned; name each file it should read "+
				"in the command and declare it in inputs", np.text))
		case err != nil && np.read:
			return fieldErr("inputs", fmt.Sprintf("does not hold %s, which the %s reads (it does not exist now): create it and "+
				"declare it in inputs, so the %s reads the bytes that were approved", np.text, ac.name, ac.name))
		}
	}
	return nil
}

// pinnedFor returns the approved copies c names, by any spelling: what a command other
// than the apply (the confirm, the snapshot) runs with. The apply is given all of them.
func pinnedFor(c Command, dir string, staged []StagedInput) []StagedInput {
	paths, _, err := applyPaths(c)
	if err != nil {
		return staged // CommandFor refuses it, naming the problem
	}
	var out []StagedInput
	for _, in := range staged {
		ref := resolveRef(dir, in.Path)
		for _, np := range paths {
			if resolveRef(dir, np.text).same(ref) {
				out = append(out, in)
				break
			}
		}
	}
	return out
}

func anySame(refs []pathRef, r pathRef) bool {
	for _, x := range refs {
		if x.same(r) {
			return true
		}
	}
	return false
}

func systemPath(p string) bool {
	for _, d := range systemDirs {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}
