package ops

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// StagedInput is one of a plan's input files as it was approved: its bytes are kept in
// Airlock's state under their sha256 (Copy), and the apply reads that copy, never the
// file in the working directory, so a swap after approval cannot change what runs.
type StagedInput struct {
	// Path is the input as the plan names it (relative to the workdir, or absolute).
	Path string `json:"path"`
	// SHA256 is the hash of the approved bytes.
	SHA256 string `json:"sha256"`
	// Copy is the host path of the stored copy (in the state directory, which every
	// sandbox hides; a runner places it where the command can read it).
	Copy string `json:"-"`
}

// inputStore keeps approved input files content-addressed: <dir>/<sha256>, mode 0500.
type inputStore struct{ dir string }

func (st inputStore) path(sum string) string { return filepath.Join(st.dir, sum) }

// capture reads each input once, hashes exactly the bytes read and stores them: what is
// pinned is what is kept, whatever happens to the file afterwards.
func (st inputStore) capture(workdir string, inputs []string) ([]InputDigest, error) {
	out := make([]InputDigest, 0, len(inputs))
	for _, in := range inputs {
		path := in
		if !filepath.IsAbs(path) {
			path = filepath.Join(workdir, path)
		}
		data, err := readInput(path)
		if err != nil {
			return nil, &DriftError{Field: FieldInputs, Detail: fmt.Sprintf("input %s cannot be read: %v", in, err)}
		}
		sum := sha256Hex(data)
		if err := st.put(sum, data); err != nil {
			return nil, fmt.Errorf("keep the approved copy of input %s: %w", in, err)
		}
		out = append(out, InputDigest{Path: in, SHA256: sum})
	}
	return out, nil
}

// put writes data under its hash, atomically; an existing intact copy is kept.
func (st inputStore) put(sum string, data []byte) error {
	if st.dir == "" {
		return errors.New("no state directory is configured (ops.Config.StateDir)")
	}
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return err
	}
	dst := st.path(sum)
	if got, err := fileSHA256(dst); err == nil && got == sum {
		return nil
	}
	tmp, err := os.CreateTemp(st.dir, ".in-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	// Read-only; executable too, for an input that is the script the apply runs.
	if err := tmp.Chmod(0o500); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// staged returns the approved copies of the pinned inputs, checking each still hashes to
// what was approved (it is Airlock's state, but a damaged copy must not run either).
func (st inputStore) staged(pinned []InputDigest) ([]StagedInput, error) {
	out := make([]StagedInput, 0, len(pinned))
	for _, d := range pinned {
		if !isHexSHA256(d.SHA256) {
			return nil, &DriftError{Field: FieldInputs, Detail: fmt.Sprintf("the approval of input %s names no valid sha256", d.Path)}
		}
		p := st.path(d.SHA256)
		got, err := fileSHA256(p)
		if err != nil || got != d.SHA256 {
			return nil, &DriftError{Field: FieldInputs, Detail: fmt.Sprintf("the approved copy of input %s is missing or damaged in Airlock's state (%s): attach a fresh diff and approve again", d.Path, p)}
		}
		out = append(out, StagedInput{Path: d.Path, SHA256: d.SHA256, Copy: p})
	}
	return out, nil
}

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func isHexSHA256(s string) bool { return hexSHA256.MatchString(s) }

func readInput(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxInputFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxInputFile {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, maxInputFile>>20)
	}
	return data, nil
}

// StagedPath is where a runner that binds the approved copies into its sandbox places
// one: a fresh path in the sandbox's private /tmp, named by the hash (the base name is
// kept for tools that look at extensions).
func StagedPath(in StagedInput) string {
	base := filepath.Base(in.Path)
	if !safeBase.MatchString(base) {
		base = "input"
	}
	return "/tmp/.airlock-inputs/" + in.SHA256 + "/" + base
}

var safeBase = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,100}$`)

// CommandFor returns spec.Command with every mention of an input replaced by place(input):
// the path the running command must read the approved bytes from. A runner calls it when
// spec.Inputs is not empty and runs what it returns. It fails, and nothing must run, when an
// input is not named in the command.
func (spec RunSpec) CommandFor(place func(StagedInput) string) (Command, error) {
	if len(spec.Inputs) == 0 {
		return spec.Command, nil
	}
	names := make([]inputName, len(spec.Inputs))
	for i, in := range spec.Inputs {
		names[i] = inputName{name: in.Path, dir: spec.Dir, ref: resolveRef(spec.Dir, in.Path), to: place(in)}
	}
	out, err := rewriteInputs(spec.Command, names)
	if err != nil {
		return Command{}, err
	}
	// What is left must not name an input by a spelling the rewrite could not reach
	// (inside a script given to sh -c, glued to a redirection): it would read the file
	// in the working directory, not the approved copy.
	paths, _, err := applyPaths(out)
	if err != nil {
		return Command{}, &ValidationError{Field: "apply", Problem: err.Error()}
	}
	for _, p := range paths {
		ref := resolveRef(spec.Dir, p.text)
		for _, n := range names {
			if ref.same(n.ref) {
				return Command{}, &ValidationError{Field: "inputs", Problem: fmt.Sprintf("%q is named in the apply command as %q where Airlock "+
					"cannot point it at the approved copy: name it as a word of its own (psql -f migrate.sql, sqlite3 db < migrate.sql, "+
					"sqlite3 db '.read migrate.sql')", n.name, p.text)}
			}
		}
	}
	return out, nil
}

type inputName struct {
	name string  // the input as the plan names it
	dir  string  // the working directory the command runs in
	ref  pathRef // the file, to match any spelling of it
	to   string
	hits int
}

// names reports whether w, as a command in the working directory would take it, is
// this input: the same path cleaned (.//migrate.sql, x/../migrate.sql, the absolute
// path) or the same file once symlinks are resolved.
func (n *inputName) names(w string) bool {
	if w == "" || strings.ContainsRune(w, 0) {
		return false
	}
	return resolveRef(n.dir, w).same(n.ref)
}

// rewriteWord rewrites one literal word: the whole word, the value of an --opt=value or
// VAR=value word, or a space-separated token inside it (sqlite3's '.read migrate.sql').
func rewriteWord(w string, names []inputName) (string, bool) {
	for i := range names {
		if names[i].names(w) {
			names[i].hits++
			return names[i].to, true
		}
		if k := strings.IndexByte(w, '='); k >= 0 && names[i].names(w[k+1:]) {
			names[i].hits++
			return w[:k+1] + names[i].to, true
		}
	}
	if !strings.ContainsAny(w, " \t\n") {
		return w, false
	}
	toks := strings.FieldsFunc(w, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
	changed := false
	seen := map[string]bool{}
	for _, t := range toks {
		if seen[t] {
			continue
		}
		seen[t] = true
		for i := range names {
			if names[i].names(t) {
				w = replaceToken(w, t, names[i].to)
				names[i].hits++
				changed = true
				break
			}
		}
	}
	return w, changed
}

// replaceToken replaces whitespace-delimited occurrences of tok in s.
func replaceToken(s, tok, to string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], tok)
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		j += i
		end := j + len(tok)
		before := j == 0 || strings.ContainsRune(" \t\n", rune(s[j-1]))
		after := end == len(s) || strings.ContainsRune(" \t\n", rune(s[end]))
		b.WriteString(s[i:j])
		if before && after {
			b.WriteString(to)
		} else {
			b.WriteString(tok)
		}
		i = end
	}
	return b.String()
}

// rewriteInputs replaces the inputs' paths in c; every input must be named at least once.
func rewriteInputs(c Command, names []inputName) (Command, error) {
	var out Command
	switch c.Kind() {
	case "argv":
		out.Argv = make([]string, len(c.Argv))
		for i, a := range c.Argv {
			out.Argv[i], _ = rewriteWord(a, names)
		}
	case "shell":
		s, err := rewriteShell(c.Shell, names)
		if err != nil {
			return Command{}, err
		}
		out.Shell = s
	default:
		return Command{}, errors.New("empty command")
	}
	for _, n := range names {
		if n.hits == 0 {
			return Command{}, &ValidationError{Field: "inputs", Problem: fmt.Sprintf("%q is not named in the apply command: Airlock runs the apply on the approved copy of each input, "+
				"so the command must name it as a word (psql -f migrate.sql, sqlite3 db < migrate.sql, sqlite3 db '.read migrate.sql'); "+
				"a file read only by a script the command runs cannot be pinned", n.name)}
		}
	}
	return out, nil
}

// rewriteShell replaces literal words (unquoted, or quoted without expansions) naming an
// input, redirection targets included, with the shell-quoted new path.
func rewriteShell(src string, names []inputName) (string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), "")
	if err != nil {
		return "", &ValidationError{Field: "apply.shell", Problem: fmt.Sprintf("cannot be parsed to find the input files it names: %v", err)}
	}
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	hdocs := map[*syntax.Word]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && r.Hdoc != nil {
			// A here-document body is not a word: quoting a path in it would change
			// the text. An input named only there is "not named".
			hdocs[r.Hdoc] = true
		}
		w, ok := n.(*syntax.Word)
		if !ok || hdocs[w] {
			return !ok
		}
		lit, ok := literalWord(w)
		if !ok {
			return true
		}
		if nw, changed := rewriteWord(lit, names); changed {
			q, err := syntax.Quote(nw, syntax.LangPOSIX)
			if err != nil {
				return true
			}
			edits = append(edits, edit{from: int(w.Pos().Offset()), to: int(w.End().Offset()), text: q})
		}
		return false
	})
	var b bytes.Buffer
	last := 0
	for _, e := range edits {
		if e.from < last || e.to > len(src) {
			continue
		}
		b.WriteString(src[last:e.from])
		b.WriteString(e.text)
		last = e.to
	}
	b.WriteString(src[last:])
	return b.String(), nil
}

// literalWord returns the value of a word that needs no expansion.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(x.Value, `\*?[~`) {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			if x.Dollar {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(l.Value, `\$`+"`") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}
