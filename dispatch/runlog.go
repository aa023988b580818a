package dispatch

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-app/airlock/redact"
)

// runLog writes a run's combined output to its log file, redacted line by line
// (credentials of known shapes, and the exact values of the secrets injected into the
// run), and hands every line to onChunk for live streaming. Past its cap it keeps the
// head and the tail (the final error is at the end) and drops the middle, with a marker.
type runLog struct {
	mu        sync.Mutex
	f         *os.File
	red       *redact.Writer
	kept      *headTail // the redacted output: its head to onChunk and the file, its tail at close
	secrets   []string
	onChunk   func([]byte)
	lastWrite atomic.Int64 // unix nanos of the last output
}

// maxLogTail bounds the tail of a capped log, held in memory until the run ends.
const maxLogTail = 1 << 20

// headTail passes the first head bytes written to it on to w and keeps the last bytes
// past them in a ring of tailMax, which close passes on after a marker of what was
// dropped between. Once w fails, the rest goes to the ring too (close tries again).
type headTail struct {
	w       io.Writer
	head    int64
	kept    int64 // bytes passed on to w
	past    int64 // bytes written past the head (in the ring or dropped)
	failed  bool
	tailMax int
	ring    []byte // made at the first byte past the head
	pos     int    // where the ring's next byte goes
	wrapped bool   // the ring is full and pos is its oldest byte
}

func newHeadTail(w io.Writer, limit int64) *headTail {
	tail := min(limit/2, maxLogTail)
	return &headTail{w: w, head: limit - tail, tailMax: int(tail)}
}

// spilling reports whether writes now go to the ring.
func (h *headTail) spilling() bool { return h.past > 0 || h.failed || h.kept >= h.head }

// Write takes all of p and never fails (the output of a run must never stop on its log).
func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if !h.spilling() {
		keep := p[:min(int64(len(p)), h.head-h.kept)]
		w, err := h.w.Write(keep)
		h.kept += int64(w)
		h.failed = err != nil
		p = p[w:]
	}
	if len(p) == 0 {
		return n, nil
	}
	h.past += int64(len(p))
	if h.ring == nil {
		h.ring = make([]byte, h.tailMax)
	}
	size := len(h.ring)
	if size == 0 {
		return n, nil
	}
	if len(p) >= size {
		copy(h.ring, p[len(p)-size:])
		h.pos, h.wrapped = 0, true
		return n, nil
	}
	c := copy(h.ring[h.pos:], p)
	if c < len(p) {
		copy(h.ring, p[c:])
		h.wrapped = true
	}
	h.pos = (h.pos + len(p)) % size
	if h.pos == 0 && c == len(p) {
		h.wrapped = true
	}
	return n, nil
}

// tail is what the ring holds, oldest first.
func (h *headTail) tail() []byte {
	if !h.wrapped {
		return h.ring[:h.pos]
	}
	return append(append([]byte{}, h.ring[h.pos:]...), h.ring[:h.pos]...)
}

// finish passes on the tail, after a marker when bytes were dropped before it (the
// tail then begins at a line), and returns the bytes kept and dropped.
func (h *headTail) finish() (kept, dropped int64) {
	tail := h.tail()
	dropped = h.past - int64(len(tail))
	if dropped > 0 {
		if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
			tail, dropped = tail[i+1:], dropped+int64(i+1)
		}
		_, _ = fmt.Fprintf(h.w, "\n[airlock] … %d bytes dropped …\n", dropped)
	}
	if len(tail) > 0 {
		w, _ := h.w.Write(tail)
		h.kept += int64(w)
		dropped += int64(len(tail) - w)
	}
	h.past, h.pos, h.wrapped = 0, 0, false
	return h.kept, dropped
}

// newLogPath names a new run's log file: the run id (for the person looking at the
// directory) and a random token. Run ids start again at 1 in a new database (the old
// one moved aside, or a zero-length file), so the id alone would name an older run's
// file; the run's record keeps the whole name.
func newLogPath(dir string, id uint) (string, error) {
	var token [6]byte
	if _, err := rand.Read(token[:]); err != nil {
		return "", fmt.Errorf("name run #%d's log: %w", id, err)
	}
	return filepath.Join(dir, fmt.Sprintf("%d-%s.log", id, hex.EncodeToString(token[:]))), nil
}

// openRunLog creates the log file at path; a file already there is never written to
// (nor read as this run's).
func openRunLog(path string, limit int64, secrets []string, onChunk func([]byte)) (*runLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open run log: %w", err)
	}
	if limit <= 0 {
		limit = math.MaxInt64 // no cap
	}
	l := &runLog{f: f, secrets: secrets, onChunk: onChunk}
	// Past the head neither the file nor the live stream gets more until the run ends.
	l.kept = newHeadTail(sink{l}, limit)
	l.red = redact.NewWriter(emitter{l}, secrets)
	l.lastWrite.Store(time.Now().UnixNano())
	return l, nil
}

// Write implements io.Writer for stdout and stderr.
func (l *runLog) Write(p []byte) (int, error) {
	l.lastWrite.Store(time.Now().UnixNano())
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.red.Write(p) // emitter never fails
	return len(p), nil
}

// emitter receives the redacted lines (with l.mu held).
type emitter struct{ l *runLog }

func (e emitter) Write(b []byte) (int, error) {
	_, _ = e.l.kept.Write(b) // a failing log file must not stop the redaction of the rest
	return len(b), nil
}

// sink receives what is kept of the redacted lines (with l.mu held).
type sink struct{ l *runLog }

func (s sink) Write(b []byte) (int, error) {
	if s.l.onChunk != nil {
		s.l.onChunk(b)
	}
	return s.l.f.Write(b)
}

// idle returns how long it has been since the last output.
func (l *runLog) idle() time.Duration {
	return time.Since(time.Unix(0, l.lastWrite.Load()))
}

// note appends an airlock line: to the file at once while the head has room (it does
// not count against the cap), else in its place among the tail.
func (l *runLog) note(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// The output so far comes first, even a line without its newline yet.
	_ = l.red.Flush()
	msg := redact.StringWithSecrets(fmt.Sprintf("\n[airlock] "+format+"\n", args...), l.secrets)
	if l.kept.spilling() {
		// In its place after the output before it: with the tail.
		_, _ = l.kept.Write([]byte(msg))
		return
	}
	_, _ = l.f.WriteString(msg)
	if l.onChunk != nil {
		l.onChunk([]byte(msg))
	}
}

// close flushes, writes the tail (after the marker of what was dropped, if anything
// was) and returns the bytes kept.
func (l *runLog) close() (written int64, truncated bool, err error) {
	l.mu.Lock()
	_ = l.red.Flush()
	written, dropped := l.kept.finish()
	l.mu.Unlock()
	return written, dropped > 0, l.f.Close()
}
