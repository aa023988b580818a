package sqlitedb

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// CheckHeader: a file that is not SQLite's or is shorter than its header says is damaged,
// unless a write-ahead log with frames holds the rest (a checkpoint that ran out of
// space); a missing or empty file is fine.
func TestCheckHeader(t *testing.T) {
	header := func(pages uint32) []byte {
		h := make([]byte, 4096)
		copy(h, "SQLite format 3\x00")
		binary.BigEndian.PutUint16(h[16:18], 4096)
		binary.BigEndian.PutUint32(h[24:28], 7) // change counter
		binary.BigEndian.PutUint32(h[28:32], pages)
		binary.BigEndian.PutUint32(h[92:96], 7) // valid for that change
		return h
	}
	for _, tt := range []struct {
		name    string
		file    []byte
		wal     []byte
		damaged bool
	}{
		{"missing", nil, nil, false},
		{"empty", []byte{}, nil, false},
		{"whole", header(1), nil, false},
		{"not SQLite", []byte("hello, this is not a database at all, but it is long enough for a header, surely it is, yes........"), nil, true},
		{"truncated", header(56), nil, true},
		{"truncated, the rest in the log", header(56), []byte("frames"), false},
		{"truncated, an empty log", header(56), []byte{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "airlock.db")
			if tt.file != nil {
				os.WriteFile(path, tt.file, 0o600)
			}
			if tt.wal != nil {
				os.WriteFile(path+"-wal", tt.wal, 0o600)
			}
			err := CheckHeader(path)
			if errors.Is(err, ErrDamaged) != tt.damaged {
				t.Fatalf("CheckHeader: %v, want damaged %v", err, tt.damaged)
			}
		})
	}
}
