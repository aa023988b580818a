package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox"
)

// Inputs of the file tools. Paths are absolute or relative to the workspace.
type (
	readFileIn struct {
		Path   string `json:"path" jsonschema:"the file to read, absolute or relative to the workspace"`
		Offset int    `json:"offset,omitempty" jsonschema:"the first line to return, counting from 1 (default 1)"`
		Limit  int    `json:"limit,omitempty" jsonschema:"how many lines to return (default 2000)"`
	}
	listDirIn struct {
		Path string `json:"path,omitempty" jsonschema:"the directory to list, absolute or relative to the workspace (default: the workspace)"`
	}
	searchFilesIn struct {
		Path       string `json:"path,omitempty" jsonschema:"the directory to search, absolute or relative to the workspace (default: the workspace)"`
		Glob       string `json:"glob,omitempty" jsonschema:"only files whose path matches this glob: * and ? within a name, ** across directories, {a,b} alternatives; without a slash it matches the file name (e.g. *.go)"`
		Regex      string `json:"regex,omitempty" jsonschema:"only lines matching this regular expression (RE2 syntax); without it the matching file names are listed"`
		MaxResults int    `json:"max_results,omitempty" jsonschema:"stop after this many results (default 200)"`
	}
	writeFileIn struct {
		Path    string `json:"path" jsonschema:"the file to create or overwrite, absolute or relative to the workspace; missing parent directories are created"`
		Content string `json:"content" jsonschema:"the complete new content of the file"`
	}
	editFileIn struct {
		Path       string `json:"path" jsonschema:"the file to edit, absolute or relative to the workspace"`
		OldString  string `json:"old_string" jsonschema:"the exact text to replace, including whitespace and indentation; it must occur exactly once unless replace_all is true"`
		NewString  string `json:"new_string" jsonschema:"the text to put in its place"`
		ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence instead of requiring exactly one"`
	}
)

const (
	defaultReadLines = 2000
	maxReadBytes     = 256 << 10
	maxSearchFile    = 4 << 20
)

// abs makes a path absolute against the workspace.
func (s *Server) abs(p string) string {
	if p == "" {
		return s.opts.Policy.Cwd
	}
	if (p == "~" || strings.HasPrefix(p, "~/")) && s.opts.Policy.Home != "" {
		p = filepath.Join(s.opts.Policy.Home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.opts.Policy.Cwd, p)
	}
	return filepath.Clean(p)
}

// isolationError words a sandbox refusal for the model.
func isolationError(err error) error {
	return fmt.Errorf("isolation error: %w", err)
}

func (s *Server) readable(p *string) (string, error) {
	*p = s.abs(*p)
	return *p, precheck(s.opts.Policy.CheckRead(*p))
}

func (s *Server) writable(p *string) (string, error) {
	if *p == "" {
		return "", errors.New("path is required")
	}
	*p = s.abs(*p)
	return *p, precheck(s.opts.Policy.CheckWrite(*p))
}

func (s *Server) addFileTools() {
	governed(s, &mcp.Tool{Name: api.ToolReadFile, Annotations: annotations("Read a file", toolKind{ReadOnly: true, Idempotent: true}),
		Description: "Read a text file, by lines. Returns the lines from offset (1-based) for limit lines (default 2000), " +
			"and says how many lines the file has when more remain. Paths are absolute or relative to the workspace."},
		func(in *readFileIn) (string, error) { return s.readable(&in.Path) },
		func(ctx context.Context, in readFileIn) (*mcp.CallToolResult, api.Outcome) {
			text, err := readLines(s.guard(s.policy(ctx)), in.Path, in.Offset, in.Limit)
			if err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(text), ranOK(nil)
		})
	governed(s, &mcp.Tool{Name: api.ToolListDir, Annotations: annotations("List a directory", toolKind{ReadOnly: true, Idempotent: true}),
		Description: "List a directory: one entry per line, directories with a trailing /, files with their size, symlinks with their target."},
		func(in *listDirIn) (string, error) { return s.readable(&in.Path) },
		func(ctx context.Context, in listDirIn) (*mcp.CallToolResult, api.Outcome) {
			text, err := listDir(s.guard(s.policy(ctx)), in.Path)
			if err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(text), ranOK(nil)
		})
	governed(s, &mcp.Tool{Name: api.ToolSearchFiles, Annotations: annotations("Search files", toolKind{ReadOnly: true, Idempotent: true}),
		Description: "Find files by glob and/or lines by regular expression under a directory (default: the workspace; .git is skipped). " +
			"With regex, returns path:line: text for each matching line; without it, the matching file paths."},
		func(in *searchFilesIn) (string, error) {
			if in.Regex != "" {
				if _, err := regexp.Compile(in.Regex); err != nil {
					return "", fmt.Errorf("regex %q is not valid RE2: %v", in.Regex, err)
				}
			}
			if in.Glob != "" {
				if _, err := globRegexp(in.Glob); err != nil {
					return "", err
				}
			}
			dir, err := s.readable(&in.Path)
			return strings.TrimSpace(dir + " " + in.Glob + " " + in.Regex), err
		},
		func(ctx context.Context, in searchFilesIn) (*mcp.CallToolResult, api.Outcome) {
			text, err := searchFiles(ctx, s.guard(s.policy(ctx)), in)
			if err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(text), ranOK(nil)
		})
	governed(s, &mcp.Tool{Name: api.ToolWriteFile, Annotations: annotations("Write a file", toolKind{Destructive: true, Idempotent: true}),
		Description: "Create a file or replace its whole content. Only inside the workspace and the configured writable roots " +
			"(protected paths such as .git stay read-only). To change part of a file, use edit_file."},
		func(in *writeFileIn) (string, error) { return s.writable(&in.Path) },
		func(ctx context.Context, in writeFileIn) (*mcp.CallToolResult, api.Outcome) {
			if err := writeFile(s.confinedOpen(s.policy(ctx)), in.Path, in.Content); err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(fmt.Sprintf("wrote %d bytes to %s", len(in.Content), in.Path)), ranOK(nil)
		})
	governed(s, &mcp.Tool{Name: api.ToolEditFile, Annotations: annotations("Edit a file", toolKind{Destructive: true}),
		Description: "Replace an exact piece of text in a file. old_string must match exactly (whitespace included) and occur " +
			"exactly once, unless replace_all is true; read the file first. Only inside the workspace and the writable roots."},
		func(in *editFileIn) (string, error) { return s.writable(&in.Path) },
		func(ctx context.Context, in editFileIn) (*mcp.CallToolResult, api.Outcome) {
			n, err := editFile(s.confinedOpen(s.policy(ctx)), in.Path, in.OldString, in.NewString, in.ReplaceAll)
			if err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(fmt.Sprintf("replaced %d occurrence(s) in %s", n, in.Path)), ranOK(nil)
		})
}

func readLines(g *guard, path string, offset, limit int) (string, error) {
	if offset < 1 {
		offset = 1
	}
	if limit <= 0 {
		limit = defaultReadLines
	}
	data, err := readJudged(g, path)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return "", fmt.Errorf("%s is a binary file (%d bytes); read_file returns text only", path, len(data))
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	total := len(lines)
	if offset > total && total > 0 {
		return "", fmt.Errorf("offset %d is past the end of %s, which has %d lines", offset, path, total)
	}
	end := min(total, offset-1+limit)
	var b strings.Builder
	for i := offset - 1; i < end; i++ {
		if b.Len()+len(lines[i]) > maxReadBytes {
			end = i
			break
		}
		b.WriteString(lines[i])
	}
	if end < total {
		if !strings.HasSuffix(b.String(), "\n") && b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[lines %d–%d of %d; call read_file with offset=%d for more]\n", offset, end, total, end+1)
	}
	return b.String(), nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readJudged reads the regular file path, judged by what was opened (see guard).
func readJudged(g *guard, path string) ([]byte, error) {
	f, err := g.openRead(path, 0)
	if err != nil {
		if _, ok := sandbox.IsDenied(err); ok {
			return nil, err
		}
		return nil, fmt.Errorf("read %s: %w", path, unwrapPathError(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if info.IsDir() {
		return nil, fmt.Errorf("%s is a directory: list it with list_dir", path)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s); read_file reads files only", path, info.Mode().Type())
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// hiddenNote says how many entries were left out because they are hidden.
func hiddenNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("[skipped %d hidden entries: credentials and Airlock's own state are hidden from sandboxed runs]\n", n)
}

func listDir(g *guard, dir string) (string, error) {
	f, err := g.openRead(dir, syscall.O_DIRECTORY)
	if err != nil {
		if _, ok := sandbox.IsDenied(err); ok {
			return "", err
		}
		if errors.Is(err, syscall.ENOTDIR) {
			return "", fmt.Errorf("%s is not a directory: read it with read_file", dir)
		}
		return "", fmt.Errorf("list %s: %w", dir, unwrapPathError(err))
	}
	defer f.Close()
	real, err := fdPath(f)
	if err != nil {
		return "", fmt.Errorf("list %s: %w", dir, err)
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return "", fmt.Errorf("list %s: %w", dir, unwrapPathError(err))
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var b strings.Builder
	for i, e := range entries {
		if i == 1000 {
			fmt.Fprintf(&b, "[%d more entries not shown]\n", len(entries)-1000)
			break
		}
		child := filepath.Join(real, e.Name())
		if _, ok := g.hiddenRead(child); ok {
			// Its name is shown (a sandboxed ls sees it too), never what it holds.
			fmt.Fprintf(&b, "%s\t(hidden)\n", e.Name())
			continue
		}
		switch {
		case e.IsDir():
			fmt.Fprintf(&b, "%s/\n", e.Name())
		case e.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(child)
			fmt.Fprintf(&b, "%s -> %s\n", e.Name(), target)
		default:
			size := int64(0)
			if info, err := e.Info(); err == nil {
				size = info.Size()
			}
			fmt.Fprintf(&b, "%s\t%d bytes\n", e.Name(), size)
		}
	}
	if len(entries) == 0 {
		fmt.Fprintf(&b, "(%s is empty)\n", dir)
	}
	return b.String(), nil
}

// globRegexp translates a glob (*, ?, **, {a,b}) into an anchored regular expression.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case c == '*' && strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case c == '*' && strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '{':
			depth++
			b.WriteString("(?:")
		case c == '}' && depth > 0:
			depth--
			b.WriteString(")")
		case c == ',' && depth > 0:
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("glob %q has an unclosed {", glob)
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

func searchFiles(ctx context.Context, g *guard, in searchFilesIn) (string, error) {
	max := in.MaxResults
	if max <= 0 {
		max = 200
	}
	sr := searcher{ctx: ctx, g: g, root: in.Path, max: max}
	var err error
	if in.Glob != "" {
		if sr.glob, err = globRegexp(in.Glob); err != nil {
			return "", err
		}
	}
	if in.Regex != "" {
		if sr.re, err = regexp.Compile(in.Regex); err != nil {
			return "", fmt.Errorf("regex %q: %w", in.Regex, err)
		}
	}
	sr.byName = in.Glob != "" && !strings.Contains(in.Glob, "/")
	root, err := g.openRead(in.Path, 0)
	if err != nil {
		if _, ok := sandbox.IsDenied(err); ok {
			return "", err
		}
		return "", fmt.Errorf("search %s: %w", in.Path, unwrapPathError(err))
	}
	info, err := root.Stat()
	switch {
	case err != nil:
		root.Close()
		return "", fmt.Errorf("search %s: %w", in.Path, err)
	case info.IsDir():
		err = sr.dir(root, "")
	default:
		err = sr.file(root, in.Path, filepath.Base(in.Path), filepath.Base(in.Path))
		root.Close()
	}
	if err != nil && !errors.Is(err, errEnough) {
		return "", fmt.Errorf("search %s: %w", in.Path, err)
	}
	results := sr.results
	if !errors.Is(err, errEnough) {
		sort.Strings(results)
	}
	note := hiddenNote(sr.hidden)
	if len(results) == 0 {
		return "no matches under " + in.Path + "\n" + note, nil
	}
	out := strings.Join(results, "\n") + "\n"
	if errors.Is(err, errEnough) {
		out += fmt.Sprintf("[stopped after %d results; narrow the search or raise max_results]\n", max)
	}
	return out + note, nil
}

var errEnough = errors.New("enough results")

// searcher walks a tree through directory descriptors: every entry is opened relative to
// the directory that holds it and without following links, so nothing swapped in during
// the walk leads out of the tree, and each directory and file is judged before it is
// entered or read. Hidden entries are skipped and counted.
type searcher struct {
	ctx      context.Context
	g        *guard
	root     string // as the caller gave it: results are shown under it
	glob, re *regexp.Regexp
	byName   bool
	max      int
	results  []string
	hidden   int
}

// dir searches the open directory d (rel to the root; "" for the root) and closes it.
func (sr *searcher) dir(d *os.File, rel string) error {
	defer d.Close()
	if err := sr.ctx.Err(); err != nil {
		return err
	}
	real, err := fdPath(d)
	if err != nil {
		return nil // cannot be judged: skipped
	}
	entries, err := d.ReadDir(-1)
	if err != nil && len(entries) == 0 {
		return nil // unreadable entries are skipped
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		name := e.Name()
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		if _, ok := sr.g.hiddenRead(filepath.Join(real, name)); ok {
			sr.hidden++
			continue
		}
		switch {
		case e.IsDir():
			if name == ".git" {
				continue
			}
			fd, err := unix.Openat(int(d.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
			if err != nil {
				continue // gone, unreadable, or swapped for a link since it was listed
			}
			sub := os.NewFile(uintptr(fd), filepath.Join(real, name))
			if sr.g.hiddenID(sub) {
				sub.Close()
				sr.hidden++
				continue
			}
			if err := sr.dir(sub, childRel); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if sr.glob != nil {
				subject := childRel
				if sr.byName {
					subject = name
				}
				if !sr.glob.MatchString(subject) {
					continue
				}
			}
			shown := filepath.Join(sr.root, filepath.FromSlash(childRel))
			if sr.re == nil {
				sr.results = append(sr.results, shown)
				if len(sr.results) >= sr.max {
					return errEnough
				}
				continue
			}
			fd, err := unix.Openat(int(d.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
			if err != nil {
				continue
			}
			f := os.NewFile(uintptr(fd), filepath.Join(real, name))
			err = sr.file(f, shown, name, childRel)
			f.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// file searches the open file f for the regex; hidden and hard-linked-to-hidden files are
// skipped (and counted), binary and huge ones left out.
func (sr *searcher) file(f *os.File, shown, name, rel string) error {
	if sr.glob != nil {
		subject := filepath.ToSlash(rel)
		if sr.byName {
			subject = name
		}
		if !sr.glob.MatchString(subject) {
			return nil
		}
	}
	if err := sr.g.judge(f, shown, false); err != nil {
		sr.hidden++
		return nil
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxSearchFile {
		return nil
	}
	if sr.re == nil {
		sr.results = append(sr.results, shown)
		if len(sr.results) >= sr.max {
			return errEnough
		}
		return nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if n == 1 && bytes.IndexByte(line, 0) >= 0 {
			return nil // binary
		}
		if sr.re.Match(line) {
			text := string(line)
			if len(text) > 300 {
				text = text[:300] + "…"
			}
			sr.results = append(sr.results, fmt.Sprintf("%s:%d: %s", shown, n, text))
			if len(sr.results) >= sr.max {
				return errEnough
			}
		}
	}
	return nil
}

func writeFile(open opener, path, content string) error {
	f, err := open(path, true)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPathError(err))
	}
	defer f.Close()
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteAt([]byte(content), 0); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func editFile(open opener, path, old, new string, all bool) (int, error) {
	f, err := open(path, false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("%s does not exist: create it with write_file", path)
		}
		return 0, fmt.Errorf("edit %s: %w", path, unwrapPathError(err))
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	out, n, err := replaceExact(string(data), old, new, all)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteAt([]byte(out), 0); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return n, f.Close()
}

// replaceExact replaces old by new in content: exactly one occurrence, or all of them.
func replaceExact(content, old, new string, all bool) (string, int, error) {
	if old == "" {
		return "", 0, errors.New("old_string is empty: give the exact text to replace (to write a whole file, use write_file)")
	}
	if old == new {
		return "", 0, errors.New("old_string and new_string are the same: nothing would change")
	}
	n := strings.Count(content, old)
	switch {
	case n == 0:
		return "", 0, errors.New("old_string was not found: it must match the file exactly, whitespace and indentation included; read the file again with read_file and copy the text")
	case n > 1 && !all:
		return "", 0, fmt.Errorf("old_string occurs %d times (lines %s): include more surrounding text to make it unique, or set replace_all to replace every occurrence", n, occurrenceLines(content, old, 5))
	}
	if all {
		return strings.ReplaceAll(content, old, new), n, nil
	}
	return strings.Replace(content, old, new, 1), 1, nil
}

// occurrenceLines lists the line numbers where old starts (at most max of them).
func occurrenceLines(content, old string, max int) string {
	var lines []string
	off := 0
	for len(lines) < max {
		i := strings.Index(content[off:], old)
		if i < 0 {
			break
		}
		lines = append(lines, fmt.Sprint(strings.Count(content[:off+i], "\n")+1))
		off += i + len(old)
	}
	return strings.Join(lines, ", ")
}
