package ops

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/sqlitedb"
	"github.com/airlock-app/airlock/redact"
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
	// A commit-confirm plan's confirm: sent, failed, or withheld (the device rolls back).
	EventConfirmed       = string(api.ConfirmSent)
	EventConfirmFailed   = string(api.ConfirmFailed)
	EventConfirmWithheld = string(api.ConfirmWithheld)
	// EventHeadMissing is written by the journal itself when it finds its head row gone.
	EventHeadMissing = "journal_head_missing"
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
		b, err := redact.JSON(rec.Detail)
		if err != nil {
			return nil, fmt.Errorf("journal %s: encode detail: %w", rec.Event, err)
		}
		detail = string(b)
	}
	e := &JournalEntry{Project: rec.Project, PlanID: rec.PlanID, Event: rec.Event, Status: rec.Status,
		Actor: redact.String(rec.Actor), Detail: detail}

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
		batch := []*JournalEntry{e}
		if head.Seq == 0 {
			// A new journal, or one whose head row was deleted. In the second case continue
			// after the last row, but first record, authenticated, that the head was
			// missing: deleting the head and the newest entries must stay visible.
			var last JournalEntry
			if err := tx.Where("project = ?", rec.Project).Order("seq DESC").Limit(1).Find(&last).Error; err != nil {
				return err
			}
			if last.ID != 0 {
				prevSeq, prevHash = last.Seq, last.Hash
				marker := &JournalEntry{Project: rec.Project, Event: EventHeadMissing, Actor: "airlock",
					Detail: fmt.Sprintf(`{"last_seq_found":%d}`, last.Seq)}
				batch = []*JournalEntry{marker, e}
			}
		}
		at := s.nowUTC().Format(time.RFC3339Nano)
		for _, x := range batch {
			x.Seq = prevSeq + 1
			x.PrevHash = prevHash
			x.At = at
			x.Hash = entryHash(x)
			x.MAC = entryMAC(key, x.Hash)
			if err := tx.Create(x).Error; err != nil {
				return err
			}
			prevSeq, prevHash = x.Seq, x.Hash
		}
		return tx.Model(&JournalHead{}).Where("project = ?", rec.Project).
			Updates(map[string]any{"seq": e.Seq, "hash": e.Hash, "mac": headMAC(key, rec.Project, e.Seq, e.Hash)}).Error
	})
	if err != nil {
		return nil, fmt.Errorf("append %s to the ops journal of %s: %w", rec.Event, rec.Project, err)
	}
	// The head also goes outside the database, so a wipe of the project's rows shows.
	newHead := map[string]JournalHead{rec.Project: {Project: rec.Project, Seq: e.Seq, Hash: e.Hash}}
	if err := s.anchor.advance(key, newHead); err != nil {
		s.log.Error("ops: could not anchor the journal head outside the database", "project", rec.Project, "err", err)
	}
	// And in the secret store, where a rewrite of the database and the anchor file
	// cannot put it back.
	if err := s.advanceCounter(ctx, key, newHead); err != nil {
		s.log.Error("ops: could not advance the journal counter in the secret store", "project", rec.Project, "err", err)
	}
	s.pub.Publish(TopicJournalAppended, JournalEvent{Project: e.Project, Seq: e.Seq, PlanID: e.PlanID, Event: e.Event})
	return e, nil
}

// JournalQuery selects journal entries. Project is required; the rest filter.
type JournalQuery = api.JournalQuery

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
	tx = tx.Scopes(sqlitedb.EqIfSet("plan_id", q.PlanID), sqlitedb.EqIfSet("status", q.Status), sqlitedb.EqIfSet("event", q.Event))
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
type JournalProblem = api.JournalProblem

// JournalReport is the outcome of [Service.VerifyJournal].
type JournalReport = api.JournalReport

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
	var anchor *JournalHead
	anchored, aerr := s.anchor.read(key)
	switch {
	case aerr == nil:
		if a, ok := anchored[project]; ok {
			anchor = &JournalHead{Project: project, Seq: a.Seq, Hash: a.Hash}
		}
	case errors.Is(aerr, errAnchorMissing):
		if len(rows) > 0 || head != nil {
			rep.Problems = append(rep.Problems, JournalProblem{Kind: ProblemAnchor, Detail: fmt.Sprintf("%s (%s): it was deleted; "+
				"the database alone cannot show whether entries were deleted with their head", aerr, s.anchor.path)})
		}
	default:
		rep.Problems = append(rep.Problems, JournalProblem{Kind: ProblemAnchor, Detail: aerr.Error()})
	}
	rep.Expected = rep.Entries
	if anchor != nil {
		rep.Expected = int(max(anchor.Seq, int64(rep.Entries)))
	}
	rep.Problems = append(rep.Problems, verifyRows(key, project, rows, head, anchor)...)
	for _, r := range rows {
		rep.LastSeq = max(rep.LastSeq, r.Seq)
	}
	newest := rep.LastSeq
	if head != nil {
		newest = max(newest, head.Seq)
	}
	if anchor != nil {
		newest = max(newest, anchor.Seq)
	}
	rb := s.rolledBack(ctx, key, project, newest, func(seq int64) (string, bool) {
		for _, r := range rows {
			if r.Seq == seq && hmac.Equal([]byte(entryMAC(key, r.Hash)), []byte(r.MAC)) {
				return r.Hash, true
			}
		}
		return "", false
	})
	for _, p := range rb {
		if p.Kind == ProblemRolledBack {
			rep.Expected = max(rep.Expected, int(p.Seq))
		}
	}
	rep.Problems = append(rep.Problems, rb...)
	rep.OK = len(rep.Problems) == 0
	return rep, nil
}

// verifyRows checks a project's rows (in id order) against the key and the head.
//
// It first rebuilds the order in which the entries were written from what cannot be
// forged without the key: each row whose MAC is valid is linked to its predecessor by
// prev_hash, and its content must hash to its stored hash at that position. Rows and
// positions are then named: a valid MAC over a hash the content no longer matches is an
// edit, or a move when the content matches at another seq; a row without a valid MAC is
// an edit when it sits in a hole of the written order and an insertion otherwise; holes
// nothing explains are deletions; rows stored out of written order were reordered.
func verifyRows(key []byte, project string, rows []JournalEntry, head, anchor *JournalHead) []JournalProblem {
	var problems []JournalProblem
	add := func(kind string, seq int64, id uint, format string, args ...any) {
		problems = append(problems, JournalProblem{Kind: kind, Seq: seq, ID: id, Detail: fmt.Sprintf(format, args...)})
	}
	n := len(rows)
	hashOK := make([]bool, n)
	macOK := make([]bool, n)
	anyMAC := false
	for i := range rows {
		hashOK[i] = entryHash(&rows[i]) == rows[i].Hash
		macOK[i] = hmac.Equal([]byte(entryMAC(key, rows[i].Hash)), []byte(rows[i].MAC))
		anyMAC = anyMAC || macOK[i]
	}
	headOK := head != nil && head.Seq > 0 && hmac.Equal([]byte(headMAC(key, project, head.Seq, head.Hash)), []byte(head.MAC))
	if n > 0 && !anyMAC && !headOK {
		add(ProblemKey, 0, 0, "none of the %d entries authenticates under the journal key in the keyring: the key was replaced or lost, or every row was rewritten", n)
		return problems
	}

	// Rebuild the written order.
	pos := make([]int64, n) // written seq of each row; 0 = not placed
	placedAt := map[int64]int{}
	children := map[string][]int{}
	for i := range rows {
		if macOK[i] {
			children[rows[i].PrevHash] = append(children[rows[i].PrevHash], i)
		}
	}
	type node struct {
		hash string
		seq  int64
	}
	queue := []node{{hash: "", seq: 0}}
	for i := range rows {
		if hashOK[i] && macOK[i] {
			if j, dup := placedAt[rows[i].Seq]; dup {
				add(ProblemInserted, rows[i].Seq, rows[i].ID, "a second copy of the entry stored at row id %d", rows[j].ID)
				continue
			}
			pos[i] = rows[i].Seq
			placedAt[rows[i].Seq] = i
			queue = append(queue, node{hash: rows[i].Hash, seq: rows[i].Seq})
		}
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, c := range children[cur.hash] {
			at := cur.seq + 1
			if _, taken := placedAt[at]; taken || pos[c] != 0 {
				continue
			}
			if rehashAtSeq(&rows[c], at) == rows[c].Hash {
				pos[c] = at
				placedAt[at] = c
				queue = append(queue, node{hash: rows[c].Hash, seq: at})
			}
		}
	}
	maxPos := int64(0)
	for sq := range placedAt {
		maxPos = max(maxPos, sq)
	}
	authentic := len(placedAt)
	if headOK {
		maxPos = max(maxPos, head.Seq)
	}
	if anchor != nil && anchor.Seq > maxPos {
		held := "none of them"
		if maxPos > 0 {
			held = fmt.Sprintf("entries only up to seq %d", maxPos)
		}
		add(ProblemTruncated, maxPos+1, 0, "%d entries expected, %d found: the journal was truncated (the anchor kept outside the database says the last entry is seq %d; "+
			"the database holds %s: the newest entries were deleted with its head)", anchor.Seq, authentic, anchor.Seq, held)
		maxPos = anchor.Seq
	}
	if anchor != nil {
		if i, ok := placedAt[anchor.Seq]; ok && rows[i].Hash != anchor.Hash {
			add(ProblemHead, anchor.Seq, rows[i].ID, "the entry at seq %d is not the one the anchor outside the database recorded", anchor.Seq)
		}
	}
	explained := map[int64]bool{}

	// Rows whose MAC is valid but whose content is not what was written there.
	for i := range rows {
		r := &rows[i]
		if !macOK[i] || hashOK[i] {
			continue
		}
		if pos[i] != 0 {
			add(ProblemReordered, r.Seq, r.ID, "the entry written as seq %d now carries seq %d", pos[i], r.Seq)
			continue
		}
		add(ProblemEdited, r.Seq, r.ID, "content changed after it was written (it no longer matches its hash; event now %q)", r.Event)
		explained[r.Seq] = true
	}
	// Rows without a valid MAC: not written by Airlock as they stand.
	for i := range rows {
		r := &rows[i]
		if macOK[i] {
			continue
		}
		if _, covered := placedAt[r.Seq]; !covered && r.Seq >= 1 && r.Seq <= maxPos && !explained[r.Seq] {
			add(ProblemEdited, r.Seq, r.ID, "not authenticated: content or hash rewritten without the journal key (event now %q)", r.Event)
			explained[r.Seq] = true
			continue
		}
		add(ProblemInserted, r.Seq, r.ID, "not written by Airlock (no valid MAC) and not part of the written chain (event %q)", r.Event)
	}
	// Holes nothing explains: deleted entries.
	for sq := int64(1); sq <= maxPos; sq++ {
		if _, ok := placedAt[sq]; ok || explained[sq] {
			continue
		}
		end := sq
		for end+1 <= maxPos && !explained[end+1] {
			if _, ok := placedAt[end+1]; ok {
				break
			}
			end++
		}
		if end == maxPos && headOK && head.Seq == maxPos {
			add(ProblemDeleted, sq, 0, "entries seq %d..%d are missing at the end (the journal head says the last entry is seq %d)", sq, end, head.Seq)
		} else {
			add(ProblemDeleted, sq, 0, "entries seq %d..%d are missing", sq, end)
		}
		sq = end
	}
	// Physical order: rows were appended in written order.
	lastPos, lastID := int64(0), uint(0)
	for i := range rows {
		if pos[i] == 0 {
			continue
		}
		if pos[i] < lastPos {
			add(ProblemReordered, rows[i].Seq, rows[i].ID, "stored after seq %d (row id %d) although it was written before it", lastPos, lastID)
		}
		lastPos, lastID = max(lastPos, pos[i]), rows[i].ID
	}
	for i := range rows {
		if rows[i].Event == EventHeadMissing && pos[i] != 0 {
			add(ProblemHead, rows[i].Seq, rows[i].ID, "the journal head row had been deleted before this entry was written (the newest entries before it may have been deleted with it)")
		}
	}
	// The head.
	switch {
	case head == nil && n > 0:
		add(ProblemHead, maxPos, 0, "the journal head row is missing (deleted)")
	case head == nil, head.Seq == 0 && n == 0:
	case !headOK:
		add(ProblemHead, head.Seq, 0, "the journal head row does not authenticate (edited)")
	default:
		if i, ok := placedAt[head.Seq]; ok && rows[i].Hash != head.Hash {
			add(ProblemHead, head.Seq, rows[i].ID, "the entry at seq %d is not the one the head recorded", head.Seq)
		}
		for sq := range placedAt {
			if sq > head.Seq {
				add(ProblemHead, head.Seq, 0, "the head says the last entry is seq %d but authentic entries go to seq %d: the head was rolled back", head.Seq, maxPos)
				break
			}
		}
	}
	slices.SortStableFunc(problems, func(a, b JournalProblem) int { return int(a.Seq - b.Seq) })
	return problems
}

func rehashAtSeq(r *JournalEntry, seq int64) string {
	c := *r
	c.Seq = seq
	return entryHash(&c)
}
