package shellcmd

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// optSpec describes the option syntax of one wrapper program.
type optSpec struct {
	valShort   string          // short flags that take a value (attached or next word)
	optShort   string          // short flags whose value may only be attached (-i[R])
	valLong    map[string]bool // long flags that take a value (--name VALUE or --name=VALUE)
	noCmdShort string          // short flags that mean "no command is run" (command -v)
	noCmdLong  map[string]bool
	numeric    bool // `-10` is an option (nice)
	positional int  // words consumed after the options before the command (timeout's DURATION)
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

var wrapperSpecs = map[string]*optSpec{
	"sudo": {valShort: "ugCDhprtUT", valLong: set("user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "other-user", "command-timeout"),
		noCmdShort: "vlKVe", noCmdLong: set("validate", "list", "remove-timestamp", "version", "edit", "help")},
	"doas":     {valShort: "uC"},
	"command":  {noCmdShort: "vV"},
	"nohup":    {},
	"time":     {valShort: "fo", valLong: set("format", "output")},
	"timeout":  {valShort: "sk", valLong: set("signal", "kill-after"), positional: 1},
	"nice":     {valShort: "n", valLong: set("adjustment"), numeric: true},
	"ionice":   {valShort: "cnpPu", valLong: set("class", "classdata", "pid", "pgid", "uid"), noCmdShort: "pPu", noCmdLong: set("pid", "pgid", "uid")},
	"setsid":   {},
	"stdbuf":   {valShort: "ioe", valLong: set("input", "output", "error")},
	"xargs":    {valShort: "InPdaELs", optShort: "iel", valLong: set("max-args", "max-procs", "delimiter", "arg-file", "max-lines", "max-chars", "process-slot-var")},
	"chrt":     {valShort: "TPD", valLong: set("sched-runtime", "sched-period", "sched-deadline"), noCmdShort: "pm", noCmdLong: set("pid", "max"), positional: 1},
	"taskset":  {noCmdShort: "p", noCmdLong: set("pid"), positional: 1},
	"unbuffer": {},
	"exec":     {valShort: "a"},
	"builtin":  {},
	"busybox":  {},
}

// stripWrappers removes wrapper programs from the front of args and returns
// the wrapped command, the wrappers seen (outermost first) and the assigns
// extended with those given to env.
func stripWrappers(args []Word, assigns []Assign) ([]Word, []string, [][]Word, []Assign) {
	var wrappers []string
	var words [][]Word
	for depth := 0; depth < 32 && len(args) > 0; depth++ {
		if !args[0].Literal {
			break
		}
		name := path.Base(args[0].Value)
		var rest []Word
		var noCmd bool
		switch name {
		case "env":
			rest, assigns, noCmd = stripEnv(args[1:], assigns)
		case "flock":
			rest, noCmd = stripFlock(args[1:])
		default:
			spec, ok := wrapperSpecs[name]
			if !ok {
				return args, wrappers, words, assigns
			}
			rest, noCmd = skipOptions(args[1:], spec)
		}
		if noCmd || len(rest) == 0 {
			return args, wrappers, words, assigns
		}
		wrappers = append(wrappers, name)
		words = append(words, args)
		args = rest
	}
	return args, wrappers, words, assigns
}

// nextOption is the word of args at i when it may be an option: literal, and not the
// "--" that ends the options (nextOption steps over that one).
func nextOption(args []Word, i *int) (string, bool) {
	if *i >= len(args) || !args[*i].Literal {
		return "", false
	}
	v := args[*i].Value
	if v == "--" {
		*i++
		return "", false
	}
	return v, true
}

// from is args from i on; an option's value missing at the end leaves nothing.
func from(args []Word, i int) []Word {
	return args[min(i, len(args)):]
}

// envAssign is w as env's NAME=value, when it is one.
func envAssign(w Word) (Assign, bool) {
	if !w.Literal {
		return Assign{}, false
	}
	name, val, ok := strings.Cut(w.Value, "=")
	if !ok || !validName(name) {
		return Assign{}, false
	}
	return Assign{Name: name, Value: literalWord(val)}, true
}

// skipOptions skips the options and leading positionals of a wrapper.
func skipOptions(args []Word, spec *optSpec) (rest []Word, noCmd bool) {
	i := 0
	for {
		v, ok := nextOption(args, &i)
		if !ok {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, _, hasEq := strings.Cut(v[2:], "=")
			if spec.numeric && isDigits(name) {
				i++
				continue
			}
			if spec.noCmdLong[name] {
				noCmd = true
			}
			i++
			if spec.valLong[name] && !hasEq {
				i++
			}
			continue
		}
		if len(v) < 2 || v[0] != '-' {
			break
		}
		if spec.numeric && isDigits(v[1:]) {
			i++
			continue
		}
		i++
		for j := 1; j < len(v); j++ {
			ch := v[j]
			if strings.IndexByte(spec.noCmdShort, ch) >= 0 {
				noCmd = true
			}
			if strings.IndexByte(spec.optShort, ch) >= 0 {
				break
			}
			if strings.IndexByte(spec.valShort, ch) >= 0 {
				if j == len(v)-1 {
					i++ // value is the next word
				}
				break
			}
		}
	}
	if noCmd {
		return nil, true
	}
	for n := 0; n < spec.positional && i < len(args); n++ {
		i++
	}
	return from(args, i), false
}

// stripEnv handles env's options, VAR=value words and -S splitting.
func stripEnv(args []Word, assigns []Assign) ([]Word, []Assign, bool) {
	i := 0
	var split []Word
	for {
		v, ok := nextOption(args, &i)
		if !ok {
			break
		}
		if as, ok := envAssign(args[i]); ok {
			assigns = append(assigns, as)
			i++
			continue
		}
		if len(v) < 2 || v[0] != '-' {
			break
		}
		i++
		if strings.HasPrefix(v, "--") {
			name, val, hasEq := strings.Cut(v[2:], "=")
			switch name {
			case "unset", "chdir":
				if !hasEq {
					i++
				}
			case "split-string":
				if !hasEq && i < len(args) {
					val = args[i].Value
					i++
				}
				split = append(split, splitWords(val)...)
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			switch v[j] {
			case 'u', 'C', 'P':
				if j == len(v)-1 {
					i++
				}
				j = len(v)
			case 'S':
				val := v[j+1:]
				if val == "" && i < len(args) {
					val = args[i].Value
					i++
				}
				split = append(split, splitWords(val)...)
				j = len(v)
			}
		}
	}
	rest := from(args, i)
	if len(split) > 0 {
		rest = append(split, rest...)
	}
	// Assignments produced by -S come before the command too.
	for len(rest) > 0 {
		as, ok := envAssign(rest[0])
		if !ok {
			break
		}
		assigns = append(assigns, as)
		rest = rest[1:]
	}
	return rest, assigns, false
}

// stripFlock handles `flock [opts] FILE CMD...` and `flock [opts] FILE -c STRING`
// (the latter becomes `sh -c STRING`, followed like any other shell).
func stripFlock(args []Word) ([]Word, bool) {
	spec := &optSpec{valShort: "wE", valLong: set("timeout", "wait", "conflict-exit-code")}
	rest, _ := skipOptions(args, spec)
	if len(rest) == 0 {
		return nil, true
	}
	if rest[0].Literal && isDigits(rest[0].Value) && len(rest) == 1 {
		return nil, true // flock FD
	}
	rest = rest[1:]
	for len(rest) > 0 && rest[0].Literal && strings.HasPrefix(rest[0].Value, "-") {
		v := rest[0].Value
		switch {
		case v == "-c" || v == "--command":
			if len(rest) < 2 {
				return nil, true
			}
			return []Word{literalWord("sh"), literalWord("-c"), rest[1]}, false
		case strings.HasPrefix(v, "--command="):
			return []Word{literalWord("sh"), literalWord("-c"), literalWord(strings.TrimPrefix(v, "--command="))}, false
		case v == "--":
			return rest[1:], false
		}
		next, _ := skipOptions(rest[:1], spec)
		if len(next) != 0 { // not an option after all
			break
		}
		if (v == "-w" || v == "-E" || v == "--timeout" || v == "--wait" || v == "--conflict-exit-code") && len(rest) > 1 {
			rest = rest[1:]
		}
		rest = rest[1:]
	}
	return rest, false
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}

// splitWords splits env -S's string like a shell would (quotes honoured, no expansion).
func splitWords(s string) []Word {
	f, err := parseFile(s)
	if err == nil && len(f.Stmts) == 1 {
		if call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr); ok && len(call.Assigns) == 0 {
			out := make([]Word, len(call.Args))
			for i, a := range call.Args {
				out[i] = wordFrom(s, a)
			}
			return out
		}
	}
	fields := strings.Fields(s)
	out := make([]Word, len(fields))
	for i, f := range fields {
		out[i] = literalWord(f)
	}
	return out
}
