package dispatch

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/redact"
)

// Overlap policies: what a new occurrence does while a run of the same task is active.
const (
	OverlapSkip  = "skip"
	OverlapQueue = "queue"
	OverlapAllow = "allow"
)

// Missed-run policies: what happens to occurrences that fell while the app was closed.
const (
	MissedSkip    = "skip"
	MissedRunOnce = "run_once"
)

// Task is a scheduled command (the wire's type, also the table's row).
type Task = api.Task

// Run states.
const (
	StatusQueued           = "queued"
	StatusWaitingDirectory = "waiting_directory"
	StatusWaitingApproval  = "waiting_approval"
	StatusRunning          = "running"
	StatusSucceeded        = "succeeded"
	StatusFailed           = "failed"
	StatusTimedOut         = "timed_out"
	StatusCancelled        = "cancelled"
	StatusDenied           = "denied"
	StatusInterrupted      = "interrupted"
	StatusExpired          = "expired"
	// StatusSkipped is an occurrence that did not run; Reason says why (missed while the
	// app was closed or the machine slept, overlap, slot busy, task paused).
	StatusSkipped = "skipped"
)

// Skip reasons (Run.SkipReason).
const (
	SkipMissed   = "missed"
	SkipOverlap  = "overlap"
	SkipSlotBusy = "slot_busy"
	SkipPaused   = "paused"
	// SkipBacklog: under overlap queue or allow, the task already had Options.MaxBacklog
	// runs queued, held or running.
	SkipBacklog = "backlog_full"
)

// Run triggers.
const (
	TriggerSchedule   = "schedule"
	TriggerManual     = "manual"
	TriggerEscalation = "escalation"
)

// Held reports whether s is a state that waits for a person.
func Held(s string) bool { return s == StatusWaitingDirectory || s == StatusWaitingApproval }

// Finished reports whether s is terminal.
func Finished(s string) bool {
	switch s {
	case StatusQueued, StatusWaitingDirectory, StatusWaitingApproval, StatusRunning:
		return false
	}
	return true
}

// Run is one occurrence of a task, whether it ran or not (the wire's type, also the
// table's row).
type Run = api.Run

// HostAllowance is the person's "run it on the host" answer to an auto run's question,
// bound to the command and directory asked about.
type HostAllowance = api.HostAllowance

// allowanceCovers reports whether the allowance a was given for this command in this
// directory. The stored argv is redacted (redactRun), so the command is compared in that
// form.
func allowanceCovers(a *HostAllowance, argv []string, dir string) bool {
	return a != nil && a.Dir == dir && slices.Equal(redact.Argv(a.Argv), redact.Argv(argv))
}

// redactRunCallback is the name of the gorm callbacks that redact a run record.
const redactRunCallback = "airlock:redact_run"

// registerRedaction makes db redact what a run record keeps of its command and output
// (why it failed or was denied, the sandbox's denial, the subjects denied during the
// run, the command a host allowance was given for) before it is written, whatever the
// write looks like: Create, Save, or Updates with a struct or a map. The secrets
// dispatch injected are redacted from reasons before they get here (their values are
// known only to the run). Run is the wire's type, so the hook is a callback of the
// database rather than a method of the type.
func registerRedaction(db *gorm.DB) error {
	cb := db.Callback()
	if cb.Create().Get(redactRunCallback) != nil {
		return nil // this database already redacts (a second dispatcher on it)
	}
	if err := cb.Create().Before("gorm:before_create").Register(redactRunCallback, redactRunWrite); err != nil {
		return fmt.Errorf("register run redaction: %w", err)
	}
	if err := cb.Update().Before("gorm:before_update").Register(redactRunCallback, redactRunWrite); err != nil {
		return fmt.Errorf("register run redaction: %w", err)
	}
	return nil
}

var runType = reflect.TypeFor[Run]()

// redactRunWrite redacts the run records of one write: the model (one run or a slice of
// them) and what is written (a *Run or a map of columns).
func redactRunWrite(tx *gorm.DB) {
	st := tx.Statement
	if st.Schema == nil || st.Schema.ModelType != runType {
		return
	}
	rv := st.ReflectValue
	switch rv.Kind() {
	case reflect.Struct:
		if rv.CanAddr() {
			redactRun(rv.Addr().Interface().(*Run))
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len(); i++ {
			if e := reflect.Indirect(rv.Index(i)); e.Kind() == reflect.Struct && e.CanAddr() {
				redactRun(e.Addr().Interface().(*Run))
			}
		}
	}
	switch d := st.Dest.(type) {
	case *Run:
		redactRun(d)
	case map[string]any:
		for k, v := range d {
			s, isString := v.(string)
			if !isString {
				continue
			}
			switch k {
			case "reason", "Reason", "denial", "Denial":
				d[k] = redact.String(s)
			}
		}
	}
}

func redactRun(r *Run) {
	r.Reason = redact.String(r.Reason)
	r.Denial = redact.String(r.Denial)
	if len(r.Denials) > 0 {
		out := make(map[string]int, len(r.Denials))
		for k, n := range r.Denials {
			out[redact.String(k)] += n
		}
		r.Denials = out
	}
	if r.HostAllowed != nil {
		a := *r.HostAllowed
		a.Argv = redact.Argv(a.Argv)
		r.HostAllowed = &a
	}
}

// stateRow is a small key/value table (heartbeat for the digest; whether dispatch is
// paused, since when and by whom).
type stateRow struct {
	Key   string `gorm:"primaryKey"`
	Value time.Time
	Text  string
}

func (stateRow) TableName() string { return "dispatch_state" }

// Migrate creates or updates the dispatch tables.
func Migrate(db *gorm.DB) error {
	if err := db.AutoMigrate(&Task{}, &Run{}, &stateRow{}); err != nil {
		return fmt.Errorf("migrate dispatch: %w", err)
	}
	return registerRedaction(db)
}
