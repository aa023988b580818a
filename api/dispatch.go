package api

import (
	"net/http"
	"time"
)

// Task is a scheduled command (also the tasks table's row).
type Task struct {
	// idx_tasks_paused holds only the paused tasks, for the inbox (dispatch's pausedTasks).
	ID   uint   `gorm:"primaryKey;index:idx_tasks_paused,where:paused" json:"id"`
	Name string `gorm:"uniqueIndex;not null" json:"name"`
	// Argv is the exact command; creating or editing the task approves it. An agent
	// task's is the agent's name (its real command line is built at each start).
	Argv []string `gorm:"serializer:json" json:"argv"`
	// Agent makes it an agent task: a coding agent run headless on a prompt (nil: a
	// plain command).
	Agent *AgentSpec `gorm:"serializer:json" json:"agent,omitempty"`
	// Cwd is the working directory as given (absolute); it is resolved at every start.
	Cwd      string `gorm:"not null" json:"cwd"`
	Schedule string `json:"schedule"`
	// TimeZone is an IANA name; "" means UTC.
	TimeZone   string `json:"time_zone"`
	Department string `json:"department,omitempty"`
	// Overrides of the department's (or global) defaults.
	Overrides         Defaults          `gorm:"embedded;embeddedPrefix:override_" json:"overrides"`
	Env               map[string]string `gorm:"serializer:json" json:"env,omitempty"`
	Secrets           []string          `gorm:"serializer:json" json:"secrets,omitempty"`
	Timeout           time.Duration     `json:"timeout"`
	NoProgressTimeout time.Duration     `json:"no_progress_timeout"`
	Overlap           string            `gorm:"not null;default:skip" json:"overlap"`
	Missed            string            `gorm:"not null;default:skip" json:"missed"`
	Enabled           bool              `json:"enabled"`
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

// TaskRow is a task with what a list of tasks shows beside it: what the task routes
// answer, and what the Dispatch page lists.
type TaskRow struct {
	Task
	// Description is the schedule in words with its time zone.
	Description string `json:"description"`
	// NextRuns are the next five fire times (RFC 3339).
	NextRuns []string `json:"next_runs"`
	// Effective is the policy a run would start with now: the configuration's defaults,
	// then the department's, then the task's overrides (the start gate's order).
	Effective RunPolicy `json:"effective"`
	// Warnings are red warning lines, in words (full-access with approval never, a
	// working directory that is the home directory, a missing department).
	Warnings []string `json:"warnings"`
	// LastRun is the task's newest run, if any.
	LastRun *Run `json:"last_run,omitempty"`
}

// TaskSpec describes a task to create.
type TaskSpec struct {
	Name string   `json:"name"`
	Argv []string `json:"argv"`
	// Agent makes it an agent task (Argv is then left empty: it is the agent's name).
	Agent *AgentSpec `json:"agent,omitempty"`
	Cwd   string     `json:"cwd"`
	// Schedule is a cron line; "" makes a task that only runs with run-now.
	Schedule          string            `json:"schedule"`
	TimeZone          string            `json:"time_zone"`
	Department        string            `json:"department,omitempty"`
	Overrides         Defaults          `json:"overrides"`
	Env               map[string]string `json:"env,omitempty"`
	Secrets           []string          `json:"secrets,omitempty"`
	Timeout           time.Duration     `json:"timeout"`
	NoProgressTimeout time.Duration     `json:"no_progress_timeout"`
	Overlap           string            `json:"overlap,omitempty"`
	Missed            string            `json:"missed,omitempty"`
	HoldDeadline      time.Duration     `json:"hold_deadline"`
	// Disabled creates the task disabled.
	Disabled bool `json:"disabled,omitempty"`
}

// TaskPatch changes some fields of a task; nil fields stay as they are.
type TaskPatch struct {
	Argv []string `json:"argv,omitempty"`
	// Agent replaces the agent task's agent (its prompt, model, …) as a whole.
	Agent             *AgentSpec        `json:"agent,omitempty"`
	Cwd               *string           `json:"cwd,omitempty"`
	Schedule          *string           `json:"schedule,omitempty"`
	TimeZone          *string           `json:"time_zone,omitempty"`
	Department        *string           `json:"department,omitempty"`
	Overrides         *Defaults         `json:"overrides,omitempty"`
	Env               map[string]string `json:"env,omitempty"`
	Secrets           []string          `json:"secrets,omitempty"`
	Timeout           *time.Duration    `json:"timeout,omitempty"`
	NoProgressTimeout *time.Duration    `json:"no_progress_timeout,omitempty"`
	Overlap           *string           `json:"overlap,omitempty"`
	Missed            *string           `json:"missed,omitempty"`
	HoldDeadline      *time.Duration    `json:"hold_deadline,omitempty"`
}

// Agent kinds: the coding agents an agent task can run.
const (
	AgentClaude   = "claude"
	AgentCodex    = "codex"
	AgentOpencode = "opencode"
)

// AgentSpec is what an agent task runs: which agent, on which prompt, against which
// model API, with which key. Airlock writes the agent's settings for each run itself.
type AgentSpec struct {
	// Kind is AgentClaude, AgentCodex or AgentOpencode.
	Kind string `json:"kind"`
	// Prompt is the prompt text, stored when the task is created or edited: changing the
	// file it was read from does not change an approved task.
	Prompt string `json:"prompt"`
	// Model is the model's name ("": the agent's default).
	Model string `json:"model,omitempty"`
	// APIBase is the model API's base URL ("": the kind's default).
	APIBase string `json:"api_base,omitempty"`
	// APIKeySecret is the keyring secret holding the API key ("": the kind's default,
	// ANTHROPIC_API_KEY or OPENAI_API_KEY).
	APIKeySecret string `json:"api_key_secret,omitempty"`
	// Binary is the agent's executable ("": looked up in PATH at each start).
	Binary string `json:"binary,omitempty"`
}

// TaskIn creates a task. Creating it approves its command for every run: a task that
// widens access (full-access, approval never) is a person's act, so over the API it
// carries the proof.
type TaskIn struct {
	TaskSpec
	Proof
}

// TaskPatchIn edits a task, with the proof a widening needs (TaskIn).
type TaskPatchIn struct {
	TaskPatch
	Proof
}

// TaskForm is the window's task editor's content. Durations are text such as "30m" or
// "2h" ("" or "0" for none); Argv is the command already split into words.
type TaskForm struct {
	Name string   `json:"name"`
	Argv []string `json:"argv"`
	// Agent makes it an agent task (Argv is then ignored); nil: a command.
	Agent             *AgentSpec        `json:"agent,omitempty"`
	Cwd               string            `json:"cwd"`
	Schedule          string            `json:"schedule"`
	TimeZone          string            `json:"time_zone"`
	Department        string            `json:"department"`
	Overrides         Defaults          `json:"overrides"`
	Env               map[string]string `json:"env"`
	Secrets           []string          `json:"secrets"`
	Timeout           string            `json:"timeout"`
	NoProgressTimeout string            `json:"no_progress_timeout"`
	HoldDeadline      string            `json:"hold_deadline"`
	Overlap           string            `json:"overlap"`
	Missed            string            `json:"missed"`
	Disabled          bool              `json:"disabled"`
}

// ScheduleQuery is a schedule line and its time zone, to preview.
type ScheduleQuery struct {
	Schedule string `json:"schedule"`
	TimeZone string `json:"tz"`
}

// SchedulePreview is what the editor shows under the schedule field as the person types.
type SchedulePreview struct {
	Valid bool `json:"valid"`
	// Description is the schedule in words with its time zone ("every weekday at 02:00, Europe/Madrid").
	Description string `json:"description"`
	// Next are the next five fire times (RFC 3339).
	Next []string `json:"next"`
	// Error says what is wrong and what to write instead.
	Error string `json:"error,omitempty"`
}

// RunPolicy is a run's effective policy, recorded when it starts and fixed for the run.
type RunPolicy struct {
	// Profile is the profile the run's department or task chose (the task's over the
	// department's), recorded for what shows where a setting came from.
	Profile        string        `json:"profile,omitempty"`
	Posture        string        `json:"posture,omitempty"`
	SandboxMode    string        `json:"sandbox_mode"`
	Network        NetworkAccess `json:"network"` // off | allowlist | on; a row of the boolean column reads as off/on
	ApprovalPolicy string        `json:"approval_policy"`
	Backend        string        `json:"backend"`
	ExecutionMode  string        `json:"execution_mode"`
	// Limits are the run's resource limits: [limits] with its department's and task's over it.
	Limits Limits `gorm:"embedded;embeddedPrefix:limits_" json:"limits,omitzero"`
}

// Apply returns p with the fields that d sets replaced. A profile d names must be
// expanded first (ApplyProfile): Apply only records its name.
func (p RunPolicy) Apply(d Defaults) RunPolicy {
	if d.Profile != "" {
		p.Profile = d.Profile
	}
	if d.Posture != "" {
		p.Posture = d.Posture
		if d.Posture == "cloudops" && d.Network == nil {
			p.Network = NetworkOn
		}
	}
	if d.SandboxMode != "" {
		p.SandboxMode = d.SandboxMode
	}
	if d.Network != nil {
		p.Network = *d.Network
	}
	if d.ApprovalPolicy != "" {
		p.ApprovalPolicy = d.ApprovalPolicy
	}
	if d.ExecutionMode != "" {
		p.ExecutionMode = d.ExecutionMode
	}
	p.Limits = p.Limits.Over(d.Limits)
	return p
}

// ApplyProfile returns p with d applied over the profile prof that d names: the
// profile's settings beneath d's own keys (the one resolution's order).
func (p RunPolicy) ApplyProfile(prof Profile, d Defaults) RunPolicy {
	return p.Apply(prof.Defaults()).Apply(d)
}

// AsDefaults is p as defaults that set each of its fields.
func (p RunPolicy) AsDefaults() Defaults {
	d := Defaults{Profile: p.Profile, Posture: p.Posture, SandboxMode: p.SandboxMode, ApprovalPolicy: p.ApprovalPolicy,
		ExecutionMode: p.ExecutionMode, Limits: p.Limits}
	if p.Network != "" {
		n := p.Network
		d.Network = &n
	}
	return d
}

// Run is one occurrence of a task, whether it ran or not (also the runs table's row).
type Run struct {
	// idx_runs_held holds only the runs waiting for a person (a few among millions), so
	// the inbox and `runs list --waiting` read it instead of the table; its condition is
	// dispatch's heldRuns, written the same way (SQLite uses a partial index only for a
	// query that repeats its condition), in id order as they are listed.
	ID uint `gorm:"primaryKey;index:idx_runs_held,where:status = 'waiting_directory' OR status = 'waiting_approval' OR paused OR waiting_for <> ''" json:"id"`
	// idx_runs_task_status counts a task's active runs (overlap, the backlog cap) from the
	// index alone, however many finished runs the task has.
	TaskID uint `gorm:"not null;uniqueIndex:idx_run_occurrence,priority:1;index;index:idx_runs_task_status,priority:1" json:"task_id"`
	// ScheduledAt and Trigger identify the occurrence: claimed at most once.
	ScheduledAt time.Time `gorm:"not null;uniqueIndex:idx_run_occurrence,priority:2" json:"scheduled_at"`
	Trigger     string    `gorm:"not null;uniqueIndex:idx_run_occurrence,priority:3" json:"trigger"`
	TaskName    string    `json:"task_name"`
	Status      string    `gorm:"not null;index;index:idx_runs_task_status,priority:2" json:"status"`
	// Reason says why the run is held, was skipped, failed or was denied.
	Reason     string `json:"reason,omitempty"`
	SkipReason string `json:"skip_reason,omitempty"`
	// MissedCount and MissedUntil make a skipped row a span of missed occurrences (the
	// app closed, the machine asleep, the clock moved): MissedCount of them, the first at
	// ScheduledAt and the last at MissedUntil. Zero on a row of one occurrence.
	MissedCount int        `json:"missed_count,omitempty"`
	MissedUntil *time.Time `json:"missed_until,omitempty"`
	// CatchUp says why a run started late, in place of a missed occurrence (missed-run
	// policy run_once); it stays once the run starts, while Reason moves on.
	CatchUp string `json:"catch_up,omitempty"`
	// WaitingDir is the resolved directory a waiting_directory run waits for.
	WaitingDir string `gorm:"index" json:"waiting_dir,omitempty"`
	// WaitingDept is the department a held run waits for (missing or deleted).
	WaitingDept string     `json:"waiting_dept,omitempty"`
	HeldSince   *time.Time `json:"held_since,omitempty"`
	HoldUntil   *time.Time `json:"hold_until,omitempty"`
	ApprovalID  string     `json:"approval_id,omitempty"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	FinishedAt  *time.Time `gorm:"index" json:"finished_at,omitempty"`
	ExitCode    *int       `json:"exit_code,omitempty"`
	Signal      string     `json:"signal,omitempty"`
	PID         int        `gorm:"column:pid" json:"pid,omitempty"`
	// Owner is the dispatcher (host/pid) that runs it.
	Owner string `json:"owner,omitempty"`
	// Policy is the effective policy, recorded when the run started.
	Policy RunPolicy `gorm:"embedded;embeddedPrefix:policy_" json:"policy"`
	// PolicyOverride is set on escalation re-runs: the policy the parent ran with.
	PolicyOverride *RunPolicy `gorm:"serializer:json" json:"policy_override,omitempty"`
	// Grant is the extra access an escalation re-run asks for (and gets once allowed).
	Grant        *Grant `gorm:"serializer:json" json:"grant,omitempty"`
	ParentRunID  *uint  `json:"parent_run_id,omitempty"`
	Cwd          string `json:"cwd"`
	Department   string `json:"department,omitempty"`
	LogPath      string `json:"log_path,omitempty"`
	LogBytes     int64  `json:"log_bytes"`
	LogTruncated bool   `json:"log_truncated"`
	LogPruned    bool   `json:"log_pruned"`
	// Paused is set while a running run is stopped after the same request was denied
	// MaxSameDenials times; resume or cancel answers it.
	Paused bool `json:"paused"`
	// WaitingFor is the pending request a running run's command waits on for a
	// person's answer (an unknown domain's network_domain question); the run holds no
	// concurrency slot meanwhile, and Reason says what is asked.
	WaitingFor string `json:"waiting_for,omitempty"`
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

// RunQuery selects a page of runs, newest first.
type RunQuery struct {
	// Task is a task name or id ("" for all).
	Task string `json:"task"`
	// Status is a run state (running, failed, …), several comma-separated, or a group:
	// active (queued, running), waiting (held or paused), failed (failed, timed_out,
	// denied, interrupted, expired); "" for all.
	Status string `json:"status"`
	// Waiting selects held and paused runs only (the waiting group).
	Waiting bool `json:"waiting"`
	Offset  int  `json:"offset"`
	// Limit is the page size (default 100).
	Limit int `json:"limit"`
}

// RunPage is one page of runs.
type RunPage struct {
	Runs    []Run `json:"runs"`
	Offset  int   `json:"offset"`
	HasMore bool  `json:"has_more"`
}

// LogQuery selects a piece of a run's log: forward from Offset (a reader that follows
// the log), or with Tail the piece that ends at End (End < 0: the end of the file),
// begun at a line (a window that shows the tail, then loads earlier pieces).
type LogQuery struct {
	Offset int64 `json:"offset"`
	Tail   bool  `json:"tail"`
	End    int64 `json:"end"`
	// Max is the most bytes to read (default 1 MiB forward, 256 KiB for a tail; at most 1 MiB).
	Max int `json:"max"`
}

// LogPiece is a piece of a run's log: bytes [Start, End) of a file of Size bytes. A
// reader that follows the log asks next from End.
type LogPiece struct {
	RunID uint   `json:"run_id"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Size  int64  `json:"size"`
	Data  string `json:"data"`
	// Truncated says the run reached its log cap (the file ends with a marker).
	Truncated bool `json:"truncated"`
	// Missing says why there is no log ("" when there is one, possibly empty).
	Missing string `json:"missing,omitempty"`
	// Pruned says the log was deleted by the retention limits (Missing says so in words).
	Pruned bool `json:"pruned,omitempty"`
}

// RunCancelled answers a cancelled run: its id.
type RunCancelled struct {
	Cancelled uint `json:"cancelled"`
}

// RunResumed answers a resumed run: its id.
type RunResumed struct {
	Resumed uint `json:"resumed"`
}

// DispatchState is whether dispatch starts scheduled runs on its own: the sidebar footer
// and the tray show it; it is published on dispatch.state whenever it changes.
type DispatchState struct {
	// Paused: scheduled occurrences are recorded skipped instead of run. Runs a person
	// starts (run now, authorize, escalation) still run; running runs are not stopped.
	Paused   bool       `json:"paused"`
	PausedAt *time.Time `json:"paused_at,omitempty"`
	PausedBy string     `json:"paused_by,omitempty"`
	// Tasks counts the enabled tasks with a schedule.
	Tasks int `json:"tasks"`
	// Running counts the runs running now.
	Running int `json:"running"`
}

// InboxItem is one entry of "Waiting for you": what is asked and how to answer.
type InboxItem struct {
	Kind string `json:"kind"`
	// Key identifies the item: the approval id, "dir:/path", "dept:name", "run:12", "task:name".
	Key string `json:"key"`
	// Asked says what is asked, in a sentence.
	Asked string `json:"asked"`
	// Answer says how to answer (the CLI command; the window offers the same as buttons).
	Answer  string   `json:"answer"`
	Actions []string `json:"actions"`
	Tier    string   `json:"tier,omitempty"`
	// Runs are the held runs this answer releases.
	Runs     []uint     `json:"runs,omitempty"`
	Tasks    []string   `json:"tasks,omitempty"`
	Dir      string     `json:"dir,omitempty"`
	Since    time.Time  `json:"since"`
	Deadline *time.Time `json:"deadline,omitempty"`
}

// AuthorizeIn authorizes a directory. It is a person's act: over the API the caller
// typed the directory's name (Confirmation) and, under terminal_proof = "os", the login
// password. `/`, the home directory and its ancestors need ConfirmHome too.
type AuthorizeIn struct {
	Dir         string `json:"dir"`
	ConfirmHome bool   `json:"confirm_home"`
	Proof
}

// Authorization is what authorizing a directory did, or (in the window) the second
// confirmation it needs first.
type Authorization struct {
	// Place is the authorized place as recorded (none while a confirmation is needed).
	Place *AuthorizedPlace `json:"place,omitempty"`
	// Path is the directory as authorized (symlinks resolved).
	Path string `json:"path"`
	// Released are the held runs that start now.
	Released []uint `json:"released"`
	// NeedsConfirmation is true when nothing was authorized because the directory is
	// `/`, the home directory or one of its ancestors: Confirmation says, in words, what
	// would become writable; authorize again with the home confirmed to go ahead.
	NeedsConfirmation bool   `json:"needs_confirmation"`
	Confirmation      string `json:"confirmation,omitempty"`
}

// PlaceIn names a directory (revoking an authorized place).
type PlaceIn struct {
	Dir string `json:"dir"`
}

// The dispatch routes: tasks, runs and their logs, places, the inbox, dispatch as a whole.
var (
	ListTasks       = route[None, []TaskRow](http.MethodGet, "/v1/tasks")
	CreateTask      = route[TaskIn, TaskRow](http.MethodPost, "/v1/tasks")
	GetTask         = route[None, TaskRow](http.MethodGet, "/v1/tasks/{name}")
	EditTask        = route[TaskPatchIn, TaskRow](http.MethodPatch, "/v1/tasks/{name}")
	RemoveTask      = route[None, Removed](http.MethodDelete, "/v1/tasks/{name}")
	EnableTask      = route[None, TaskRow](http.MethodPost, "/v1/tasks/{name}/enable")
	DisableTask     = route[None, TaskRow](http.MethodPost, "/v1/tasks/{name}/disable")
	RunTaskNow      = route[None, Run](http.MethodPost, "/v1/tasks/{name}/run-now")
	PreviewSchedule = route[ScheduleQuery, SchedulePreview](http.MethodGet, "/v1/schedule/preview")
	ListRuns        = route[RunQuery, RunPage](http.MethodGet, "/v1/runs")
	GetRun          = route[None, Run](http.MethodGet, "/v1/runs/{id}")
	RunLog          = route[LogQuery, LogPiece](http.MethodGet, "/v1/runs/{id}/log")
	GetRunNetwork   = route[None, RunNetwork](http.MethodGet, "/v1/runs/{id}/network")
	CancelRun       = route[None, RunCancelled](http.MethodPost, "/v1/runs/{id}/cancel")
	ResumeRun       = route[None, RunResumed](http.MethodPost, "/v1/runs/{id}/resume")
	GetDispatch     = route[None, DispatchState](http.MethodGet, "/v1/dispatch")
	PauseDispatch   = route[None, DispatchState](http.MethodPost, "/v1/dispatch/pause")
	ResumeDispatch  = route[None, DispatchState](http.MethodPost, "/v1/dispatch/resume")
	Authorize       = route[AuthorizeIn, Authorization](http.MethodPost, "/v1/authorize")
	ListPlaces      = route[None, []KnownPlace](http.MethodGet, "/v1/places")
	RevokePlace     = route[PlaceIn, AuthorizedPlace](http.MethodPost, "/v1/places/revoke")
	Inbox           = route[None, []InboxItem](http.MethodGet, "/v1/inbox")
	GetDigest       = route[None, DigestCard](http.MethodGet, "/v1/digest")
	DismissDigest   = route[DigestDismissIn, DigestCard](http.MethodPost, "/v1/digest/dismiss")
)

// DigestCard is the latest digest (dispatch.digest) as Waiting for you shows it, until
// the person dismisses it. ID 0 means there is nothing to show: no digest since the core
// started, or the latest one was dismissed.
type DigestCard struct {
	// ID numbers the digests of this core's life, from 1; a new one (at wake) shows again.
	ID uint64    `json:"id"`
	At time.Time `json:"at"` // when the digest was made
	DispatchDigest
}

// DigestDismissIn names the digest dismissed: an older ID than the latest dismisses
// nothing, so a card shown before a newer digest arrived cannot hide the newer one.
type DigestDismissIn struct {
	ID uint64 `json:"id"`
}
