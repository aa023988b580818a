// Package capped keeps the first bytes of a stream, up to a limit, and counts the rest:
// the output of a command, a hook or a file that Airlock stores or shows must stay
// bounded, and the writer it goes to must never make the command stop or block.
package capped

import (
	"bytes"
	"io"
	"sync"
)

// Writer passes the first max bytes written to it on to an underlying writer and drops
// the rest, counting what it dropped. What it passes on is always a prefix of the
// stream: once it has dropped a byte (past the cap, or because the underlying writer
// failed) it passes nothing more. Write reports the whole of p as taken, so a process
// writing into a pipe is never stopped by the cap. It is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	max     int64
	kept    int64
	dropped int64
	failed  bool // the underlying writer failed
}

// NewWriter returns a Writer that passes the first max bytes on to w (none when max
// is zero or less).
func NewWriter(w io.Writer, max int64) *Writer {
	return &Writer{w: w, max: max}
}

// Write passes on what still fits under the cap. It returns len(p) and, when the
// underlying writer failed, that writer's error (the Writer drops everything after).
func (c *Writer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.write(p)
}

func (c *Writer) write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil // nothing to pass on, not even an empty write
	}
	room := c.max - c.kept
	if c.dropped > 0 || c.failed || room <= 0 {
		c.dropped += int64(len(p))
		return len(p), nil
	}
	keep := p
	if int64(len(p)) > room {
		keep = p[:room]
	}
	n, err := c.w.Write(keep)
	c.kept += int64(n)
	c.dropped += int64(len(p) - n)
	c.failed = err != nil
	return len(p), err
}

// Kept is how many bytes were passed on.
func (c *Writer) Kept() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept
}

// Dropped is how many bytes were written to c but not passed on.
func (c *Writer) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// Truncated reports whether any byte was dropped.
func (c *Writer) Truncated() bool {
	return c.Dropped() > 0
}

// Buffer keeps the first max bytes written to it in memory and counts the rest. Make
// one with NewBuffer (the zero Buffer keeps nothing). It is safe for concurrent use.
type Buffer struct {
	w   Writer
	buf bytes.Buffer
}

// NewBuffer returns a Buffer that keeps the first max bytes written to it.
func NewBuffer(max int) *Buffer {
	b := &Buffer{}
	b.w = Writer{w: &b.buf, max: int64(max)}
	return b
}

// Write keeps what still fits under the cap; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	return b.w.write(p)
}

// Bytes returns a copy of the bytes kept (nil when none were).
func (b *Buffer) Bytes() []byte {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

// String returns the bytes kept as a string.
func (b *Buffer) String() string {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	return b.buf.String()
}

// Len is how many bytes were kept.
func (b *Buffer) Len() int {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	return b.buf.Len()
}

// Total is how many bytes were written, kept or not.
func (b *Buffer) Total() int64 {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	return b.w.kept + b.w.dropped
}

// Truncated reports whether any byte written was dropped.
func (b *Buffer) Truncated() bool {
	return b.w.Truncated()
}

var (
	_ io.Writer = (*Writer)(nil)
	_ io.Writer = (*Buffer)(nil)
)
