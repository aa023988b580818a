package dispatch

import (
	"context"
	"errors"
	"fmt"
	"github.com/airlock-app/airlock/api"
	"os"
	"sync"
	"time"

	"github.com/airlock-app/airlock/departments"
	"gorm.io/gorm"
)

// Defaults of the unattended-run guarantees.
const (
	DefaultConcurrency       = 2
	DefaultHoldDeadline      = 24 * time.Hour
	DefaultLogLimit          = 10 << 20
	DefaultLogMaxAge         = 30 * 24 * time.Hour
	DefaultLogMaxTotal       = 1 << 30
	DefaultRunMaxAge         = 90 * 24 * time.Hour
	DefaultRunMaxCount       = 10000
	DefaultMaxBacklog        = 10
	MaxConsecutiveFailures   = 5
	MaxSameDenials           = 3
	defaultMissedGrace       = 2 * time.Minute
	heartbeatInterval        = 30 * time.Second
	housekeepingInterval     = time.Minute
	executorBackstopDuration = 10 * time.Second
	// microVMBootAllowance is added to the backstop of runs that may boot a micro-VM.
	microVMBootAllowance = 5 * time.Minute
)

// SleepBusOff as Options.SleepBus listens to no bus for logind's sleep signal.
const SleepBusOff = "off"

// Options configure a Dispatcher. DB, Departments, Executor, Approvals and LogDir are
// required.
type Options struct {
	DB          *gorm.DB
	Departments *departments.Service
	Executor    Executor
	Approvals   Approvals
	// Router decides where an execution_mode auto run's command runs before the run
	// starts (optional; nil: the Executor when it implements Router).
	Router Router
	// Secrets is required as soon as a task names a secret.
	Secrets   Secrets
	Publisher Publisher
	// Pending lists the broker's pending approvals for the inbox (optional).
	Pending PendingApprovals
	// LogDir holds one log per run, <run-id>-<random>.log (the record keeps its path).
	LogDir string
	// Defaults returns the effective policy of a run in dir before its department's and
	// task's settings (the app's one resolution: config layers and the project files of
	// dir); it is called at every start. nil: DefaultPolicy.
	Defaults func(dir string) Policy
	// Profile finds the profile a department's defaults or a task's overrides name
	// (ApplyDefaults); nil: no profile is known and a run that names one waits.
	Profile func(name string) (api.Profile, error)
	// Concurrency is the global limit of running runs (default 2).
	Concurrency int
	// LogLimit caps one run's log (default 10 MiB); LogMaxAge and LogMaxTotal prune logs.
	LogLimit    int64
	LogMaxAge   time.Duration
	LogMaxTotal int64
	// RunMaxAge and RunMaxCount prune run records: finished runs older than RunMaxAge
	// (default 90 days), and beyond RunMaxCount per task (default 10,000) the oldest.
	RunMaxAge   time.Duration
	RunMaxCount int
	// MaxBacklog caps the runs of one task queued, held or running at once under overlap
	// queue and allow (default 10); an occurrence beyond it is recorded skipped.
	MaxBacklog int
	// BaseEnv is the environment every run starts from (default: PATH, HOME, USER,
	// LOGNAME, LANG, LC_ALL, TZ, SHELL, TMPDIR from this process).
	BaseEnv []string
	// AgentDir holds one directory per run of an agent task (run-<id>), with the
	// settings Airlock writes for the agent and the agent's home: hidden from every other
	// sandbox, the run's own shows it its directory (sandbox.Policy.Unhidden). Required
	// as soon as a task has an agent.
	AgentDir string
	// RemoveWithRuns deletes, in the transaction that removes them, the caller's own rows
	// of the runs retention removes (the core's network connections), so none outlive
	// their run. nil: none.
	RemoveWithRuns func(tx *gorm.DB, runIDs []uint) error
	// Airlock returns the path of the airlock executable an agent's hook and MCP server
	// run ("": none found). Required as soon as a task has an agent.
	Airlock func() string
	// Now and NewTimer are the clock and the scheduler's timer (tests inject fakes).
	Now      func() time.Time
	NewTimer func(time.Duration) Timer
	// ReadClock reads the clocks the scheduler compares to notice a sleep or a clock set
	// forward (default: the system's; with Now injected, clocks that follow Now).
	ReadClock func() ClockReading
	// SleepBus is the D-Bus address where logind's PrepareForSleep is heard ("": the
	// system bus; SleepBusOff: none, the clock check alone notices wakes).
	SleepBus string
	// MissedGrace: an occurrence found later than this is recorded missed (default 2 min).
	MissedGrace time.Duration
	// Owner names this dispatcher on the runs it starts (default host/pid).
	Owner string
	// Exclusive says the caller holds the database's exclusive lock (the core's
	// internal/sqlitedb.Lock) for the life of this dispatcher: then a run recorded as
	// running that this dispatcher does not run is provably dead, whatever its pid says
	// now (a zombie, or another process that reused it), and Start and Cancel end it.
	// Without it, a run whose owner pid is alive is left alone (another dispatcher may
	// share the database).
	Exclusive bool
}

// Dispatcher schedules tasks, gates and runs their occurrences.
type Dispatcher struct {
	opts  Options
	db    *gorm.DB
	depts *departments.Service
	now   func() time.Time
	slots chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	active    map[uint]*activeRun
	taskLocks map[uint]chan struct{}
	ending    map[uint]ending // runs whose end the database has not taken yet

	sched *scheduler
	// heldDirs wakes watchHeldDirs when runs are held or released; heldMissing (under
	// mu) is what it last saw missing.
	heldDirs    chan struct{}
	heldMissing map[string]bool
}

// New checks opts and returns a Dispatcher; call Start to recover and begin scheduling.
func New(opts Options) (*Dispatcher, error) {
	switch {
	case opts.DB == nil:
		return nil, errors.New("dispatch: Options.DB is required")
	case opts.Departments == nil:
		return nil, errors.New("dispatch: Options.Departments is required")
	case opts.Executor == nil:
		return nil, errors.New("dispatch: Options.Executor is required")
	case opts.Approvals == nil:
		return nil, errors.New("dispatch: Options.Approvals is required")
	case opts.LogDir == "":
		return nil, errors.New("dispatch: Options.LogDir is required")
	}
	if err := os.MkdirAll(opts.LogDir, 0o700); err != nil {
		return nil, fmt.Errorf("dispatch: run log directory: %w", err)
	}
	if err := registerRedaction(opts.DB); err != nil {
		return nil, fmt.Errorf("dispatch: %w", err)
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.LogLimit <= 0 {
		opts.LogLimit = DefaultLogLimit
	}
	if opts.LogMaxAge <= 0 {
		opts.LogMaxAge = DefaultLogMaxAge
	}
	if opts.LogMaxTotal <= 0 {
		opts.LogMaxTotal = DefaultLogMaxTotal
	}
	if opts.ReadClock == nil {
		if opts.Now == nil {
			opts.ReadClock = systemClock(time.Now)
		} else {
			opts.ReadClock = clockFrom(opts.Now)
		}
	}
	if opts.RunMaxAge <= 0 {
		opts.RunMaxAge = DefaultRunMaxAge
	}
	if opts.RunMaxCount <= 0 {
		opts.RunMaxCount = DefaultRunMaxCount
	}
	if opts.MaxBacklog <= 0 {
		opts.MaxBacklog = DefaultMaxBacklog
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewTimer == nil {
		opts.NewTimer = NewRealTimer
	}
	if opts.MissedGrace <= 0 {
		opts.MissedGrace = defaultMissedGrace
	}
	if opts.Defaults == nil {
		opts.Defaults = func(string) Policy { return DefaultPolicy() }
	}
	if opts.BaseEnv == nil {
		opts.BaseEnv = defaultBaseEnv()
	}
	if opts.Owner == "" {
		host, _ := os.Hostname()
		opts.Owner = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Dispatcher{
		opts: opts, db: opts.DB, depts: opts.Departments, now: opts.Now,
		slots:  make(chan struct{}, opts.Concurrency),
		ctx:    ctx,
		cancel: cancel,
		active: map[uint]*activeRun{}, taskLocks: map[uint]chan struct{}{}, ending: map[uint]ending{},
		heldDirs: make(chan struct{}, 1),
	}
	d.sched = newScheduler(d)
	opts.Departments.OnChange(d.departmentChanged)
	return d, nil
}

func defaultBaseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "SHELL", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Close stops scheduling, kills running runs (recorded interrupted) and waits for them.
// Held runs stay held in the database.
func (d *Dispatcher) Close() error {
	d.cancel()
	d.wg.Wait()
	return nil
}

func (d *Dispatcher) spawn(f func()) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f()
	}()
}

// taskLock returns a task's one-slot lock (for overlap policy queue).
func (d *Dispatcher) taskLock(id uint) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.taskLocks[id]
	if m == nil {
		m = make(chan struct{}, 1)
		d.taskLocks[id] = m
	}
	return m
}

// backlogFull says whether task t, under overlap queue or allow, already has MaxBacklog
// runs queued, held or running, and if so how many, in words ("(N queued, …)").
func (d *Dispatcher) backlogFull(ctx context.Context, db *gorm.DB, t Task) (bool, string, error) {
	if t.Overlap != OverlapQueue && t.Overlap != OverlapAllow {
		return false, "", nil
	}
	var n int64
	if err := db.WithContext(ctx).Model(&Run{}).Where("task_id = ? AND status IN ?", t.ID, activeStatuses).Count(&n).Error; err != nil {
		return false, "", fmt.Errorf("count the backlog of %s: %w", t.Name, err)
	}
	if n < int64(d.opts.MaxBacklog) {
		return false, "", nil
	}
	return true, fmt.Sprintf("(%d queued, held or running; overlap policy %s keeps at most dispatch.max_backlog = %d)",
		n, t.Overlap, d.opts.MaxBacklog), nil
}
