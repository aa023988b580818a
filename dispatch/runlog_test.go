package dispatch

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// failAfter is a writer that takes n bytes, then fails (a full disk).
type failAfter struct {
	buf bytes.Buffer
	n   int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if room := f.n - f.buf.Len(); len(p) > room {
		f.buf.Write(p[:max(room, 0)])
		return max(room, 0), errors.New("no space left")
	}
	return f.buf.Write(p)
}

// A capped log keeps its head and its tail whatever the writes look like: under the
// cap nothing is dropped; over it the middle is, with a marker saying how much, and the
// tail begins at a line; a writer that fails gets the rest at close.
func TestHeadTail(t *testing.T) {
	lines := func(n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, fmt.Sprintf("line %04d\n", i)) // 10 bytes each
		}
		return out
	}
	tests := []struct {
		name        string
		limit       int64
		writes      []string
		fail        int // the writer fails after this many bytes (0: never)
		wantDropped bool
		wantHas     []string
		wantNot     []string
	}{
		{"under the cap", 1000, lines(50), 0, false, []string{"line 0000", "line 0049"}, []string{"dropped"}},
		{"the tail takes the overflow", 1000, lines(100), 0, false, []string{"line 0000", "line 0099"}, []string{"dropped"}},
		{"small writes wrap the tail", 200, lines(1000), 0, true, []string{"line 0000", "line 0999", "bytes dropped …"}, []string{"line 0500"}},
		{"one write larger than the tail", 200, []string{strings.Join(lines(1000), "")}, 0, true, []string{"line 0000", "line 0999", "bytes dropped …"}, []string{"line 0500"}},
		{"the writer fails, then takes the rest", 1000, lines(50), 100, false, []string{"line 0000"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &failAfter{n: 1 << 30}
			if tt.fail > 0 {
				w.n = tt.fail
			}
			h := newHeadTail(w, tt.limit)
			var total int64
			for _, s := range tt.writes {
				if n, err := h.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("write: %d, %v", n, err)
				}
				total += int64(len(s))
			}
			if tt.fail > 0 {
				w.n = 1 << 30 // space freed before the end
			}
			kept, dropped := h.finish()
			got := w.buf.String()
			if (dropped > 0) != tt.wantDropped {
				t.Fatalf("dropped %d, want dropped=%v:\n%s", dropped, tt.wantDropped, got)
			}
			if kept+dropped != total {
				t.Fatalf("kept %d + dropped %d != written %d", kept, dropped, total)
			}
			if kept > tt.limit && tt.fail == 0 {
				t.Fatalf("kept %d past the cap %d", kept, tt.limit)
			}
			for _, s := range tt.wantHas {
				if !strings.Contains(got, s) {
					t.Errorf("no %q in:\n%s", s, got)
				}
			}
			for _, s := range tt.wantNot {
				if strings.Contains(got, s) {
					t.Errorf("%q in:\n%s", s, got)
				}
			}
			if i := strings.Index(got, "dropped …\n"); i >= 0 && !strings.HasPrefix(got[i+len("dropped …\n"):], "line ") {
				t.Errorf("the tail does not begin at a line:\n%s", got[i:])
			}
			if want := fmt.Sprintf("… %d bytes dropped …", dropped); dropped > 0 && !strings.Contains(got, want) {
				t.Errorf("the marker does not say %q:\n%s", want, got)
			}
		})
	}
}
