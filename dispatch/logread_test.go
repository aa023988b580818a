package dispatch

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// One reader serves every way a log is read: forward from an offset (the CLI follows a
// log), and its tail then earlier pieces (the window). Each case reads a real file.
func TestReadLogPieceForward(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// "é" is two bytes: a piece of 5 bytes from 0 would end inside the third one.
	accents := write("accents.log", "ééééé\n")
	for _, c := range []struct {
		name             string
		path             string
		q                LogQuery
		start, end, size int64
		data             string
	}{
		{"a log not written yet", filepath.Join(dir, "none.log"), LogQuery{}, 0, 0, 0, ""},
		{"a log not written yet, asked past its end", filepath.Join(dir, "none.log"), LogQuery{Offset: 7}, 0, 0, 0, ""},
		{"an empty log", write("empty.log", ""), LogQuery{}, 0, 0, 0, ""},
		{"a short log", write("short.log", "one\ntwo\n"), LogQuery{}, 0, 8, 8, "one\ntwo\n"},
		{"from an offset", write("offset.log", "one\ntwo\n"), LogQuery{Offset: 4}, 4, 8, 8, "two\n"},
		{"an offset past the end", write("past.log", "one\n"), LogQuery{Offset: 99}, 4, 4, 4, ""},
		{"a negative offset", write("negative.log", "one\n"), LogQuery{Offset: -1}, 4, 4, 4, ""},
		{"larger than a piece", write("large.log", "0123456789"), LogQuery{Max: 4}, 0, 4, 10, "0123"},
		{"a piece ends before a cut character", accents, LogQuery{Max: 5}, 0, 4, 11, "éé"},
		{"the next piece starts at that character", accents, LogQuery{Offset: 4, Max: 5}, 4, 8, 11, "éé"},
		{"the last piece", accents, LogQuery{Offset: 8, Max: 5}, 8, 11, 11, "é\n"},
	} {
		got, err := ReadLogPiece(LogPiece{RunID: 3}, c.path, c.q)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Start != c.start || got.End != c.end || got.Size != c.size || got.Data != c.data || got.RunID != 3 {
			t.Errorf("%s: [%d, %d) of %d %q, want [%d, %d) of %d %q", c.name, got.Start, got.End, got.Size, got.Data, c.start, c.end, c.size, c.data)
		}
	}
}

// Reading forward piece by piece, from each piece's End, gives back the file exactly,
// also when pieces would cut characters.
func TestReadLogPieceForwardJoinsUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "línea %07d — ünïcödé\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	var offset int64
	for pieces := 0; ; pieces++ {
		p, err := ReadLogPiece(LogPiece{}, path, LogQuery{Offset: offset, Max: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if p.Start != offset || p.End-p.Start > 1000 || int64(len(p.Data)) != p.End-p.Start {
			t.Fatalf("piece %d: [%d, %d) with %d bytes, asked from %d", pieces, p.Start, p.End, len(p.Data), offset)
		}
		got.WriteString(p.Data)
		offset = p.End
		if p.End >= p.Size {
			break
		}
	}
	if got.String() != b.String() {
		t.Error("the pieces do not join up to the file")
	}
	whole, err := ReadLogPiece(LogPiece{}, path, LogQuery{Max: 10 << 20})
	if err != nil || int64(len(whole.Data)) > MaxLogPiece {
		t.Errorf("one read returned %d bytes (%v): at most %d", len(whole.Data), err, MaxLogPiece)
	}
}

// A log is read from its end in bounded pieces starting at a line; earlier pieces join
// up exactly.
func TestReadLogPieceIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "line %07d of a long log\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	size := int64(b.Len())
	tail, err := ReadLogPiece(LogPiece{RunID: 1}, path, LogQuery{Tail: true, End: -1, Max: 10 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(tail.Data)) > MaxLogPiece || tail.End != size || tail.Size != size {
		t.Fatalf("tail: %d bytes, end %d, size %d", len(tail.Data), tail.End, tail.Size)
	}
	if !strings.HasPrefix(tail.Data, "line ") {
		t.Errorf("tail starts mid-line: %q", tail.Data[:20])
	}
	earlier, _ := ReadLogPiece(LogPiece{RunID: 1}, path, LogQuery{Tail: true, End: tail.Start, Max: 4096})
	if earlier.End != tail.Start || !strings.HasPrefix(earlier.Data, "line ") || int64(len(earlier.Data)) != earlier.End-earlier.Start {
		t.Errorf("earlier piece = [%d, %d) %q…", earlier.Start, earlier.End, earlier.Data[:20])
	}
	if b.String()[earlier.Start:tail.End] != earlier.Data+tail.Data {
		t.Error("the pieces do not join up to the file")
	}
	missing, err := ReadLogPiece(LogPiece{RunID: 2}, filepath.Join(t.TempDir(), "none"), LogQuery{Tail: true, End: -1})
	if err != nil || missing.Size != 0 || missing.Data != "" {
		t.Errorf("a log not written yet = %+v, %v", missing, err)
	}
}

// A 2 GB log is never read whole: the tail costs what a piece costs.
func TestReadLogPieceOfTwoGigabytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const size = 2 << 30
	if err := f.Truncate(size - 12); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\nlast line\n"), size-12); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	piece, err := ReadLogPiece(LogPiece{RunID: 9}, path, LogQuery{Tail: true, End: -1})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if piece.Size != size-1 || piece.End != piece.Size || !strings.HasSuffix(piece.Data, "last line\n") || len(piece.Data) > DefaultLogTail {
		t.Fatalf("piece [%d, %d) of %d, %d bytes", piece.Start, piece.End, piece.Size, len(piece.Data))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("reading the tail allocated %d bytes", alloc)
	}
}
