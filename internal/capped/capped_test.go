package capped

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestBuffer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		max       int
		writes    []string
		want      string
		total     int64
		truncated bool
	}{
		{"under the cap", 10, []string{"abc", "def"}, "abcdef", 6, false},
		{"exactly the cap", 6, []string{"abc", "def"}, "abcdef", 6, false},
		{"one write crosses the cap", 4, []string{"abc", "def"}, "abcd", 6, true},
		{"writes after the cap", 3, []string{"abc", "def", "g"}, "abc", 7, true},
		{"one write larger than the cap", 2, []string{"abcdef"}, "ab", 6, true},
		{"empty writes", 2, []string{"", "ab", ""}, "ab", 2, false},
		{"no cap keeps nothing", 0, []string{"abc"}, "", 3, true},
		{"negative cap keeps nothing", -1, []string{"abc"}, "", 3, true},
		{"nothing written", 5, nil, "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuffer(tc.max)
			for _, w := range tc.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v: want all of it taken", w, n, err)
				}
			}
			if got := b.String(); got != tc.want {
				t.Errorf("String = %q, want %q", got, tc.want)
			}
			if got := string(b.Bytes()); got != tc.want {
				t.Errorf("Bytes = %q, want %q", got, tc.want)
			}
			if b.Len() != len(tc.want) || b.Total() != tc.total || b.Truncated() != tc.truncated {
				t.Errorf("Len, Total, Truncated = %d, %d, %v; want %d, %d, %v", b.Len(), b.Total(), b.Truncated(), len(tc.want), tc.total, tc.truncated)
			}
			if tc.want == "" && b.Bytes() != nil {
				t.Errorf("Bytes of nothing kept = %#v, want nil", b.Bytes())
			}
		})
	}
}

func TestZeroBufferKeepsNothing(t *testing.T) {
	var b Buffer
	if n, err := b.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if b.Len() != 0 || !b.Truncated() || b.Total() != 3 {
		t.Fatalf("zero Buffer: Len %d, Truncated %v, Total %d", b.Len(), b.Truncated(), b.Total())
	}
}

func TestBytesIsACopy(t *testing.T) {
	b := NewBuffer(8)
	_, _ = b.Write([]byte("abc"))
	got := b.Bytes()
	got[0] = 'X'
	if b.String() != "abc" {
		t.Fatalf("changing what Bytes returned changed the buffer: %q", b.String())
	}
}

// failAfter accepts n bytes, then fails.
type failAfter struct {
	strings.Builder
	n int
}

var errFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if room := f.n - f.Len(); len(p) > room {
		f.WriteString(string(p[:room]))
		return room, errFull
	}
	return f.WriteString(string(p))
}

func TestWriterKeepsAPrefixWhenTheUnderlyingWriterFails(t *testing.T) {
	dst := &failAfter{n: 4}
	w := NewWriter(dst, 100)
	if _, err := w.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Write([]byte("def")); n != 3 || !errors.Is(err, errFull) {
		t.Fatalf("failing write = %d, %v; want 3 and the writer's error", n, err)
	}
	dst.n = 100 // room again: still nothing more, or the kept bytes would have a gap
	if n, err := w.Write([]byte("ghi")); n != 3 || err != nil {
		t.Fatalf("write after the failure = %d, %v", n, err)
	}
	if dst.String() != "abcd" || w.Kept() != 4 || w.Dropped() != 5 || !w.Truncated() {
		t.Fatalf("passed on %q, kept %d, dropped %d", dst.String(), w.Kept(), w.Dropped())
	}
}

// failOnce fails its first write after taking all of it.
type failOnce struct {
	strings.Builder
	failed bool
}

func (f *failOnce) Write(p []byte) (int, error) {
	n, _ := f.WriteString(string(p))
	if !f.failed {
		f.failed = true
		return n, errFull
	}
	return n, nil
}

func TestWriterStopsAfterAFailedWrite(t *testing.T) {
	dst := &failOnce{}
	w := NewWriter(dst, 100)
	if _, err := w.Write([]byte("abc")); !errors.Is(err, errFull) {
		t.Fatalf("first write: %v, want the writer's error", err)
	}
	_, _ = w.Write([]byte("def"))
	if dst.String() != "abc" || w.Kept() != 3 || w.Dropped() != 3 {
		t.Fatalf("passed on %q, kept %d, dropped %d", dst.String(), w.Kept(), w.Dropped())
	}
}

func TestWriterConcurrent(t *testing.T) {
	var dst strings.Builder
	w := NewWriter(&dst, 1000)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_, _ = fmt.Fprintf(w, "%d", i)
			}
		}()
	}
	wg.Wait()
	if dst.Len() != 400 || w.Kept() != 400 || w.Dropped() != 0 {
		t.Fatalf("kept %d (%d in the writer), dropped %d", dst.Len(), w.Kept(), w.Dropped())
	}
	_, _ = io.WriteString(w, strings.Repeat("x", 1000))
	if dst.Len() != 1000 || w.Dropped() != 400 {
		t.Fatalf("after the cap: kept %d, dropped %d", dst.Len(), w.Dropped())
	}
}

// countWrites counts the writes it gets.
type countWrites struct{ n int }

func (c *countWrites) Write(p []byte) (int, error) { c.n++; return len(p), nil }

func TestWriterPassesNoEmptyWrite(t *testing.T) {
	// A live stream fed by the Writer must not get empty chunks.
	dst := &countWrites{}
	w := NewWriter(dst, 10)
	for _, p := range []string{"", "ab", "", "cd"} {
		_, _ = w.Write([]byte(p))
	}
	if dst.n != 2 {
		t.Fatalf("the underlying writer got %d writes, want 2", dst.n)
	}
}
