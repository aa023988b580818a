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

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	if strings.HasPrefix(p, "~/") && s.opts.Policy.Home != "" {
		p = filepath.Join(s.opts.Policy.Home, p[2:])
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
	governed(s, &mcp.Tool{Name: ToolReadFile, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Read a file"},
		Description: "Read a text file, by lines. Returns the lines from offset (1-based) for limit lines (default 2000), " +
			"and says how many lines the file has when more remain. Paths are absolute or relative to the workspace."},
		func(in *readFileIn) (string, error) { return s.readable(&in.Path) },
		func(_ context.Context, in readFileIn) (*mcp.CallToolResult, Outcome) {
			text, err := readLines(in.Path, in.Offset, in.Limit)
			if err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(text), ranOK(nil)
		})
	governed(s, &mcp.Tool{Name: ToolListDir, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "List a directory"},
		Description: "List a directory: one entry per line, directories with a trailing /, files with their size, symlinks with their target."},
		func(in *listDirIn) (string, error) { return s.readable(&in.Path) },
		func(_ context.Context, in listDirIn) (*mcp.CallToolResult, Outcome) {
			text, err := listDir(in.Path)
			if err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(text), ranOK(nil)
		})
	governed(s, &mcp.Tool{Name: ToolSearchFiles, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Search files"},
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
		func(ctx context.Context, in searchFilesIn) (*mcp.CallToolResult, Outcome) {
			text, err := searchFiles(ctx, in)
			if err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(text), ranOK(nil)
		})
	governed(s, &mcp.Tool{Name: ToolWriteFile, Annotations: &mcp.ToolAnnotations{Title: "Write a file", DestructiveHint: ptr(true)},
		Description: "Create a file or replace its whole content. Only inside the workspace and the configured writable roots " +
			"(protected paths such as .git stay read-only). To change part of a file, use edit_file."},
		func(in *writeFileIn) (string, error) { return s.writable(&in.Path) },
		func(_ context.Context, in writeFileIn) (*mcp.CallToolResult, Outcome) {
			if err := writeFile(s.confinedOpen, in.Path, in.Content); err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(fmt.Sprintf("wrote %d bytes to %s", len(in.Content), in.Path)), ranOK(nil)
		})
	governed(s, &mcp.Tool{Name: ToolEditFile, Annotations: &mcp.ToolAnnotations{Title: "Edit a file", DestructiveHint: ptr(true)},
		Description: "Replace an exact piece of text in a file. old_string must match exactly (whitespace included) and occur " +
			"exactly once, unless replace_all is true; read the file first. Only inside the workspace and the writable roots."},
		func(in *editFileIn) (string, error) { return s.writable(&in.Path) },
		func(_ context.Context, in editFileIn) (*mcp.CallToolResult, Outcome) {
			n, err := editFile(s.confinedOpen, in.Path, in.OldString, in.NewString, in.ReplaceAll)
			if err != nil {
				return errorResult("%v", err), ranOK(err)
			}
			return textResult(fmt.Sprintf("replaced %d occurrence(s) in %s", n, in.Path)), ranOK(nil)
		})
}

func readLines(path string, offset, limit int) (string, error) {
	if offset < 1 {
		offset = 1
	}
	if limit <= 0 {
		limit = defaultReadLines
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, unwrapPathError(err))
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

func listDir(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("list %s: %w", dir, unwrapPathError(err))
	}
	var b strings.Builder
	for i, e := range entries {
		if i == 1000 {
			fmt.Fprintf(&b, "[%d more entries not shown]\n", len(entries)-1000)
			break
		}
		switch {
		case e.IsDir():
			fmt.Fprintf(&b, "%s/\n", e.Name())
		case e.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(filepath.Join(dir, e.Name()))
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

func searchFiles(ctx context.Context, in searchFilesIn) (string, error) {
	max := in.MaxResults
	if max <= 0 {
		max = 200
	}
	var glob, re *regexp.Regexp
	var err error
	if in.Glob != "" {
		if glob, err = globRegexp(in.Glob); err != nil {
			return "", err
		}
	}
	if in.Regex != "" {
		if re, err = regexp.Compile(in.Regex); err != nil {
			return "", fmt.Errorf("regex %q: %w", in.Regex, err)
		}
	}
	byName := in.Glob != "" && !strings.Contains(in.Glob, "/")
	var results []string
	stop := errors.New("enough")
	err = filepath.WalkDir(in.Path, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != in.Path {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(in.Path, p)
		if glob != nil {
			subject := filepath.ToSlash(rel)
			if byName {
				subject = d.Name()
			}
			if !glob.MatchString(subject) {
				return nil
			}
		}
		if re == nil {
			results = append(results, p)
			if len(results) >= max {
				return stop
			}
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > maxSearchFile {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Bytes()
			if n == 1 && bytes.IndexByte(line, 0) >= 0 {
				return nil // binary
			}
			if re.Match(line) {
				text := string(line)
				if len(text) > 300 {
					text = text[:300] + "…"
				}
				results = append(results, fmt.Sprintf("%s:%d: %s", p, n, text))
				if len(results) >= max {
					return stop
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return "", fmt.Errorf("search %s: %w", in.Path, err)
	}
	if !errors.Is(err, stop) {
		sort.Strings(results)
	}
	if len(results) == 0 {
		return "no matches under " + in.Path + "\n", nil
	}
	out := strings.Join(results, "\n") + "\n"
	if errors.Is(err, stop) {
		out += fmt.Sprintf("[stopped after %d results; narrow the search or raise max_results]\n", max)
	}
	return out, nil
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
