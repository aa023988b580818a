package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// This file edits config.toml the way a careful person would: it changes only the text
// of the value being set (or the lines being added or removed), so the person's
// comments, ordering and formatting elsewhere stay exactly as they were. go-toml's
// encoder does not keep comments, so the document is never re-encoded: the parser only
// tells where each key and table was written.

// ErrChangedOnDisk says config.toml changed between the moment it was read and the
// moment the edit would have been written: nothing was written.
var ErrChangedOnDisk = errors.New("config.toml changed on disk; reload and try again")

// EditOp is what an Edit does.
type EditOp int

// The edits.
const (
	// OpSet sets a key (replacing its value where it is written, or adding it to its table).
	OpSet EditOp = iota
	// OpUnset removes a key's line, so the value falls back to its default.
	OpUnset
	// OpAppendTable appends an entry to an array of tables ([[permission.rules]]).
	OpAppendTable
	// OpRemoveTable removes the Index-th entry (from 0) of an array of tables.
	OpRemoveTable
)

// Field is one key of an array-of-tables entry, in the order it is written.
type Field struct {
	Key   string
	Value any
}

// Edit is one change to the document. Path names the key (or the array of tables) part
// by part, so a part may itself contain a dot ("permission", "tiers", "mcp.fetch").
type Edit struct {
	Op     EditOp
	Path   []string
	Value  any // OpSet: string, bool, int, int64, []string
	Fields []Field
	Index  int
}

// Set returns the edit that sets path to v.
func Set(v any, path ...string) Edit { return Edit{Op: OpSet, Path: path, Value: v} }

// Unset returns the edit that removes path from the file.
func Unset(path ...string) Edit { return Edit{Op: OpUnset, Path: path} }

// AppendTable returns the edit that appends an entry with fields to the array of tables path.
func AppendTable(fields []Field, path ...string) Edit {
	return Edit{Op: OpAppendTable, Path: path, Fields: fields}
}

// RemoveTable returns the edit that removes the index-th entry of the array of tables path.
func RemoveTable(index int, path ...string) Edit {
	return Edit{Op: OpRemoveTable, Path: path, Index: index}
}

func (e Edit) String() string { return dotted(e.Path) }

// ApplyEdits returns data with the edits applied in order. It does not validate the
// result against Airlock's schema (WriteEdited does); it refuses what it cannot edit
// without rewriting the person's text, such as a key inside an inline table.
func ApplyEdits(data []byte, edits ...Edit) ([]byte, error) {
	out := data
	for _, e := range edits {
		if len(e.Path) == 0 {
			return nil, errors.New("edit config.toml: an edit names no key")
		}
		for _, p := range e.Path {
			if p == "" {
				return nil, fmt.Errorf("edit config.toml: %q has an empty part", dotted(e.Path))
			}
			if !utf8.ValidString(p) {
				return nil, fmt.Errorf("edit config.toml: the key %q is not valid UTF-8", p)
			}
		}
		doc, err := scanDocument(out)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case OpSet:
			val, err := encodeValue(e.Value)
			if err != nil {
				return nil, fmt.Errorf("set %s: %w", e, err)
			}
			out, err = doc.set(e.Path, val)
			if err != nil {
				return nil, err
			}
		case OpUnset:
			out, err = doc.unset(e.Path)
			if err != nil {
				return nil, err
			}
		case OpAppendTable:
			out, err = doc.appendTable(e.Path, e.Fields)
			if err != nil {
				return nil, err
			}
		case OpRemoveTable:
			out, err = doc.removeTable(e.Path, e.Index)
			if err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("edit config.toml: unknown edit %d", e.Op)
		}
	}
	return out, nil
}

// Snapshot is config.toml as read before an edit: its bytes and what tells whether it
// changed since.
type Snapshot struct {
	Data    []byte
	Hash    string // sha256 of Data, hex
	ModTime time.Time
	Mode    fs.FileMode
	Exists  bool
}

// ReadSnapshot reads path for an edit. A missing file is an empty document (written
// with mode 0600 when created).
func ReadSnapshot(path string) (Snapshot, error) {
	real := resolveTarget(path)
	info, err := os.Stat(real)
	if errors.Is(err, fs.ErrNotExist) {
		return Snapshot{Hash: hashOf(nil), Mode: 0o600}, nil
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("read %s: %w", path, err)
	}
	if info.Size() > maxFileSize {
		return Snapshot{}, fmt.Errorf("read %s: the file is %d bytes, over the %d-byte limit for a config file", path, info.Size(), maxFileSize)
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return Snapshot{}, fmt.Errorf("read %s: %w", path, err)
	}
	return Snapshot{Data: data, Hash: hashOf(data), ModTime: info.ModTime(), Mode: info.Mode().Perm(), Exists: true}, nil
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// resolveTarget follows a symlinked config.toml (dotfile managers link it) so the edit
// replaces the file it points at, not the link.
func resolveTarget(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// writeMu serializes this process's edits; another process's are caught by the
// changed-on-disk check.
var writeMu sync.Mutex

// WriteEdited applies edits to base (as read by ReadSnapshot), validates the result with
// Parse, and replaces path atomically (a temporary file in the same directory, synced,
// then renamed over it, keeping its mode). It refuses with ErrChangedOnDisk when the
// file no longer matches base, and never writes a file Parse rejects: the error then
// names every problem. It returns the snapshot of what it wrote.
func WriteEdited(path string, base Snapshot, edits ...Edit) (Snapshot, error) {
	writeMu.Lock()
	defer writeMu.Unlock()
	next, err := ApplyEdits(base.Data, edits...)
	if err != nil {
		return Snapshot{}, err
	}
	if _, err := Parse(path, next); err != nil {
		return Snapshot{}, fmt.Errorf("the edit was not written, since config.toml would not load: %w", err)
	}
	if base.Exists && bytes.Equal(next, base.Data) {
		// Nothing to change: leave the file (and its mtime) alone.
		return base, unchanged(resolveTarget(path), base)
	}
	real := resolveTarget(path)
	if err := unchanged(real, base); err != nil {
		return Snapshot{}, err
	}
	dir := filepath.Dir(real)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Snapshot{}, fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".config.toml.edit-*")
	if err != nil {
		return Snapshot{}, fmt.Errorf("write %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.Remove(tmp.Name())
		}
	}()
	mode := base.Mode
	if mode == 0 {
		mode = 0o600
	}
	if _, err := tmp.Write(next); err != nil {
		tmp.Close()
		return Snapshot{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return Snapshot{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return Snapshot{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return Snapshot{}, fmt.Errorf("write %s: %w", path, err)
	}
	// Last look before the rename: another writer may have saved meanwhile.
	if err := unchanged(real, base); err != nil {
		return Snapshot{}, err
	}
	if err := os.Rename(tmp.Name(), real); err != nil {
		return Snapshot{}, fmt.Errorf("write %s: %w", path, err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	info, err := os.Stat(real)
	if err != nil {
		return Snapshot{}, fmt.Errorf("write %s: %w", path, err)
	}
	return Snapshot{Data: next, Hash: hashOf(next), ModTime: info.ModTime(), Mode: info.Mode().Perm(), Exists: true}, nil
}

// unchanged reports ErrChangedOnDisk when the file at real is not what base read.
func unchanged(real string, base Snapshot) error {
	info, err := os.Stat(real)
	if errors.Is(err, fs.ErrNotExist) {
		if base.Exists {
			return fmt.Errorf("%w (it was removed)", ErrChangedOnDisk)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("check %s: %w", real, err)
	}
	if !base.Exists {
		return fmt.Errorf("%w (it was created meanwhile)", ErrChangedOnDisk)
	}
	if info.Size() > maxFileSize {
		return ErrChangedOnDisk
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return fmt.Errorf("check %s: %w", real, err)
	}
	if !info.ModTime().Equal(base.ModTime) || hashOf(data) != base.Hash {
		return ErrChangedOnDisk
	}
	return nil
}

// EditFile reads path, applies edits and writes it (ReadSnapshot + WriteEdited).
func EditFile(path string, edits ...Edit) (Snapshot, error) {
	base, err := ReadSnapshot(path)
	if err != nil {
		return Snapshot{}, err
	}
	return WriteEdited(path, base, edits...)
}

// --- the document's layout --------------------------------------------------------

// span is a byte range [start, end) of the document.
type span struct{ start, end int }

// header is a [table] or [[array table]] line.
type header struct {
	path  []string
	array bool
	line  span // the whole line, its newline included
}

// keyval is one key = value expression.
type keyval struct {
	table   []string // the header it is under (nil: the top level)
	inArray bool     // under an [[array table]] header
	key     []string // the key as written (dotted parts)
	value   span     // the value's text
	line    span     // the whole line(s), the newline included
	inline  bool     // the value is an inline table
}

// document is where things were written.
type document struct {
	data    []byte
	eol     string
	headers []header
	keys    []keyval
}

func scanDocument(data []byte) (*document, error) {
	d := &document{data: data, eol: "\n"}
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		d.eol = "\r\n"
	}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	inArray := false
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, first, _ := keyParts(e.Key())
			table, inArray = parts, e.Kind == unstable.ArrayTable
			start := lineStart(data, int(first.Raw.Offset))
			d.headers = append(d.headers, header{path: parts, array: inArray, line: span{start, lineEnd(data, start)}})
		case unstable.KeyValue:
			parts, first, last := keyParts(e.Key())
			eq := bytes.IndexByte(data[last.Raw.Offset+last.Raw.Length:], '=')
			if eq < 0 {
				return nil, errors.New("edit config.toml: a key without '='")
			}
			vstart := int(last.Raw.Offset+last.Raw.Length) + eq + 1
			for vstart < len(data) && (data[vstart] == ' ' || data[vstart] == '\t') {
				vstart++
			}
			vend := int(e.Raw.Offset + e.Raw.Length)
			start := lineStart(data, int(first.Raw.Offset))
			d.keys = append(d.keys, keyval{table: table, inArray: inArray, key: parts,
				value: span{vstart, vend}, line: span{start, lineEnd(data, vend)},
				inline: e.Value().Kind == unstable.InlineTable})
		}
	}
	if err := p.Error(); err != nil {
		var pe *unstable.ParserError
		if errors.As(err, &pe) {
			pos := p.Shape(p.Range(pe.Highlight)).Start
			row, col := pos.Line, pos.Column
			return nil, fmt.Errorf("config.toml cannot be edited until its mistake at line %d, column %d is fixed: %s", row, col, pe.Message)
		}
		return nil, fmt.Errorf("config.toml cannot be edited until it parses: %w", err)
	}
	// The parser above checks the syntax only; a duplicate key or a table defined twice
	// is caught by decoding.
	var generic map[string]any
	if err := toml.Unmarshal(data, &generic); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("config.toml cannot be edited until its mistake at line %d, column %d is fixed: %v", row, col, de)
		}
		return nil, fmt.Errorf("config.toml cannot be edited until it loads: %w", err)
	}
	return d, nil
}

func keyParts(it unstable.Iterator) (parts []string, first, last *unstable.Node) {
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		last = n
		parts = append(parts, string(n.Data))
	}
	return parts, first, last
}

func lineStart(data []byte, off int) int {
	return bytes.LastIndexByte(data[:off], '\n') + 1
}

// lineEnd is the offset just after the newline that ends the line holding off (or the
// end of the document).
func lineEnd(data []byte, off int) int {
	if off >= len(data) {
		return len(data)
	}
	i := bytes.IndexByte(data[off:], '\n')
	if i < 0 {
		return len(data)
	}
	return off + i + 1
}

func (kv keyval) full() []string { return append(append([]string{}, kv.table...), kv.key...) }

func equalPath(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && equalPath(path[:len(prefix)], prefix)
}

func dotted(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = encodeKey(p)
	}
	return strings.Join(parts, ".")
}

func (d *document) splice(s span, text string) []byte {
	out := make([]byte, 0, len(d.data)-(s.end-s.start)+len(text))
	out = append(out, d.data[:s.start]...)
	out = append(out, text...)
	return append(out, d.data[s.end:]...)
}

// refuseInline refuses an edit under a key written as an inline table or inside an
// array of tables: rewriting those would reformat the person's text.
func (d *document) refuseInline(path []string) error {
	for _, kv := range d.keys {
		full := kv.full()
		if !hasPrefix(path, full) || equalPath(path, full) {
			continue
		}
		if kv.inline {
			return fmt.Errorf("edit %s: %s is written as an inline table ({ … }) on line %d; edit it by hand, or write it as a [%s] table so Airlock can change one key",
				dotted(path), dotted(full), lineNumber(d.data, kv.line.start), dotted(full))
		}
		return fmt.Errorf("edit %s: %s is a single value on line %d, not a table; fix it by hand first", dotted(path), dotted(full), lineNumber(d.data, kv.line.start))
	}
	for _, h := range d.headers {
		if h.array && hasPrefix(path, h.path) {
			return fmt.Errorf("edit %s: %s is an array of tables ([[%s]]); change its entries one by one", dotted(path), dotted(h.path), dotted(h.path))
		}
	}
	return nil
}

func lineNumber(data []byte, off int) int { return bytes.Count(data[:off], []byte("\n")) + 1 }

func (d *document) find(path []string) (keyval, bool) {
	for _, kv := range d.keys {
		if !kv.inArray && equalPath(kv.full(), path) {
			return kv, true
		}
	}
	return keyval{}, false
}

func (d *document) set(path []string, val string) ([]byte, error) {
	if err := d.refuseInline(path); err != nil {
		return nil, err
	}
	if kv, ok := d.find(path); ok {
		if sameValue(d.data[kv.value.start:kv.value.end], val) {
			return d.data, nil // already so: keep the person's spelling of it
		}
		return d.splice(kv.value, val), nil
	}
	for _, kv := range d.keys {
		if !kv.inArray && hasPrefix(kv.full(), path) {
			return nil, fmt.Errorf("set %s: it is a table in config.toml (line %d), not a single value", dotted(path), lineNumber(d.data, kv.line.start))
		}
	}
	table, leaf := path[:len(path)-1], path[len(path)-1]
	// 1. Under the table's own [header]: after its last key, or right after the header.
	for i, h := range d.headers {
		if h.array || !equalPath(h.path, table) {
			continue
		}
		at := h.line.end
		for _, kv := range d.keys {
			if !kv.inArray && equalPath(kv.table, table) && kv.line.start >= h.line.end && (i+1 == len(d.headers) || kv.line.start < d.headers[i+1].line.start) {
				at = kv.line.end
			}
		}
		return d.insertLine(at, encodeKey(leaf)+" = "+val), nil
	}
	// 2. The table exists only through dotted keys (isolation.backend = "os" at the top
	//    level): add a dotted key next to its siblings, relative to their header.
	if len(table) > 0 {
		var sibling *keyval
		for i := range d.keys {
			kv := d.keys[i]
			if !kv.inArray && len(kv.key) > 1 && hasPrefix(kv.full(), table) && hasPrefix(table, kv.table) {
				sibling = &d.keys[i]
			}
		}
		if sibling != nil {
			rel := append(append([]string{}, table[len(sibling.table):]...), leaf)
			return d.insertLine(sibling.line.end, dotted(rel)+" = "+val), nil
		}
	}
	// 3. A top-level key: after the last top-level key, or before the first table (and
	//    the comments just above it).
	if len(table) == 0 {
		at := 0
		last := -1
		for _, kv := range d.keys {
			if kv.table == nil {
				last = kv.line.end
			}
		}
		switch {
		case last >= 0:
			at = last
		case len(d.headers) > 0:
			at = d.commentsAbove(d.headers[0].line.start)
		default:
			at = len(d.data)
		}
		return d.insertLine(at, encodeKey(leaf)+" = "+val), nil
	}
	// 4. A new table at the end.
	return d.appendBlock("["+dotted(table)+"]", encodeKey(leaf)+" = "+val), nil
}

// sameValue reports whether two TOML value texts mean the same value ('a' and "a").
func sameValue(raw []byte, val string) bool {
	var a, b map[string]any
	if toml.Unmarshal(append([]byte("v = "), raw...), &a) != nil || toml.Unmarshal([]byte("v = "+val), &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// commentsAbove moves off up over the comment lines directly above it (they describe
// what follows).
func (d *document) commentsAbove(off int) int {
	for off > 0 {
		prev := lineStart(d.data, off-1)
		line := strings.TrimSpace(string(d.data[prev:off]))
		if !strings.HasPrefix(line, "#") {
			return off
		}
		off = prev
	}
	return off
}

// insertLine inserts one line at off (the start of a line, or the end of the document).
func (d *document) insertLine(off int, line string) []byte {
	prefix := ""
	if off > 0 && d.data[off-1] != '\n' {
		prefix = d.eol
	}
	return d.splice(span{off, off}, prefix+line+d.eol)
}

// appendBlock adds a table at the end, separated from what precedes by a blank line.
func (d *document) appendBlock(head string, lines ...string) []byte {
	var b strings.Builder
	switch {
	case len(d.data) == 0:
	case bytes.HasSuffix(d.data, []byte(d.eol+d.eol)), bytes.HasSuffix(d.data, []byte("\n\n")):
	case d.data[len(d.data)-1] == '\n':
		b.WriteString(d.eol)
	default:
		b.WriteString(d.eol + d.eol)
	}
	b.WriteString(head + d.eol)
	for _, l := range lines {
		b.WriteString(l + d.eol)
	}
	return d.splice(span{len(d.data), len(d.data)}, b.String())
}

func (d *document) unset(path []string) ([]byte, error) {
	if err := d.refuseInline(path); err != nil {
		return nil, err
	}
	kv, ok := d.find(path)
	if !ok {
		return d.data, nil // already absent: the default applies
	}
	// Another expression on the same line (impossible in TOML) is not a concern; a
	// value spanning several lines goes with its key.
	return d.splice(kv.line, ""), nil
}

// arrayEntries are the [[path]] headers, in order, with where each entry ends.
func (d *document) arrayEntries(path []string) []span {
	var out []span
	for i, h := range d.headers {
		if !h.array || !equalPath(h.path, path) {
			continue
		}
		end := len(d.data)
		if i+1 < len(d.headers) {
			end = d.commentsAbove(d.headers[i+1].line.start)
		}
		// Blank lines after the entry separate it from what follows: not its own.
		for end > h.line.end {
			prev := lineStart(d.data, end-1)
			if strings.TrimSpace(string(d.data[prev:end])) != "" {
				break
			}
			end = prev
		}
		out = append(out, span{h.line.start, end})
	}
	return out
}

func (d *document) appendTable(path []string, fields []Field) ([]byte, error) {
	for _, kv := range d.keys {
		if !kv.inArray && hasPrefix(path, kv.full()) {
			return nil, fmt.Errorf("add to %s: it is written as a value on line %d (%s = …); edit it by hand", dotted(path), lineNumber(d.data, kv.line.start), dotted(kv.full()))
		}
	}
	lines := make([]string, 0, len(fields))
	for _, f := range fields {
		if f.Key == "" || !utf8.ValidString(f.Key) {
			return nil, fmt.Errorf("add to %s: a field has no valid name", dotted(path))
		}
		val, err := encodeValue(f.Value)
		if err != nil {
			return nil, fmt.Errorf("add to %s: %s: %w", dotted(path), f.Key, err)
		}
		lines = append(lines, encodeKey(f.Key)+" = "+val)
	}
	head := "[[" + dotted(path) + "]]"
	entries := d.arrayEntries(path)
	if len(entries) == 0 {
		return d.appendBlock(head, lines...), nil
	}
	// After the last entry, so the new rule comes last (the last matching rule wins).
	at := entries[len(entries)-1].end
	block := head + d.eol + strings.Join(lines, d.eol) + d.eol
	prefix := d.eol
	if at > 0 && d.data[at-1] != '\n' {
		prefix = d.eol + d.eol
	}
	return d.splice(span{at, at}, prefix+block), nil
}

func (d *document) removeTable(path []string, index int) ([]byte, error) {
	entries := d.arrayEntries(path)
	if index < 0 || index >= len(entries) {
		return nil, fmt.Errorf("remove %s entry %d: config.toml has %d such entries; reload and try again", dotted(path), index+1, len(entries))
	}
	s := entries[index]
	// Take one blank line before it too, so removing leaves no growing gaps.
	if s.start > 0 {
		prev := lineStart(d.data, s.start-1)
		if strings.TrimSpace(string(d.data[prev:s.start])) == "" {
			s.start = prev
		}
	}
	return d.splice(s, ""), nil
}

// --- encoding values ----------------------------------------------------------------

// bareKey reports whether k can be written unquoted (TOML's bare keys: A-Za-z0-9_-).
func bareKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func encodeKey(k string) string {
	if bareKey(k) {
		return k
	}
	return encodeString(k)
}

func encodeValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return "", fmt.Errorf("%q is not valid UTF-8 text", x)
		}
		return encodeString(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		if x != float64(int64(x)) {
			return "", fmt.Errorf("%v is not a whole number", x)
		}
		return strconv.FormatInt(int64(x), 10), nil
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			if !utf8.ValidString(s) {
				return "", fmt.Errorf("%q is not valid UTF-8 text", s)
			}
			parts[i] = encodeString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case []any:
		parts := make([]string, len(x))
		for i, s := range x {
			str, ok := s.(string)
			if !ok || !utf8.ValidString(str) {
				return "", fmt.Errorf("list item %d is %T; only lists of text are supported", i+1, s)
			}
			parts[i] = encodeString(str)
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case nil:
		return "", errors.New("no value given (to remove a key, unset it)")
	}
	return "", fmt.Errorf("a %T cannot be written to config.toml", v)
}

// encodeString writes s as a TOML basic string: quotes, backslashes and control
// characters escaped (callers refuse invalid UTF-8 first).
func encodeString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
