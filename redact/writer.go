package redact

import (
	"bytes"
	"io"
	"regexp"
	"strings"
)

// maxLine is how much of a line without a newline Writer holds before it writes part of
// it; the part kept back (at least keepBack bytes, cut at a space) still catches a
// credential that continues in the next write.
// A line that starts like a JSON document may grow to maxJSONLine before it is cut, so
// an agent's event with a long tool result is still redacted as JSON.
const (
	maxLine     = 64 << 10
	maxJSONLine = 8 << 20
	keepBack    = 4 << 10
)

// Writer redacts a stream line by line ([StringWithSecrets] on each line) and writes the
// result to the underlying writer. A line is written when its newline (or carriage
// return, for progress output) arrives, so a credential split across writes is caught
// whole; Flush writes what is left. The lines of a PEM private key block are hidden until
// its END line, and a secret value that spans lines is hidden line by line.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	w       io.Writer
	secrets []string
	buf     []byte
	inKey   bool
	err     error
}

// NewWriter returns a Writer that writes to w, also hiding the exact values in secrets.
func NewWriter(w io.Writer, secrets []string) *Writer {
	var vals []string
	for _, s := range secrets {
		vals = append(vals, s)
		if !strings.ContainsAny(s, "\r\n") {
			continue
		}
		// Each line of a multi-line value is hidden on its own: the stream is redacted a
		// line at a time. Very short lines are common text, not the secret.
		for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if len(strings.TrimSpace(l)) >= 6 {
				vals = append(vals, l)
			}
		}
	}
	return &Writer{w: w, secrets: sortedValues(vals)}
}

// Write buffers p and writes every complete line, redacted. It reports len(p) unless the
// underlying writer failed.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexAny(w.buf, "\n\r")
		if i < 0 {
			break
		}
		line := w.buf[:i+1]
		w.line(line)
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > maxLine && (len(w.buf) > maxJSONLine || !startsJSON(w.buf)) {
		cut := len(w.buf) - keepBack
		for _, v := range w.secrets {
			cut = min(cut, len(w.buf)-len(v))
		}
		// Cut at a space so a name and its value (Bearer xyz, --token xyz) stay together
		// in the part kept back.
		if sp := bytes.LastIndexAny(w.buf[:max(cut, 0)], " \t"); sp > 0 {
			cut = sp
		}
		if cut > 0 {
			w.line(w.buf[:cut])
			w.buf = w.buf[cut:]
		}
	}
	// Reuse the buffer's room instead of growing it forever.
	w.buf = append(make([]byte, 0, max(len(w.buf), 256)), w.buf...)
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

// Flush writes what is left of an unterminated line.
func (w *Writer) Flush() error {
	if len(w.buf) > 0 {
		w.line(w.buf)
		w.buf = nil
	}
	return w.err
}

var (
	keyBegin = regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)
	keyEnd   = regexp.MustCompile(`-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)
)

func (w *Writer) line(b []byte) {
	s := string(b)
	if w.inKey {
		// Inside a private key: nothing of it is written (the BEGIN line already said
		// what was hidden) until its END line; what follows END on that line is.
		loc := keyEnd.FindStringIndex(s)
		if loc == nil {
			return
		}
		w.inKey = false
		s = s[loc[1]:]
		if strings.TrimSpace(s) == "" {
			return
		}
	}
	body := strings.TrimRight(s, "\r\n")
	if startsJSON([]byte(body)) {
		// A JSON line (an agent's event stream) stays JSON: its values are redacted,
		// its keys, punctuation and counts kept.
		if out, ok := (jsonRedactor{secrets: w.secrets}).document([]byte(body)); ok {
			w.write(string(out) + s[len(body):])
			return
		}
	}
	if b := keyBegin.FindStringIndex(s); b != nil && keyEnd.FindStringIndex(s[b[1]:]) == nil {
		w.inKey = true
	}
	// The line's end is kept apart: a rule that runs to the end of the text (an
	// unterminated key block) must not swallow it.
	w.write(StringWithSecrets(body, w.secrets) + s[len(body):])
}

func (w *Writer) write(s string) {
	if w.err != nil || s == "" {
		return
	}
	_, w.err = io.WriteString(w.w, s)
}

// startsJSON reports whether b starts (after blanks) like a JSON object or array.
func startsJSON(b []byte) bool {
	t := bytes.TrimLeft(b, " \t")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}
