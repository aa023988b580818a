package dispatch

import (
	"fmt"
	"slices"
	"time"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/redact"
	"gorm.io/gorm"

	"github.com/airlock-app/airlock/sandbox"
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

// Task is a scheduled command.
type Task struct {
	ID   uint   `gorm:"primaryKey" json:"id"`
	Name string `gorm:"uniqueIndex;not null" json:"name"`
	// Argv is the exact command; creating or editing the task approves it.
	Argv []string `gorm:"serializer:json" json:"argv"`
	// Cwd is the working directory as given (absolute); it is resolved at every start.
	Cwd      string `gorm:"not null" json:"cwd"`
	Schedule string `json:"schedule"`
	// TimeZone is an IANA name; "" means UTC.
	TimeZone   string `json:"time_zone"`
	Department string `json:"department,omitempty"`
	// Overrides of the department's (or global) defaults.
	Overrides         departments.Defaults `gorm:"embedded;embeddedPrefix:override_" json:"overrides"`
	Env               map[string]string    `gorm:"serializer:json" json:"env,omitempty"`
	Secrets           []string             `gorm:"serializer:json" json:"secrets,omitempty"`
	Timeout           time.Duration        `json:"timeout"`
	NoProgressTimeout time.Duration        `json:"no_progress_timeout"`
	Overlap           string               `gorm:"not null;default:skip" json:"overlap"`
	Missed            string               `gorm:"not null;default:skip" json:"missed"`
	Enabled           bool                 `json:"enabled"`
	// HoldDeadline is how long a held run waits before it is recorded expired.
	HoldDeadline time.Duration `json:"hold_deadline"`
	// Paused is set by dispatch after MaxConsecutiveFailures failures in a row.
	Paused              bool   `json:"paused"`
	PauseReason         string `json:"pause_reason,omitempty"`
	ConsecutiveFailures int    `json:"consecutive_failures"`
	// LastScheduledAt is the latest occurrence that was claimed (ran, held or skipped).
	LastScheduledAt *time.Time `json:"last_scheduled_at,omitempty"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
}

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

// Run is one occurrence of a task, whether it ran or not.
type Run struct {
	ID     uint `gorm:"primaryKey" json:"id"`
	TaskID uint `gorm:"not null;uniqueIndex:idx_run_occurrence,priority:1;index" json:"task_id"`
	// ScheduledAt and Trigger identify the occurrence: claimed at most once.
	ScheduledAt time.Time `gorm:"not null;uniqueIndex:idx_run_occurrence,priority:2" json:"scheduled_at"`
	Trigger     string    `gorm:"not null;uniqueIndex:idx_run_occurrence,priority:3" json:"trigger"`
	TaskName    string    `json:"task_name"`
	Status      string    `gorm:"not null;index" json:"status"`
	// Reason says why the run is held, was skipped, failed or was denied.
	Reason     string `json:"reason,omitempty"`
	SkipReason string `json:"skip_reason,omitempty"`
	// WaitingDir is the resolved directory a waiting_directory run waits for.
	WaitingDir string `gorm:"index" json:"waiting_dir,omitempty"`
	// WaitingDept is the department a held run waits for (missing or deleted).
	WaitingDept string     `json:"waiting_dept,omitempty"`
	HeldSince   *time.Time `json:"held_since,omitempty"`
	HoldUntil   *time.Time `json:"hold_until,omitempty"`
	ApprovalID  string     `json:"approval_id,omitempty"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	ExitCode    *int       `json:"exit_code,omitempty"`
	Signal      string     `json:"signal,omitempty"`
	PID         int        `gorm:"column:pid" json:"pid,omitempty"`
	// Owner is the dispatcher (host/pid) that runs it.
	Owner string `json:"owner,omitempty"`
	// Policy is the effective policy, recorded when the run started.
	Policy Policy `gorm:"embedded;embeddedPrefix:policy_" json:"policy"`
	// PolicyOverride is set on escalation re-runs: the policy the parent ran with.
	PolicyOverride *Policy `gorm:"serializer:json" json:"policy_override,omitempty"`
	// Grant is the extra access an escalation re-run asks for (and gets once allowed).
	Grant        *sandbox.Grant `gorm:"serializer:json" json:"grant,omitempty"`
	ParentRunID  *uint          `json:"parent_run_id,omitempty"`
	Cwd          string         `json:"cwd"`
	Department   string         `json:"department,omitempty"`
	LogPath      string         `json:"log_path,omitempty"`
	LogBytes     int64          `json:"log_bytes"`
	LogTruncated bool           `json:"log_truncated"`
	LogPruned    bool           `json:"log_pruned"`
	// Paused is set while a running run is stopped after the same request was denied
	// MaxSameDenials times; Resume or Cancel answers it.
	Paused bool `json:"paused"`
	// Denial is what the sandbox denied (escalation re-runs carry their parent's).
	Denial string `json:"denial,omitempty"`
	// Denials counts denied requests per subject during the run (agent tool calls).
	Denials map[string]int `gorm:"serializer:json" json:"denials,omitempty"`
	// HostAllowed is set when the person allowed an auto run's high-risk command on the
	// host (the micro-VM was not ready), so a restart before the run starts does not ask
	// again.
	HostAllowed *HostAllowance `gorm:"serializer:json" json:"host_allowed,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// HostAllowance is the person's "run it on the host" answer to an auto run's question,
// bound to the command and directory asked about: a task edited before the run starts
// is asked again.
type HostAllowance struct {
	By   string    `json:"by"`
	Argv []string  `json:"argv"`
	Dir  string    `json:"dir"`
	At   time.Time `json:"at"`
}

// covers reports whether the allowance was given for this command in this directory.
// The stored argv is redacted (Run.BeforeSave), so the command is compared in that form.
func (a *HostAllowance) covers(argv []string, dir string) bool {
	return a != nil && a.Dir == dir && slices.Equal(redact.Argv(a.Argv), redact.Argv(argv))
}

// BeforeSave redacts what a run record keeps of its command and output (why it failed
// or was denied, the sandbox's denial, the subjects denied during the run, the command
// a host allowance was given for) before it is written, whatever the write looks like:
// Create, Save, or Updates with a struct or a map. The secrets dispatch injected are
// redacted from reasons before they get here (their values are known only to the run).
func (r *Run) BeforeSave(tx *gorm.DB) error {
	r.redact()
	if d, ok := tx.Statement.Dest.(*Run); ok && d != r {
		d.redact()
	}
	if m, ok := tx.Statement.Dest.(map[string]any); ok {
		for k, v := range m {
			s, isString := v.(string)
			if !isString {
				continue
			}
			switch k {
			case "reason", "Reason", "denial", "Denial":
				m[k] = redact.String(s)
			}
		}
	}
	return nil
}

func (r *Run) redact() {
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
	return nil
}
