package ops

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// Journal events.
const (
	EventPlanned        = "planned"
	EventSuperseded     = "superseded"
	EventDiffAttached   = "diff_attached"
	EventApproved       = "approved"
	EventApproveRefused = "approve_refused"
	EventRejected       = "rejected"
	EventExpired        = "expired"
	EventApplyRefused   = "apply_refused"
	EventApplyStarted   = "apply_started"
	EventApplyFinished  = "apply_finished"
	EventApplyFailed    = "apply_failed"
	EventApplyUnknown   = "apply_outcome_unknown"
	EventVerified       = "verified"
	EventVerifyFailed   = "verify_failed"
)

const journalVersion = "airlock-ops-journal/v1"

// entryHash is the sha256 (hex) of the entry's fixed serialization: the header
// "airlock-ops-journal/v1\n", then the fields project, seq, plan_id, event, status, actor,
// at, detail, prev_hash, each encoded as `name len:value\n` like the plan's canonical form.
func entryHash(e *JournalEntry) string {
	var enc canonicalEncoder
	enc.buf = append(enc.buf, journalVersion+"\n"...)
	enc.field("project", e.Project)
	enc.field("seq", strconv.FormatInt(e.Seq, 10))
	enc.field("plan_id", e.PlanID)
	enc.field("event", e.Event)
	enc.field("status", string(e.Status))
	enc.field("actor", e.Actor)
	enc.field("at", e.At)
	enc.field("detail", e.Detail)
	enc.field("prev_hash", e.PrevHash)
	return sha256Hex(enc.buf)
}

func entryMAC(key []byte, hash string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("entry\n" + hash))
	return hex.EncodeToString(m.Sum(nil))
}

func headMAC(key []byte, project string, seq int64, hash string) string {
	var enc canonicalEncoder
	enc.field("project", project)
	enc.field("seq", strconv.FormatInt(seq, 10))
	enc.field("hash", hash)
	m := hmac.New(sha256.New, key)
	m.Write([]byte("head\n"))
	m.Write(enc.buf)
	return hex.EncodeToString(m.Sum(nil))
}

// journalRecord is what a step of the flow writes to the journal.
type journalRecord struct {
	Project string
	PlanID  string
	Event   string
	Status  Status
	Actor   string
	Detail  any
}

// appendJournal writes one entry, chained to the project's head, in one transaction that
// takes SQLite's write lock with its first statement.
func (s *Service) appendJournal(ctx context.Context, rec journalRecord) (*JournalEntry, error) {
	key, err := s.journalKey(ctx)
	if err != nil {
		return nil, err
	}
	detail := ""
	if rec.Detail != nil {
		b, err := json.Marshal(rec.Detail)
		if err != nil {
			return nil, fmt.Errorf("journal %s: encode detail: %w", rec.Event, err)
		}
		detail = Redact(string(b))
	}
	e := &JournalEntry{Project: rec.Project, PlanID: rec.PlanID, Event: rec.Event, Status: rec.Status,
		Actor: Redact(rec.Actor), Detail: detail}

	s.journalMu.Lock()
	defer s.journalMu.Unlock()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`INSERT INTO ops_journal_heads (project, seq, hash, mac) VALUES (?, 0, '', '') ON CONFLICT(project) DO NOTHING`,
			rec.Project).Error; err != nil {
			return err
		}
		var head JournalHead
		if err := tx.First(&head, "project = ?", rec.Project).Error; err != nil {
			return err
		}
		prevSeq, prevHash := head.Seq, head.Hash
		if head.Seq == 0 {
			// A new journal, or one whose head row was deleted: continue after the last row
			// (VerifyJournal reports the missing head).
			var last JournalEntry
			if err := tx.Where("project = ?", rec.Project).Order("seq DESC").Limit(1).Find(&last).Error; err != nil {
				return err
			}
			prevSeq, prevHash = last.Seq, last.Hash
		}
		e.Seq = prevSeq + 1
		e.PrevHash = prevHash
		e.At = s.nowUTC().Format(time.RFC3339Nano)
		e.Hash = entryHash(e)
		e.MAC = entryMAC(key, e.Hash)
		if err := tx.Create(e).Error; err != nil {
			return err
		}
		return tx.Model(&JournalHead{}).Where("project = ?", rec.Project).
			Updates(map[string]any{"seq": e.Seq, "hash": e.Hash, "mac": headMAC(key, rec.Project, e.Seq, e.Hash)}).Error
	})
	if err != nil {
		return nil, fmt.Errorf("append %s to the ops journal of %s: %w", rec.Event, rec.Project, err)
	}
	s.pub.Publish(TopicJournalAppended, JournalEvent{Project: e.Project, Seq: e.Seq, PlanID: e.PlanID, Event: e.Event})
	return e, nil
}

// JournalQuery selects journal entries. Project is required; the rest filter.
type JournalQuery struct {
	Project  string `json:"project"`
	PlanID   string `json:"plan_id,omitempty"`
	Status   Status `json:"status,omitempty"` // the plan's status recorded with the entry
	Event    string `json:"event,omitempty"`
	AfterSeq int64  `json:"after_seq,omitempty"`
	Limit    int    `json:"limit,omitempty"` // default 200, at most 10000
}

// Journal returns the project's entries in order, filtered by q.
func (s *Service) Journal(ctx context.Context, q JournalQuery) ([]JournalEntry, error) {
	if q.Project == "" {
		return nil, fieldErr("project", "is required to read a journal")
	}
	if q.Limit <= 0 {
		q.Limit = 200
	}
	q.Limit = min(q.Limit, 10000)
	tx := s.db.WithContext(ctx).Where("project = ? AND seq > ?", q.Project, q.AfterSeq)
	if q.PlanID != "" {
		tx = tx.Where("plan_id = ?", q.PlanID)
	}
	if q.Status != "" {
		tx = tx.Where("status = ?", q.Status)
	}
	if q.Event != "" {
		tx = tx.Where("event = ?", q.Event)
	}
	var out []JournalEntry
	if err := tx.Order("seq").Limit(q.Limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("read the ops journal of %s: %w", q.Project, err)
	}
	return out, nil
}

// Projects lists the projects that have a journal.
func (s *Service) Projects(ctx context.Context) ([]string, error) {
	var out []string
	if err := s.db.WithContext(ctx).Model(&JournalEntry{}).Distinct("project").Order("project").Pluck("project", &out).Error; err != nil {
		return nil, fmt.Errorf("list ops journal projects: %w", err)
	}
	return out, nil
}

// Kinds of [JournalProblem].
const (
	ProblemEdited    = "edited"
	ProblemDeleted   = "deleted"
	ProblemInserted  = "inserted"
	ProblemReordered = "reordered"
	ProblemHead      = "head"
	ProblemKey       = "key"
)

// JournalProblem is one thing wrong with a journal, naming the row.
type JournalProblem struct {
	Kind   string `json:"kind"` // edited, deleted, inserted, reordered, head, key
	Seq    int64  `json:"seq"`  // the seq the row carries (or the first missing seq)
	ID     uint   `json:"id"`   // the row id (0 for missing rows)
	Detail string `json:"detail"`
}

func (p JournalProblem) String() string {
	if p.ID == 0 {
		return fmt.Sprintf("%s: seq %d: %s", p.Kind, p.Seq, p.Detail)
	}
	return fmt.Sprintf("%s: seq %d (row id %d): %s", p.Kind, p.Seq, p.ID, p.Detail)
}

// JournalReport is the outcome of [Service.VerifyJournal].
type JournalReport struct {
	Project  string           `json:"project"`
	Entries  int              `json:"entries"`
	LastSeq  int64            `json:"last_seq"`
	OK       bool             `json:"ok"`
	Problems []JournalProblem `json:"problems,omitempty"`
}

// VerifyJournal checks the project's journal: every row's hash over its content, its HMAC
// under the keyring key, the chain of prev_hash links and seq numbers, the order of rows
// as stored, and the authenticated head. It names each row that was edited, inserted or
// reordered and each range of seqs that was deleted (including at the end). A journal
// that fails to verify is reported, not an error; err is for a database or keyring that
// cannot be read.
func (s *Service) VerifyJournal(ctx context.Context, project string) (JournalReport, error) {
	rep := JournalReport{Project: project}
	key, err := s.journalKey(ctx)
	if err != nil {
		return rep, err
	}
	var rows []JournalEntry
	if err := s.db.WithContext(ctx).Where("project = ?", project).Order("id").Find(&rows).Error; err != nil {
		return rep, fmt.Errorf("read the ops journal of %s: %w", project, err)
	}
	var head *JournalHead
	var heads []JournalHead
	if err := s.db.WithContext(ctx).Where("project = ?", project).Find(&heads).Error; err != nil {
		return rep, fmt.Errorf("read the ops journal head of %s: %w", project, err)
	}
	if len(heads) == 1 {
		head = &heads[0]
	}
	rep.Entries = len(rows)
	rep.Problems = verifyRows(key, project, rows, head)
	for _, r := range rows {
		rep.LastSeq = max(rep.LastSeq, r.Seq)
	}
	rep.OK = len(rep.Problems) == 0
	return rep, nil
}

func verifyRows(key []byte, project string, rows []JournalEntry, head *JournalHead) []JournalProblem {
	var problems []JournalProblem
	add := func(kind string, seq int64, id uint, format string, args ...any) {
		problems = append(problems, JournalProblem{Kind: kind, Seq: seq, ID: id, Detail: fmt.Sprintf(format, args...)})
	}
	n := len(rows)
	hashOK := make([]bool, n)
	macOK := make([]bool, n)
	authentic := 0
	for i := range rows {
		hashOK[i] = entryHash(&rows[i]) == rows[i].Hash
		macOK[i] = hmac.Equal([]byte(entryMAC(key, rows[i].Hash)), []byte(rows[i].MAC))
		if hashOK[i] && macOK[i] {
			authentic++
		}
	}
	headOK := head != nil && head.Seq > 0 && hmac.Equal([]byte(headMAC(key, project, head.Seq, head.Hash)), []byte(head.MAC))
	if n > 0 && authentic == 0 && !headOK {
		add(ProblemKey, 0, 0, "none of the %d entries authenticates under the journal key in the keyring: the key was replaced or lost, or every row was rewritten", n)
		return problems
	}

	// Authentic rows by seq; the first one seen for a seq wins, later copies are insertions.
	bySeq := map[int64]int{}
	var order []int // indexes of authentic rows kept, in id order
	for i := range rows {
		if !(hashOK[i] && macOK[i]) {
			continue
		}
		if j, dup := bySeq[rows[i].Seq]; dup {
			add(ProblemInserted, rows[i].Seq, rows[i].ID, "a second copy of the entry stored at row id %d", rows[j].ID)
			continue
		}
		bySeq[rows[i].Seq] = i
		order = append(order, i)
	}
	// The hash each authentic row links back to tells which seq came before it.
	nextOf := map[string]int64{} // hash -> seq of the authentic row whose prev_hash it is
	for _, i := range order {
		nextOf[rows[i].PrevHash] = rows[i].Seq
	}

	// Rows that do not authenticate: edited, inserted, or moved to another seq.
	present := map[int64]bool{}
	for i := range rows {
		present[rows[i].Seq] = true
		if hashOK[i] && macOK[i] {
			continue
		}
		r := &rows[i]
		if macOK[i] {
			// The hash is ours, the content is not: find where the entry was written.
			if next, ok := nextOf[r.Hash]; ok && next-1 != r.Seq && rehashAtSeq(r, next-1) == r.Hash {
				add(ProblemReordered, r.Seq, r.ID, "the entry written as seq %d now carries seq %d", next-1, r.Seq)
			} else if headOK && head.Hash == r.Hash && head.Seq != r.Seq && rehashAtSeq(r, head.Seq) == r.Hash {
				add(ProblemReordered, r.Seq, r.ID, "the entry written as seq %d now carries seq %d", head.Seq, r.Seq)
			} else {
				add(ProblemEdited, r.Seq, r.ID, "content changed after it was written (it no longer matches its hash; event now %q)", r.Event)
			}
			continue
		}
		if _, dup := bySeq[r.Seq]; dup {
			add(ProblemInserted, r.Seq, r.ID, "not written by Airlock (no valid MAC) and duplicates seq %d", r.Seq)
			continue
		}
		if prev, next, ok := neighbours(rows, bySeq, r.Seq); ok && next.PrevHash == prev.Hash && next.Seq == prev.Seq+1 {
			add(ProblemInserted, r.Seq, r.ID, "not written by Airlock (no valid MAC); seq %d links directly to seq %d around it", prev.Seq, next.Seq)
			continue
		}
		add(ProblemEdited, r.Seq, r.ID, "not authenticated: content or hash rewritten without the journal key (event now %q)", r.Event)
	}

	// Physical order: authentic rows were appended with increasing seq.
	for k := 1; k < len(order); k++ {
		a, b := rows[order[k-1]], rows[order[k]]
		if b.Seq < a.Seq {
			add(ProblemReordered, b.Seq, b.ID, "stored after seq %d (row id %d) although it was written before it", a.Seq, a.ID)
		}
	}

	// The chain, in seq order.
	seqs := make([]int64, 0, len(bySeq))
	for sq := range bySeq {
		seqs = append(seqs, sq)
	}
	slices.Sort(seqs)
	prevSeq, prevHash := int64(0), ""
	for _, sq := range seqs {
		r := rows[bySeq[sq]]
		if sq > prevSeq+1 {
			if first, last, ok := missingRange(present, prevSeq+1, sq-1); ok {
				add(ProblemDeleted, first, 0, "entries seq %d..%d are missing (before seq %d, row id %d)", first, last, sq, r.ID)
			}
		} else if r.PrevHash != prevHash {
			add(ProblemEdited, sq, r.ID, "its link to seq %d does not match (the chain was rewritten)", prevSeq)
		}
		prevSeq, prevHash = sq, r.Hash
	}

	// The head: the newest entry's seq and hash, authenticated.
	maxSeq := int64(0)
	for sq := range present {
		maxSeq = max(maxSeq, sq)
	}
	switch {
	case head == nil && n > 0:
		add(ProblemHead, maxSeq, 0, "the journal head row is missing (deleted)")
	case head == nil:
	case head.Seq == 0 && n == 0:
	case !headOK:
		add(ProblemHead, head.Seq, 0, "the journal head row does not authenticate (edited)")
	case head.Seq > maxSeq:
		add(ProblemDeleted, maxSeq+1, 0, "entries seq %d..%d are missing at the end (the head says the last entry is seq %d)", maxSeq+1, head.Seq, head.Seq)
	case head.Seq < maxSeq:
		add(ProblemInserted, head.Seq+1, 0, "entries after seq %d were added without the journal key (the head says the last entry is seq %d)", head.Seq, head.Seq)
	default:
		if i, ok := bySeq[head.Seq]; ok && rows[i].Hash != head.Hash {
			add(ProblemEdited, head.Seq, rows[i].ID, "the newest entry is not the one the head recorded")
		}
	}
	return problems
}

func rehashAtSeq(r *JournalEntry, seq int64) string {
	c := *r
	c.Seq = seq
	return entryHash(&c)
}

// neighbours returns the authentic rows just before and after seq.
func neighbours(rows []JournalEntry, bySeq map[int64]int, seq int64) (prev, next JournalEntry, ok bool) {
	bestPrev, bestNext := int64(-1), int64(-1)
	for sq := range bySeq {
		if sq < seq && sq > bestPrev {
			bestPrev = sq
		}
		if sq > seq && (bestNext < 0 || sq < bestNext) {
			bestNext = sq
		}
	}
	if bestNext < 0 {
		return prev, next, false
	}
	next = rows[bySeq[bestNext]]
	if bestPrev < 0 {
		return JournalEntry{Seq: 0, Hash: ""}, next, true
	}
	return rows[bySeq[bestPrev]], next, true
}

// missingRange returns the first and last seq in [from, to] absent from present.
func missingRange(present map[int64]bool, from, to int64) (first, last int64, ok bool) {
	first, last = -1, -1
	for sq := from; sq <= to; sq++ {
		if !present[sq] {
			if first < 0 {
				first = sq
			}
			last = sq
		}
	}
	return first, last, first >= 0
}
