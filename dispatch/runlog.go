package dispatch

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-app/airlock/internal/capped"
	"github.com/airlock-app/airlock/redact"
)

// runLog writes a run's combined output to its log file (capped, with a truncation
// marker), redacted line by line (credentials of known shapes, and the exact values of
// the secrets injected into the run), and hands every line to onChunk for live
// streaming.
type runLog struct {
	mu        sync.Mutex
	f         *os.File
	red       *redact.Writer
	kept      *capped.Writer // the redacted output up to the cap, to onChunk and the file
	secrets   []string
	onChunk   func([]byte)
	lastWrite atomic.Int64 // unix nanos of the last output
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
	// Past the cap neither the file nor the live stream gets more.
	l.kept = capped.NewWriter(sink{l}, limit)
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

// Note appends an airlock line (not subject to the cap).
func (l *runLog) note(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// The output so far comes first, even a line without its newline yet.
	_ = l.red.Flush()
	msg := redact.StringWithSecrets(fmt.Sprintf("\n[airlock] "+format+"\n", args...), l.secrets)
	_, _ = l.f.WriteString(msg)
	if l.onChunk != nil {
		l.onChunk([]byte(msg))
	}
}

// close flushes, writes the truncation marker if needed and returns the bytes kept.
func (l *runLog) close() (written int64, truncated bool, err error) {
	l.mu.Lock()
	_ = l.red.Flush()
	written, truncated = l.kept.Kept(), l.kept.Truncated()
	if truncated {
		_, _ = fmt.Fprintf(l.f, "\n[airlock] log truncated: kept the first %d bytes, dropped %d more\n", written, l.kept.Dropped())
	}
	l.mu.Unlock()
	return written, truncated, l.f.Close()
}
