package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/airlock-app/airlock/api"
)

// LogPiece is a piece of a run's log (the wire's type).
type LogPiece = api.LogPiece

// LogQuery selects a piece of a run's log (the wire's type).
type LogQuery = api.LogQuery

// Log pieces: the default of a forward read and of a tail, and the most one read
// returns, so a 2 GB log is never read whole.
const (
	DefaultLogRead = 1 << 20
	DefaultLogTail = 256 << 10
	MaxLogPiece    = 1 << 20
)

// Log reads a piece of run id's log as q says. A run without a log (it never started,
// or the log was pruned) is a piece that says why in Missing; a log not written yet is
// an empty piece.
func (d *Dispatcher) Log(ctx context.Context, id uint, q LogQuery) (LogPiece, error) {
	r, err := d.Run(ctx, id)
	if err != nil {
		return LogPiece{}, err
	}
	piece := LogPiece{RunID: id, Truncated: r.LogTruncated}
	switch {
	case r.LogPruned:
		piece.Pruned = true
		piece.Missing = fmt.Sprintf("run #%d: its log was pruned (logs are kept 30 days / 1 GiB)", id)
		return piece, nil
	case r.LogPath == "":
		piece.Missing = "this run has no log: it never started"
		return piece, nil
	}
	return ReadLogPiece(piece, r.LogPath, q)
}

// ReadLogPiece reads the piece of the log file at path that q selects into piece (whose
// RunID and Truncated the caller set): forward from q.Offset (an offset past the end
// reads nothing at the end), or with q.Tail the piece ending at q.End (< 0 or past the
// end: the end of the file), begun at a line when it does not begin the file. A piece
// never ends inside a character, and its Data is valid UTF-8. A file that does not exist
// is an empty piece: the run has printed nothing yet.
func ReadLogPiece(piece LogPiece, path string, q LogQuery) (LogPiece, error) {
	maxBytes := q.Max
	if maxBytes <= 0 {
		maxBytes = DefaultLogRead
		if q.Tail {
			maxBytes = DefaultLogTail
		}
	}
	maxBytes = min(maxBytes, MaxLogPiece)
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return piece, nil
	}
	if err != nil {
		return piece, fmt.Errorf("run #%d log: %w", piece.RunID, err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return piece, fmt.Errorf("run #%d log: %w", piece.RunID, err)
	}
	piece.Size = fi.Size()
	var start, end int64
	if q.Tail {
		end = q.End
		if end < 0 || end > piece.Size {
			end = piece.Size
		}
		start = max(0, end-int64(maxBytes))
	} else {
		start = q.Offset
		if start < 0 || start > piece.Size {
			start = piece.Size
		}
		end = min(piece.Size, start+int64(maxBytes))
	}
	buf := make([]byte, end-start)
	n, err := file.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return piece, fmt.Errorf("run #%d log: %w", piece.RunID, err)
	}
	buf = buf[:n] // a short read at EOF: the file is shorter than it was a moment ago
	if q.Tail && start > 0 {
		// Begin at a line: a piece cut mid-line (or mid-character) would show garbage.
		if i := strings.IndexByte(string(buf), '\n'); i >= 0 && i < len(buf)-1 {
			buf = buf[i+1:]
			start += int64(i + 1)
		}
	}
	if start+int64(len(buf)) < piece.Size {
		// More follows: end before a character the next piece completes.
		buf = buf[:completeRunes(buf)]
	}
	piece.Start, piece.End = start, start+int64(len(buf))
	piece.Data = strings.ToValidUTF8(string(buf), "\uFFFD")
	return piece, nil
}

// completeRunes is how much of b ends on a character boundary: b without a last
// character that was cut (at most utf8.UTFMax-1 bytes), or all of b.
func completeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			return len(b)
		}
	}
	return len(b)
}
