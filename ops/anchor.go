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
	"strings"
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
	return parseAnchor(key, b, "the journal anchor "+a.path)
}

// parseAnchor reads heads in the anchor format (the file, or the secret store's
// counter), checking they authenticate under key; what names the copy for errors.
func parseAnchor(key, b []byte, what string) (map[string]anchorHead, error) {
	var f anchorFile
	if err := json.Unmarshal(b, &f); err != nil || f.Version != anchorVersion {
		return nil, fmt.Errorf("%s is not an anchor (%v)", what, err)
	}
	if f.Projects == nil {
		f.Projects = map[string]anchorHead{}
	}
	if !hmac.Equal([]byte(anchorMAC(key, f.Projects)), []byte(f.MAC)) {
		return nil, fmt.Errorf("%s does not authenticate under the journal key: it was edited without the key", what)
	}
	for p, h := range f.Projects {
		if !hmac.Equal([]byte(headMAC(key, p, h.Seq, h.Hash)), []byte(h.MAC)) {
			return nil, fmt.Errorf("%s: the head of %s does not authenticate", what, p)
		}
	}
	return f.Projects, nil
}

// mergeHeads adds to cur the heads newer than it holds; it reports a change.
func mergeHeads(key []byte, cur map[string]anchorHead, heads map[string]JournalHead) bool {
	changed := false
	for p, h := range heads {
		if old, ok := cur[p]; ok && old.Seq >= h.Seq {
			continue
		}
		cur[p] = anchorHead{Seq: h.Seq, Hash: h.Hash, MAC: headMAC(key, p, h.Seq, h.Hash)}
		changed = true
	}
	return changed
}

func encodeAnchor(key []byte, heads map[string]anchorHead) ([]byte, error) {
	return json.MarshalIndent(anchorFile{Version: anchorVersion, Projects: heads, MAC: anchorMAC(key, heads)}, "", " ")
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
	if !mergeHeads(key, cur, heads) {
		return nil
	}
	b, err := encodeAnchor(key, cur)
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
	if err := s.advanceCounter(ctx, key, ok); err != nil {
		s.log.Warn("ops: the journal counter was not brought up to date", "err", err)
	}
	return nil
}

// ProblemRolledBack is a [JournalProblem] kind: the secret store's counter holds a newer
// head than the database and the anchor file, which were put back to an older state.
const ProblemRolledBack = "rolled back"

// counterLock serialises this process's read-merge-write of the counter; the anchor's
// file lock serialises processes.
var counterLock = make(chan struct{}, 1)

// advanceCounter records heads newer than the secret store's counter holds (when the key
// source keeps one).
func (s *Service) advanceCounter(ctx context.Context, key []byte, heads map[string]JournalHead) error {
	hc, ok := s.keys.(HeadCounter)
	if !ok {
		return nil
	}
	counterLock <- struct{}{}
	defer func() { <-counterLock }()
	unlock, err := lockFile(s.anchor.path + ".lock")
	if err != nil {
		return fmt.Errorf("journal counter: lock: %w", err)
	}
	defer unlock()
	cur, err := s.readCounter(ctx, hc, key)
	if err != nil {
		// Never overwrite a counter that does not authenticate: it is evidence.
		return err
	}
	// The counter moves on only along the chain it recorded: after a rollback the entry
	// at its seq is gone or another, and the counter keeps the evidence.
	var rolled []string
	for p, h := range heads {
		c, ok := cur[p]
		if !ok || h.Seq <= c.Seq {
			continue
		}
		var e JournalEntry
		err := s.db.WithContext(ctx).Where("project = ? AND seq = ? AND hash = ?", p, c.Seq, c.Hash).Limit(1).Find(&e).Error
		if err != nil {
			return fmt.Errorf("journal counter: %w", err)
		}
		if e.ID == 0 {
			delete(heads, p)
			rolled = append(rolled, p)
		}
	}
	if mergeHeads(key, cur, heads) {
		b, err := encodeAnchor(key, cur)
		if err != nil {
			return err
		}
		if err := hc.SetJournalCounter(ctx, string(b)); err != nil {
			return err
		}
	}
	if len(rolled) > 0 {
		return fmt.Errorf("the journal of %s was rolled back (its entry at the seq the secret store's counter records is gone): "+
			"the counter keeps that head as evidence; see airlock ops journal --verify", strings.Join(rolled, ", "))
	}
	return nil
}

// readCounter returns the counter's heads (none when it was never written), retiring
// first a counter left by a journal set aside (Service.retire). Call it holding
// counterLock.
func (s *Service) readCounter(ctx context.Context, hc HeadCounter, key []byte) (map[string]anchorHead, error) {
	v, err := hc.JournalCounter(ctx)
	if err != nil {
		return nil, err
	}
	if s.retire {
		if v != "" {
			// The journal set aside with its database kept counting here: its heads
			// are kept under the retired name, and this journal counts afresh.
			if err := hc.RetireJournalCounter(ctx, v); err != nil {
				return nil, err
			}
			s.log.Warn("ops: a new database and journal anchor: the earlier journal's rollback counter is retired, kept in the secret store",
				"name", RetiredCounterName)
			v = ""
		}
		s.retire = false
	}
	if v == "" {
		return map[string]anchorHead{}, nil
	}
	return parseAnchor(key, []byte(v), "the journal counter in the secret store")
}

// rolledBack compares the project's newest head the counter holds with what the
// database and the anchor file show (newest is their newest authentic seq).
func (s *Service) rolledBack(ctx context.Context, key []byte, project string, newest int64, hashAt func(int64) (string, bool)) []JournalProblem {
	hc, ok := s.keys.(HeadCounter)
	if !ok {
		return nil
	}
	counterLock <- struct{}{}
	heads, err := s.readCounter(ctx, hc, key)
	<-counterLock
	if err != nil {
		return []JournalProblem{{Kind: ProblemAnchor, Detail: err.Error()}}
	}
	c, ok := heads[project]
	if !ok {
		return nil
	}
	if c.Seq > newest {
		return []JournalProblem{{Kind: ProblemRolledBack, Seq: c.Seq, Detail: fmt.Sprintf("the journal was rolled back: the counter in the secret store "+
			"records seq %d (hash %s…), the database and the anchor file only seq %d: entries %d to %d were deleted and an older head and anchor "+
			"put back", c.Seq, shortHash(c.Hash), newest, newest+1, c.Seq)}}
	}
	if h, ok := hashAt(c.Seq); ok && h != c.Hash {
		return []JournalProblem{{Kind: ProblemRolledBack, Seq: c.Seq, Detail: fmt.Sprintf("the journal was rolled back and rewritten: the entry at seq %d "+
			"has hash %s…, the counter in the secret store recorded %s…", c.Seq, shortHash(h), shortHash(c.Hash))}}
	}
	return nil
}

func shortHash(h string) string { return h[:min(12, len(h))] }
