package gateway

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/airlock-app/airlock/api"
)

// ErrPatch is wrapped by every refusal of a Codex patch Airlock cannot read.
var ErrPatch = errors.New("unreadable apply_patch")

// PatchOp is what one file section of a Codex patch does.
type PatchOp string

// The operations of Codex's apply_patch format.
const (
	PatchAdd    PatchOp = "add"
	PatchDelete PatchOp = "delete"
	PatchUpdate PatchOp = "update"
)

// PatchFile is one file section of a Codex apply_patch: its operation, its path (and the
// path it moves to), and its text — an added file's content, an update's hunks.
type PatchFile struct {
	Op     PatchOp
	Path   string
	MoveTo string
	Text   string
}

// patch markers, as Codex 0.171's apply_patch reads them.
const (
	patchBegin  = "*** Begin Patch"
	patchEnd    = "*** End Patch"
	patchAdd    = "*** Add File: "
	patchDelete = "*** Delete File: "
	patchUpdate = "*** Update File: "
	patchMove   = "*** Move to: "
	patchEOF    = "*** End of File"
)

// ParsePatch reads the file sections of a Codex apply_patch text. It is strict where
// Codex is lenient: marker lines are read with their surrounding blanks trimmed (as
// Codex's lenient parser does), every other line that starts with "***" is refused, and
// so is a patch without its begin and end markers or without a file, so that no path
// Codex would touch goes unread.
func ParsePatch(text string) ([]PatchFile, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	// Codex's own tool input may be the apply_patch command of a heredoc; the hook gets
	// the patch body, but trailing blank lines are common.
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != patchBegin || strings.TrimSpace(lines[len(lines)-1]) != patchEnd {
		return nil, fmt.Errorf("%w: it does not start with %q and end with %q", ErrPatch, patchBegin, patchEnd)
	}
	var files []PatchFile
	var cur *PatchFile
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.Text = body.String()
			files = append(files, *cur)
		}
		cur = nil
		body.Reset()
	}
	for i, line := range lines[1 : len(lines)-1] {
		marker := strings.TrimSpace(line)
		header := func(prefix string) (string, bool) {
			p, ok := strings.CutPrefix(marker, strings.TrimSpace(prefix))
			if !ok {
				return "", false
			}
			return strings.TrimSpace(p), true
		}
		if !strings.HasPrefix(marker, "***") {
			if cur == nil {
				return nil, fmt.Errorf("%w: line %d (%q) is outside any file section", ErrPatch, i+2, line)
			}
			body.WriteString(line)
			body.WriteByte('\n')
			continue
		}
		var op PatchOp
		var path string
		switch {
		case marker == patchEOF:
			if cur == nil || cur.Op != PatchUpdate {
				return nil, fmt.Errorf("%w: line %d: %q outside an updated file", ErrPatch, i+2, patchEOF)
			}
			body.WriteString(line)
			body.WriteByte('\n')
			continue
		case strings.HasPrefix(marker, strings.TrimSpace(patchMove)):
			p, _ := header(patchMove)
			if cur == nil || cur.Op != PatchUpdate || cur.MoveTo != "" || body.Len() > 0 || p == "" {
				return nil, fmt.Errorf("%w: line %d: %q must follow an %q line at once", ErrPatch, i+2, line, strings.TrimSpace(patchUpdate))
			}
			cur.MoveTo = p
			continue
		case strings.HasPrefix(marker, strings.TrimSpace(patchAdd)):
			op = PatchAdd
			path, _ = header(patchAdd)
		case strings.HasPrefix(marker, strings.TrimSpace(patchDelete)):
			op = PatchDelete
			path, _ = header(patchDelete)
		case strings.HasPrefix(marker, strings.TrimSpace(patchUpdate)):
			op = PatchUpdate
			path, _ = header(patchUpdate)
		default:
			return nil, fmt.Errorf("%w: line %d (%q) is no marker Airlock knows", ErrPatch, i+2, line)
		}
		if path == "" {
			return nil, fmt.Errorf("%w: line %d (%q) names no file", ErrPatch, i+2, line)
		}
		flush()
		cur = &PatchFile{Op: op, Path: path}
	}
	flush()
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: it changes no file", ErrPatch)
	}
	return files, nil
}

// MapCodexPatch maps a Codex apply_patch onto Airlock's file tools, one call per path it
// writes: an added file is a write_file with its content, an update an edit_file with
// its hunks (and a move a write_file of the destination too), a deletion an edit_file
// with delete. Relative paths are the patch's cwd's, as Codex resolves them.
func MapCodexPatch(text, cwd string) ([]MappedCall, error) {
	files, err := ParsePatch(text)
	if err != nil {
		return nil, err
	}
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		return filepath.Clean(p)
	}
	var calls []MappedCall
	for _, f := range files {
		path := abs(f.Path)
		switch f.Op {
		case PatchAdd:
			calls = append(calls, MappedCall{Tool: api.ToolWriteFile, Params: map[string]any{"path": path, "content": addedContent(f.Text)}})
		case PatchDelete:
			calls = append(calls, MappedCall{Tool: api.ToolEditFile, Params: map[string]any{"path": path, "delete": true}})
		case PatchUpdate:
			p := map[string]any{"path": path, "patch": f.Text}
			if f.MoveTo != "" {
				p["move_to"] = abs(f.MoveTo)
			}
			calls = append(calls, MappedCall{Tool: api.ToolEditFile, Params: p})
			if f.MoveTo != "" {
				calls = append(calls, MappedCall{Tool: api.ToolWriteFile, Params: map[string]any{"path": abs(f.MoveTo), "moved_from": path, "patch": f.Text}})
			}
		}
	}
	return calls, nil
}

// addedContent is an added file's text: its lines without their leading "+".
func addedContent(body string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(body, "\n") {
		if l == "" {
			continue
		}
		b.WriteString(strings.TrimPrefix(l, "+"))
	}
	return b.String()
}
