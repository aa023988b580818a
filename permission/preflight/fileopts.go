package preflight

import (
	"slices"
	"strings"
)

// File operands smuggled through options. A program told to read a list of names, a
// script, a pattern file or a request body from FILE shows FILE's lines (in its output,
// or in the error for each "name" it cannot open: wc --files0-from=~/.ssh/id_rsa prints
// the key). fileOptions lists, per program, the options whose value is a file the
// program reads, so that the value is checked as a read whatever the program otherwise
// is (wc and du only handle names, date only formats): every form getopt accepts —
// -f FILE, -fFILE, -xfFILE, --file FILE, --file=FILE and any abbreviation of the long
// name (--files0=FILE).

// fileOpts are the options of one program whose value is a file it reads.
type fileOpts struct {
	short string   // short options taking the file (attached, next word, or last in a cluster)
	long  []string // long options taking the file (=FILE or the next word)
	// second are long options whose file is their second value (jq --rawfile NAME FILE).
	second []string
	// single are long options spelled with one dash (find -files0-from FILE).
	single []string
	// operands is set when an option makes the operands lists to read (tree --fromfile).
	operands []string
}

var (
	tarFiles  = fileOpts{short: "TXf", long: []string{"files-from", "exclude-from", "file"}}
	grepFiles = fileOpts{short: "f", long: []string{"file"}}
	awkFiles  = fileOpts{short: "fiE", long: []string{"file", "include", "exec", "load"}}
	jqFiles   = fileOpts{short: "f", long: []string{"from-file"}, second: []string{"rawfile", "slurpfile"}}
	shFiles   = fileOpts{long: []string{"rcfile", "init-file"}}
	curlFiles = fileOpts{short: "dTKFH", long: []string{"data", "data-binary", "data-ascii", "data-urlencode",
		"upload-file", "config", "form", "json", "variable", "header", "url-query"}}
)

// fileOptions is the table; TestFileOptionsTable attacks every row.
var fileOptions = map[string]fileOpts{
	"wc":   {long: []string{"files0-from"}},
	"du":   {short: "X", long: []string{"files0-from", "exclude-from"}},
	"sort": {long: []string{"files0-from", "random-source"}},
	"date": {short: "f", long: []string{"file"}},
	"find": {long: []string{"files0-from"}, single: []string{"files0-from"}},
	"tar":  tarFiles, "gtar": tarFiles, "bsdtar": tarFiles,
	"rsync": {long: []string{"files-from", "exclude-from", "include-from", "password-file", "filter"}},
	"xargs": {short: "a", long: []string{"arg-file"}},
	"grep":  grepFiles, "egrep": grepFiles, "fgrep": grepFiles,
	"rg":  {short: "f", long: []string{"file", "ignore-file"}},
	"awk": awkFiles, "gawk": awkFiles, "mawk": awkFiles, "nawk": awkFiles,
	"sed": {short: "f", long: []string{"file"}},
	"jq":  jqFiles, "gojq": jqFiles, "yq": {long: []string{"from-file"}},
	"curl":    curlFiles,
	"wget":    {short: "i", long: []string{"input-file", "config", "post-file", "body-file", "load-cookies"}},
	"file":    {short: "fm", long: []string{"files-from", "magic-file"}},
	"diff":    {short: "X", long: []string{"from-file", "to-file", "exclude-from"}},
	"tree":    {operands: []string{"--fromfile"}},
	"ssh":     {short: "F"},
	"scp":     {short: "F"},
	"sftp":    {short: "F"},
	"sshfs":   {short: "F"},
	"psql":    {short: "f", long: []string{"file"}},
	"mysql":   {long: []string{"defaults-file", "defaults-extra-file", "init-command-file"}},
	"sqlite3": {long: []string{"init"}},
	"hexdump": {short: "f", long: []string{"format-file"}},
	"gpg":     {long: []string{"passphrase-file"}},
	"make":    {short: "f", long: []string{"file", "makefile"}},
	"patch":   {short: "i", long: []string{"input"}},
	"split":   {long: []string{"filter"}},
	"bash":    shFiles, "sh": shFiles, "zsh": shFiles, "dash": shFiles, "ksh": shFiles,
}

// fileOptionValues returns the values of the options of prog that name a file it reads
// (and, for an option that makes the operands file lists, the operands).
func fileOptionValues(prog string, args []string) []string {
	spec, ok := fileOptions[prog]
	if !ok {
		return nil
	}
	var out []string
	lists := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "--":
			if lists {
				out = append(out, args[i+1:]...)
			}
			return out
		case strings.HasPrefix(a, "--"):
			name, val, eq := strings.Cut(a[2:], "=")
			for _, o := range spec.operands {
				if o == a {
					lists = true
				}
			}
			if name == "" {
				continue
			}
			if abbreviates(name, spec.second) {
				if eq {
					out = append(out, next()) // --rawfile=NAME FILE
				} else {
					next()
					out = append(out, next())
				}
				continue
			}
			if abbreviates(name, spec.long) {
				if !eq {
					val = next()
				}
				out = append(out, val)
			}
		case len(a) > 1 && a[0] == '-' && slices.Contains(spec.single, a[1:]):
			out = append(out, next())
		case len(a) > 1 && a[0] == '-':
			// A cluster: the first letter that takes a file ends it, its value attached
			// or the next word. Letters before it are taken as flags: a false reading
			// only ever makes more words files.
			for j := 1; j < len(a); j++ {
				if strings.IndexByte(spec.short, a[j]) < 0 {
					continue
				}
				if j+1 < len(a) {
					out = append(out, a[j+1:])
				} else {
					out = append(out, next())
				}
				break
			}
		default:
			if lists {
				out = append(out, a)
			}
		}
	}
	return out
}

// abbreviates reports whether name is one of names or an abbreviation getopt_long would
// take for it. Ambiguous abbreviations count too: they can only widen what is checked.
func abbreviates(name string, names []string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, name) {
			return true
		}
	}
	return false
}

// fileValueParts are the paths an option's value may name: the value, and after an
// "@" (curl -d @FILE, -F name=@FILE;type=text/plain) the file, without what follows ";".
func fileValueParts(v string) []string {
	out := []string{v}
	if i := strings.IndexByte(v, '@'); i >= 0 {
		f := v[i+1:]
		if j := strings.IndexByte(f, ';'); j >= 0 {
			f = f[:j]
		}
		out = append(out, f)
	}
	if name, f, ok := strings.Cut(v, "="); ok && name != "" && !strings.ContainsAny(name, "/~") {
		out = append(out, f)
	}
	return out
}

// fileOptionRead flags a credential path given as the file of a file-taking option of
// the program or of a wrapper it runs under (xargs -a FILE).
func (a *analyzer) fileOptionRead(cl call) bool {
	check := func(prog string, args []string) bool {
		for _, v := range fileOptionValues(prog, args) {
			for _, p := range fileValueParts(v) {
				if what, ok := a.credentialTarget(p, false); ok {
					a.add(CategoryCredentialRead, "reads "+what, cl.src)
					return true
				}
			}
		}
		return false
	}
	if check(cl.prog, cl.args) {
		return true
	}
	for i, w := range cl.cmd.WrapperArgs {
		if i >= len(cl.cmd.Wrappers) || len(w) == 0 {
			break
		}
		if _, ok := fileOptions[cl.cmd.Wrappers[i]]; !ok {
			continue
		}
		args := make([]string, len(w)-1)
		for j, x := range w[1:] {
			args[j] = text(x)
		}
		if check(cl.cmd.Wrappers[i], args) {
			return true
		}
	}
	return false
}
