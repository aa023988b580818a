package ops

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
)

// Defaults and bounds of the service.
const (
	DefaultTokenTTL     = api.DefaultTokenTTL
	MaxTokenTTL         = api.MaxTokenTTL
	MinTokenTTL         = api.MinTokenTTL
	MinConfirmPrefix    = 8
	DefaultApplyTimeout = 10 * time.Minute
	DefaultOutputCap    = 1 << 20 // 1 MiB of stdout and of stderr
	DefaultReadTimeout  = 2 * time.Minute
	maxStoredArtifact   = 4 << 20 // content kept per artifact
)

// Config is what [New] needs. DB, Runner, Keys and StateDir are required.
type Config struct {
	DB     *gorm.DB
	Runner Runner
	Keys   KeySource
	// StateDir is Airlock's hidden ops state (the app passes <data dir>/ops, which every
	// sandbox hides): the approved copies of input files (inputs/<sha256>) and the
	// journal's anchor (journal-anchor.json), kept outside the database.
	StateDir  string
	Publisher Publisher        // optional; events are dropped without one
	Now       func() time.Time // optional; time.Now by default (tests inject a clock)
	Random    io.Reader        // optional; crypto/rand by default
	Logger    *slog.Logger     // optional; slog.Default()

	ApplyTimeout time.Duration // default for plans that set no timeout; DefaultApplyTimeout
	OutputCap    int           // per stream; DefaultOutputCap
	ReadTimeout  time.Duration // diff, snapshot and verify runs; DefaultReadTimeout

	// Exclusive says the caller holds the database's exclusive lock (the core's
	// internal/sqlitedb.Lock) for the life of the service: then an apply this service is
	// not running is provably dead, whatever its recorded pid is now (a zombie, or
	// another process that reused it), and Recover ends it. Without it, an apply whose
	// pid is alive is left alone.
	Exclusive bool

	// NewJournal says the database and its journal anchor were both just created (the
	// way out of a damaged database moves both aside): a rollback counter left in the
	// secret store by the journal set aside is retired (kept under [RetiredCounterName]
	// as evidence) instead of reporting the new journal as rolled back.
	NewJournal bool
}

// Service runs the ops flow over one database. It is safe for concurrent use.
type Service struct {
	db      *gorm.DB
	runner  Runner
	keys    KeySource
	pub     Publisher
	now     func() time.Time
	random  io.Reader
	log     *slog.Logger
	applyTO time.Duration
	outCap  int
	readTO  time.Duration
	inputs  inputStore
	anchor  journalAnchor

	// retire: a counter found at the first read belongs to a journal set aside with
	// its database (Config.NewJournal); guarded by counterLock.
	retire bool

	keyMu sync.Mutex
	key   []byte

	journalMu sync.Mutex

	applyingMu sync.Mutex
	applying   map[string]bool // plans this service is applying now

	exclusive bool // Config.Exclusive
}

// AnchorPath is where the journal's anchor is kept under stateDir (Config.StateDir). It
// belongs to its database: a new database starts with none (the old one's anchor would
// report every old journal truncated).
func AnchorPath(stateDir string) string { return filepath.Join(stateDir, "journal-anchor.json") }

// New returns a service. It does not touch the database; call [Service.Recover] once
// when the app starts (or use [Open]).
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.DB == nil:
		return nil, errors.New("ops: Config.DB is required")
	case cfg.Runner == nil:
		return nil, errors.New("ops: Config.Runner is required")
	case cfg.Keys == nil:
		return nil, errors.New("ops: Config.Keys is required (the journal's HMAC key source)")
	case cfg.StateDir == "" || !filepath.IsAbs(cfg.StateDir):
		return nil, errors.New("ops: Config.StateDir is required, an absolute path (Airlock's hidden state, e.g. <data dir>/ops)")
	}
	s := &Service{db: cfg.DB, runner: cfg.Runner, keys: cfg.Keys, pub: cfg.Publisher, now: cfg.Now, random: cfg.Random,
		log: cfg.Logger, applyTO: cfg.ApplyTimeout, outCap: cfg.OutputCap, readTO: cfg.ReadTimeout,
		inputs: inputStore{dir: filepath.Join(cfg.StateDir, "inputs")}, anchor: journalAnchor{path: AnchorPath(cfg.StateDir)},
		exclusive: cfg.Exclusive}
	if s.pub == nil {
		s.pub = noPublisher{}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.random == nil {
		s.random = rand.Reader
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.applyTO <= 0 {
		s.applyTO = DefaultApplyTimeout
	}
	if s.outCap <= 0 {
		s.outCap = DefaultOutputCap
	}
	if s.readTO <= 0 {
		s.readTO = DefaultReadTimeout
	}
	return s, nil
}

// Open is [New] followed by [Service.Recover]; it also anchors, outside the database, the
// authentic journal heads the anchor does not hold yet (a journal written before anchoring).
func Open(ctx context.Context, cfg Config) (*Service, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := s.Recover(ctx); err != nil {
		return nil, err
	}
	// The counter is retired when it is first read: the secret store is not asked at
	// every start of a new installation.
	s.retire = cfg.NewJournal
	if err := s.adoptHeads(ctx); err != nil {
		// A keyring that does not answer yet must not keep the ops flow from opening;
		// the next append anchors its project anyway.
		s.log.Warn("ops: the journal heads could not be anchored at start", "err", err)
	}
	return s, nil
}

// journalKey fetches the HMAC key once and keeps it for the life of the service.
func (s *Service) journalKey(ctx context.Context) ([]byte, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	k, err := s.keys.JournalKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("journal key from the secret store: %w", err)
	}
	if len(k) < 32 {
		return nil, fmt.Errorf("journal key from the secret store is %d bytes: at least 32 are needed", len(k))
	}
	s.key = k
	return k, nil
}

func (s *Service) nowUTC() time.Time { return s.now().UTC() }

func (s *Service) publishPlan(r *PlanRecord) {
	s.pub.Publish(TopicPlanUpdated, PlanEvent{PlanID: r.ID, Project: r.Project, Status: string(r.Status), Hash: r.Hash})
}
