package ops

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/testdb"
	"gorm.io/gorm"
)

// memKeys is an in-memory KeySource holding one fixed key.
type memKeys struct{ key []byte }

func (m memKeys) JournalKey(context.Context) ([]byte, error) { return m.key, nil }

func newMemKeys(t testing.TB) memKeys {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return memKeys{key: k}
}

// testClock is an injectable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// recorder is a Publisher that keeps what it was given.
type recorder struct {
	mu     sync.Mutex
	topics []string
}

func (r *recorder) Publish(topic string, _ any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.topics = append(r.topics, topic)
}

func (r *recorder) count(topic string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, t := range r.topics {
		if t == topic {
			n++
		}
	}
	return n
}

func openDB(t testing.TB, path string) *gorm.DB {
	t.Helper()
	return testdb.Open(t, path, Migrate)
}

type env struct {
	svc   *Service
	db    *gorm.DB
	clock *testClock
	keys  memKeys
	pub   *recorder
	dir   string // the plans' working directory
	dbDir string
	state string // the service's state directory (input copies, journal anchor)
}

func newEnv(t testing.TB) *env {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.EvalSymlinks(dir)
	e := &env{db: openDB(t, filepath.Join(root, "airlock.db")), clock: &testClock{now: time.Date(2026, 9, 4, 12, 0, 0, 0, time.UTC)},
		keys: newMemKeys(t), pub: &recorder{}, dir: dir, dbDir: root, state: filepath.Join(root, "state")}
	svc, err := New(Config{DB: e.db, Runner: LocalRunner{}, StateDir: e.state, Keys: e.keys, Publisher: e.pub, Now: e.clock.Now,
		ReadTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	return e
}

// plan is a plan whose apply appends a line to out.txt, so tests count real side effects.
func (e *env) plan() PlanInput {
	return PlanInput{OperationPlan: OperationPlan{
		Target:   Target{Provider: "local", Device: "out.txt"},
		Intent:   "append one line to out.txt",
		Apply:    Command{Shell: "echo applied >> out.txt"},
		Snapshot: Command{Argv: []string{"ls", "-1"}},
		Diff:     Command{Argv: []string{"echo", "+applied"}},
		Workdir:  e.dir,
		Steps:    []Step{{Description: "append a line", Effect: "file grows by one line", Reversibility: Reversible, BlastRadius: BlastLow, Rollback: "remove the line"}},
		Verify:   []Assertion{{Name: "one line", Command: "grep -c applied out.txt", ExpectText: "1"}},
	}, By: "agent"}
}

func (e *env) create(t testing.TB, in PlanInput) *PlanView {
	t.Helper()
	v, err := e.svc.CreatePlan(context.Background(), in)
	if err != nil {
		t.Fatalf("create plan: %v", err)
	}
	return v
}

func (e *env) diff(t testing.TB, id string) {
	t.Helper()
	if _, err := e.svc.AttachDiff(context.Background(), DiffInput{PlanID: id, Run: true}); err != nil {
		t.Fatalf("diff: %v", err)
	}
}

func (e *env) approve(t testing.TB, v *PlanView) string {
	t.Helper()
	res, err := e.svc.Approve(context.Background(), v.ID, ApproveOptions{ConfirmedHashPrefix: v.Hash[:8], By: "alice", Interactive: true})
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	return res.Token
}

// approved opens, diffs and approves a plan, returning it and its token.
func (e *env) approved(t testing.TB, in PlanInput) (*PlanView, string) {
	t.Helper()
	v := e.create(t, in)
	e.diff(t, v.ID)
	return v, e.approve(t, v)
}

func (e *env) lines(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, "out.txt"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "applied\n")
}

func (e *env) status(t testing.TB, id string) Status {
	t.Helper()
	v, err := e.svc.Plan(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return v.Status
}

func (e *env) events(t testing.TB, project, planID string) []string {
	t.Helper()
	entries, err := e.svc.Journal(context.Background(), JournalQuery{Project: project, PlanID: planID, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(entries))
	for i, x := range entries {
		out[i] = x.Event
	}
	return out
}

func (e *env) journalOK(t testing.TB, project string) {
	t.Helper()
	rep, err := e.svc.VerifyJournal(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("journal of %s does not verify: %+v", project, rep.Problems)
	}
}

func (e *env) tokenUsed(t testing.TB, token string) bool {
	t.Helper()
	var tok ApprovalToken
	if err := e.db.First(&tok, "token_hash = ?", tokenHash(token)).Error; err != nil {
		t.Fatal(err)
	}
	return tok.UsedAt != nil
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
