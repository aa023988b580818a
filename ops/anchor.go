package ops

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// ProblemTruncated is a [JournalProblem] kind: the journal has fewer entries than its
// anchor outside the database recorded (entries and head deleted together).
const ProblemTruncated = "truncated"

// ProblemAnchor is a [JournalProblem] kind: the anchor file is missing or was edited.
const ProblemAnchor = "anchor"

// journalAnchor keeps every project's journal head (seq and last hash, HMAC'd) in one file
// outside the database, itself HMAC'd as a whole: deleting a project's entries and head
// from the database no longer verifies as an empty journal, and a project cannot be
// dropped from the file without the key.
type journalAnchor struct{ path string }

type anchorFile struct {
	Version  string                `json:"version"`
	Projects map[string]anchorHead `json:"projects"`
	MAC      string                `json:"mac"`
}

type anchorHead struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
	MAC  string `json:"mac"` // headMAC of project, seq, hash
}

const anchorVersion = "airlock-ops-journal-anchor/v1"

// errAnchorMissing says the anchor file does not exist.
var errAnchorMissing = errors.New("the journal anchor file is missing")

func anchorMAC(key []byte, heads map[string]anchorHead) string {
	names := make([]string, 0, len(heads))
	for p := range heads {
		names = append(names, p)
	}
	slices.Sort(names)
	var enc canonicalEncoder
	enc.field("version", anchorVersion)
	for _, p := range names {
		h := heads[p]
		enc.field("project", p)
		enc.field("seq", strconv.FormatInt(h.Seq, 10))
		enc.field("hash", h.Hash)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("anchor\n"))
	m.Write(enc.buf)
	return hex.EncodeToString(m.Sum(nil))
}

// read returns the anchored heads; errAnchorMissing when there is no file, another error
// when it cannot be read or does not authenticate.
func (a journalAnchor) read(key []byte) (map[string]anchorHead, error) {
	b, err := os.ReadFile(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errAnchorMissing
	}
	if err != nil {
		return nil, fmt.Errorf("read the journal anchor %s: %w", a.path, err)
	}
	var f anchorFile
	if err := json.Unmarshal(b, &f); err != nil || f.Version != anchorVersion {
		return nil, fmt.Errorf("the journal anchor %s is not an anchor file (%v)", a.path, err)
	}
	if f.Projects == nil {
		f.Projects = map[string]anchorHead{}
	}
	if !hmac.Equal([]byte(anchorMAC(key, f.Projects)), []byte(f.MAC)) {
		return nil, fmt.Errorf("the journal anchor %s does not authenticate under the journal key: it was edited without the key", a.path)
	}
	for p, h := range f.Projects {
		if !hmac.Equal([]byte(headMAC(key, p, h.Seq, h.Hash)), []byte(h.MAC)) {
			return nil, fmt.Errorf("the journal anchor %s: the head of %s does not authenticate", a.path, p)
		}
	}
	return f.Projects, nil
}

// advance records heads newer than the anchored ones, under a file lock so that two
// processes appending at once keep the newest of each.
func (a journalAnchor) advance(key []byte, heads map[string]JournalHead) error {
	if err := os.MkdirAll(filepath.Dir(a.path), 0o700); err != nil {
		return fmt.Errorf("journal anchor: %w", err)
	}
	unlock, err := lockFile(a.path + ".lock")
	if err != nil {
		return fmt.Errorf("journal anchor: lock: %w", err)
	}
	defer unlock()
	cur, err := a.read(key)
	if errors.Is(err, errAnchorMissing) {
		cur, err = map[string]anchorHead{}, nil
	}
	if err != nil {
		// Never overwrite an anchor that does not authenticate: it is evidence.
		return err
	}
	changed := false
	for p, h := range heads {
		if old, ok := cur[p]; ok && old.Seq >= h.Seq {
			continue
		}
		cur[p] = anchorHead{Seq: h.Seq, Hash: h.Hash, MAC: headMAC(key, p, h.Seq, h.Hash)}
		changed = true
	}
	if !changed {
		return nil
	}
	b, err := json.MarshalIndent(anchorFile{Version: anchorVersion, Projects: cur, MAC: anchorMAC(key, cur)}, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(a.path), ".anchor-*")
	if err != nil {
		return fmt.Errorf("journal anchor: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("journal anchor: write: %w", err)
	}
	if err := os.Rename(tmp.Name(), a.path); err != nil {
		return fmt.Errorf("journal anchor: %w", err)
	}
	return nil
}

// adoptHeads anchors the database's authentic heads that are newer than the anchor (a
// journal written before anchoring, or an anchor write that failed). A head that does not
// authenticate is not adopted; a deleted one has nothing to adopt.
func (s *Service) adoptHeads(ctx context.Context) error {
	var heads []JournalHead
	if err := s.db.WithContext(ctx).Find(&heads).Error; err != nil {
		return fmt.Errorf("read the ops journal heads: %w", err)
	}
	if len(heads) == 0 {
		return nil
	}
	key, err := s.journalKey(ctx)
	if err != nil {
		return err
	}
	ok := map[string]JournalHead{}
	for _, h := range heads {
		if h.Seq > 0 && hmac.Equal([]byte(headMAC(key, h.Project, h.Seq, h.Hash)), []byte(h.MAC)) {
			ok[h.Project] = h
		}
	}
	if len(ok) == 0 {
		return nil
	}
	if err := s.anchor.advance(key, ok); err != nil {
		s.log.Warn("ops: the journal anchor was not brought up to date", "err", err)
	}
	return nil
}
