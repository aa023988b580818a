package dispatch

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// redactedMark replaces every secret value in run output.
const redactedMark = "[redacted]"

// redactor removes secret values from a byte stream whose chunks may split a secret: it
// holds back a tail that could be the beginning of a secret until more arrives or it is
// flushed.
type redactor struct {
	secrets [][]byte // longest first
	hold    int
	pending []byte
}

func newRedactor(values []string) *redactor {
	r := &redactor{}
	for _, v := range values {
		if v == "" {
			continue
		}
		r.secrets = append(r.secrets, []byte(v))
		if len(v)-1 > r.hold {
			r.hold = len(v) - 1
		}
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

// write returns the bytes that are safe to emit.
func (r *redactor) write(p []byte) []byte {
	if len(r.secrets) == 0 {
		return p
	}
	r.pending = append(r.pending, p...)
	for _, s := range r.secrets {
		r.pending = bytes.ReplaceAll(r.pending, s, []byte(redactedMark))
	}
	// Hold back only a tail that could be the start of a secret: any secret starting
	// earlier is complete inside pending, so it was replaced above. Output that cannot be
	// a secret's beginning streams live at once.
	cut := len(r.pending)
	for i := max(0, len(r.pending)-r.hold); i < len(r.pending); i++ {
		if r.startsSecret(r.pending[i:]) {
			cut = i
			break
		}
	}
	if cut == 0 {
		return nil
	}
	out := append([]byte(nil), r.pending[:cut]...)
	r.pending = append(r.pending[:0], r.pending[cut:]...)
	return out
}

// startsSecret reports whether tail is a proper prefix of some secret.
func (r *redactor) startsSecret(tail []byte) bool {
	for _, s := range r.secrets {
		if len(tail) < len(s) && bytes.HasPrefix(s, tail) {
			return true
		}
	}
	return false
}

func (r *redactor) flush() []byte {
	out := r.pending
	r.pending = nil
	return out
}

// RedactString removes every secret value from s.
func RedactString(s string, values []string) string {
	r := newRedactor(values)
	return string(append(r.write([]byte(s)), r.flush()...))
}

// runLog writes a run's combined output to its log file (capped, with a truncation
// marker), with secrets redacted, and hands every chunk to onChunk for live streaming.
type runLog struct {
	mu        sync.Mutex
	f         *os.File
	red       *redactor
	limit     int64
	written   int64
	dropped   int64
	onChunk   func([]byte)
	lastWrite atomic.Int64 // unix nanos of the last output
}

func openRunLog(path string, limit int64, secrets []string, onChunk func([]byte)) (*runLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open run log: %w", err)
	}
	l := &runLog{f: f, red: newRedactor(secrets), limit: limit, onChunk: onChunk}
	l.lastWrite.Store(time.Now().UnixNano())
	return l, nil
}

// Write implements io.Writer for stdout and stderr.
func (l *runLog) Write(p []byte) (int, error) {
	l.lastWrite.Store(time.Now().UnixNano())
	l.mu.Lock()
	defer l.mu.Unlock()
	l.emit(l.red.write(p))
	return len(p), nil
}

func (l *runLog) emit(b []byte) {
	if len(b) == 0 {
		return
	}
	if l.dropped > 0 {
		// Past the cap: neither the file nor the live stream gets more.
		l.dropped += int64(len(b))
		return
	}
	if room := l.limit - l.written; l.limit > 0 && int64(len(b)) > room {
		l.dropped += int64(len(b)) - max(room, 0)
		b = b[:max(room, 0)]
	}
	if len(b) == 0 {
		return
	}
	if l.onChunk != nil {
		l.onChunk(b)
	}
	n, _ := l.f.Write(b)
	l.written += int64(n)
}

// idle returns how long it has been since the last output.
func (l *runLog) idle() time.Duration {
	return time.Since(time.Unix(0, l.lastWrite.Load()))
}

// Note appends an airlock line (not subject to the cap).
func (l *runLog) note(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := fmt.Sprintf("\n[airlock] "+format+"\n", args...)
	_, _ = l.f.WriteString(msg)
	if l.onChunk != nil {
		l.onChunk([]byte(msg))
	}
}

// close flushes, writes the truncation marker if needed and returns the bytes kept.
func (l *runLog) close() (written int64, truncated bool, err error) {
	l.mu.Lock()
	l.emit(l.red.flush())
	truncated = l.dropped > 0
	if truncated {
		_, _ = fmt.Fprintf(l.f, "\n[airlock] log truncated: kept the first %d bytes, dropped %d more\n", l.written, l.dropped)
	}
	written = l.written
	l.mu.Unlock()
	return written, truncated, l.f.Close()
}
