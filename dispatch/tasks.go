package dispatch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch/agenttask"
	"github.com/airlock-app/airlock/internal/refusal"
)

// ErrNotFound is returned (wrapped) for an unknown task or run.
var ErrNotFound = errors.New("not found")

// ErrInvalid is wrapped by every refusal of what the caller asked (a bad name, schedule
// or time zone, a run that cannot be cancelled or resumed in its state): the message
// names the problem and the way out. Errors that wrap neither sentinel are Airlock's own.
var ErrInvalid = errors.New("invalid")

// invalidf is fmt.Errorf for a refusal (it wraps ErrInvalid).
func invalidf(format string, args ...any) error {
	return refusal.Errorf(ErrInvalid, format, args...)
}

// TaskSpec describes a task to create (the wire's type).
type TaskSpec = api.TaskSpec

// TaskPatch changes some fields of a task; nil fields stay as they are (the wire's type).
type TaskPatch = api.TaskPatch

var (
	taskNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func (d *Dispatcher) validate(ctx context.Context, t *Task) error {
	if !taskNameRE.MatchString(t.Name) {
		return invalidf("task name %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", t.Name)
	}
	if t.Agent != nil {
		if err := d.validateAgent(t); err != nil {
			return err
		}
	}
	if len(t.Argv) == 0 || t.Argv[0] == "" {
		return invalidf("task %s: no command: give it after `--`, e.g. airlock task add ... -- /usr/bin/backup --full", t.Name)
	}
	if !filepath.IsAbs(t.Cwd) {
		return invalidf("task %s: working directory %q is not absolute: give a full path", t.Name, t.Cwd)
	}
	if t.Schedule != "" {
		if _, _, err := ValidateSchedule(t.Schedule, t.TimeZone, d.now()); err != nil {
			return invalidf("task %s: %w", t.Name, err)
		}
	} else if _, err := LoadZone(t.TimeZone); err != nil {
		return invalidf("task %s: %w", t.Name, err)
	}
	if t.Department != "" {
		if _, err := d.depts.Get(ctx, t.Department); err != nil {
			return fmt.Errorf("task %s: %w: create it first with `airlock dept add %s DIR`", t.Name, err, t.Department)
		}
	}
	ov, err := departments.Normalize(t.Overrides)
	if err != nil {
		return invalidf("task %s: %w", t.Name, err)
	}
	t.Overrides = ov
	for k := range t.Env {
		if !envNameRE.MatchString(k) {
			return invalidf("task %s: environment variable name %q is not valid (letters, digits, _; not starting with a digit)", t.Name, k)
		}
		if strings.HasPrefix(k, "AIRLOCK_") {
			return invalidf("task %s: %s: AIRLOCK_ variables are set by dispatch", t.Name, k)
		}
	}
	for _, s := range t.Secrets {
		if !envNameRE.MatchString(s) || strings.HasPrefix(s, "AIRLOCK_") {
			return invalidf("task %s: secret name %q must be a valid environment variable name (it is injected under that name)", t.Name, s)
		}
		if _, ok := t.Env[s]; ok {
			return invalidf("task %s: %s is both an environment variable and a secret: keep one", t.Name, s)
		}
	}
	if t.Timeout < 0 || t.NoProgressTimeout < 0 || t.HoldDeadline < 0 {
		return invalidf("task %s: timeouts and the hold deadline cannot be negative", t.Name)
	}
	switch t.Overlap {
	case OverlapSkip, OverlapQueue, OverlapAllow:
	default:
		return invalidf("task %s: overlap %q: use skip, queue or allow", t.Name, t.Overlap)
	}
	switch t.Missed {
	case MissedSkip, MissedRunOnce:
	default:
		return invalidf("task %s: missed-run policy %q: use skip or run_once", t.Name, t.Missed)
	}
	return nil
}

// validateAgent checks an agent task's agent (filling in its defaults) and makes the
// task's command the agent's name: that is what creating the task approves, and what
// the broker is asked about at each start.
func (d *Dispatcher) validateAgent(t *Task) error {
	a := *t.Agent
	if err := agenttask.Validate(&a); err != nil {
		return invalidf("task %s: %w", t.Name, err)
	}
	if !envNameRE.MatchString(a.APIKeySecret) || strings.HasPrefix(a.APIKeySecret, "AIRLOCK_") {
		return invalidf("task %s: API key secret name %q must be a valid environment variable name (the one `airlock secret set NAME` stored)", t.Name, a.APIKeySecret)
	}
	if t.Overrides.Network != nil && *t.Overrides.Network == api.NetworkOff {
		return invalidf("task %s: an agent task needs its model API (%s), and its network is off: use --network allowlist (the API's host is allowed for its runs) or --network on", t.Name, a.APIBase)
	}
	t.Agent = &a
	t.Argv = []string{a.Kind}
	return nil
}

// CreateTask validates and stores a task. Creating it is the person's approval of its
// exact argv.
func (d *Dispatcher) CreateTask(ctx context.Context, spec TaskSpec) (Task, error) {
	t := Task{
		Name: spec.Name, Argv: spec.Argv, Agent: spec.Agent, Cwd: spec.Cwd, Schedule: strings.TrimSpace(spec.Schedule), TimeZone: spec.TimeZone,
		Department: spec.Department, Overrides: spec.Overrides, Env: spec.Env, Secrets: spec.Secrets,
		Timeout: spec.Timeout, NoProgressTimeout: spec.NoProgressTimeout, Overlap: spec.Overlap, Missed: spec.Missed,
		HoldDeadline: spec.HoldDeadline, Enabled: !spec.Disabled,
	}
	if t.Overlap == "" {
		t.Overlap = OverlapSkip
	}
	if t.Missed == "" {
		t.Missed = MissedSkip
	}
	if t.HoldDeadline == 0 {
		t.HoldDeadline = DefaultHoldDeadline
	}
	if err := d.validate(ctx, &t); err != nil {
		return Task{}, err
	}
	now := d.now().UTC()
	t.LastScheduledAt = &now // occurrences before creation are not "missed"
	if err := d.db.WithContext(ctx).Create(&t).Error; err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return Task{}, invalidf("task %s already exists: pick another name or edit it", t.Name)
		}
		return Task{}, fmt.Errorf("create task %s: %w", t.Name, err)
	}
	d.taskChanged(t)
	return t, nil
}

// EditTask applies a patch. Editing the command approves the new command.
func (d *Dispatcher) EditTask(ctx context.Context, name string, p TaskPatch) (Task, error) {
	t, err := d.Task(ctx, name)
	if err != nil {
		return Task{}, err
	}
	if p.Argv != nil {
		t.Argv = p.Argv
		t.Agent = nil // a command in place of the agent
	}
	if p.Agent != nil {
		t.Agent = p.Agent
	}
	setStr := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	setStr(&t.Cwd, p.Cwd)
	setStr(&t.Schedule, p.Schedule)
	setStr(&t.TimeZone, p.TimeZone)
	setStr(&t.Department, p.Department)
	setStr(&t.Overlap, p.Overlap)
	setStr(&t.Missed, p.Missed)
	if p.Overrides != nil {
		t.Overrides = *p.Overrides
	}
	if p.Env != nil {
		t.Env = p.Env
	}
	if p.Secrets != nil {
		t.Secrets = p.Secrets
	}
	setDur := func(dst *time.Duration, v *time.Duration) {
		if v != nil {
			*dst = *v
		}
	}
	setDur(&t.Timeout, p.Timeout)
	setDur(&t.NoProgressTimeout, p.NoProgressTimeout)
	setDur(&t.HoldDeadline, p.HoldDeadline)
	if t.HoldDeadline == 0 {
		t.HoldDeadline = DefaultHoldDeadline
	}
	if err := d.validate(ctx, &t); err != nil {
		return Task{}, err
	}
	if err := d.db.WithContext(ctx).Save(&t).Error; err != nil {
		return Task{}, fmt.Errorf("edit task %s: %w", name, err)
	}
	d.taskChanged(t)
	return t, nil
}

// SetEnabled enables or disables a task. Enabling also clears an automatic pause.
func (d *Dispatcher) SetEnabled(ctx context.Context, name string, enabled bool) (Task, error) {
	t, err := d.Task(ctx, name)
	if err != nil {
		return Task{}, err
	}
	t.Enabled = enabled
	if enabled {
		t.Paused, t.PauseReason, t.ConsecutiveFailures = false, "", 0
		now := d.now().UTC()
		if t.LastScheduledAt == nil || t.LastScheduledAt.Before(now) {
			// Occurrences while disabled are not missed: the person turned it off.
			t.LastScheduledAt = &now
		}
	}
	if err := d.db.WithContext(ctx).Save(&t).Error; err != nil {
		return Task{}, fmt.Errorf("enable task %s: %w", name, err)
	}
	d.taskChanged(t)
	return t, nil
}

// RemoveTask deletes a task; its run records stay.
func (d *Dispatcher) RemoveTask(ctx context.Context, name string) error {
	t, err := d.Task(ctx, name)
	if err != nil {
		return err
	}
	if err := d.db.WithContext(ctx).Delete(&Task{}, t.ID).Error; err != nil {
		return fmt.Errorf("remove task %s: %w", name, err)
	}
	// Its runs that have not finished are cancelled (a running one is killed).
	var open []uint
	d.db.WithContext(ctx).Model(&Run{}).Where("task_id = ? AND status IN ?", t.ID, activeStatuses).Pluck("id", &open)
	for _, id := range open {
		_ = d.Cancel(ctx, id, "task removed")
	}
	d.sched.remove(t.ID)
	d.publish(api.TopicTaskRemoved, api.TaskRemoved{ID: t.ID, Name: t.Name})
	d.inboxChanged()
	d.publishState()
	return nil
}

// Task returns a task by name (or by numeric id).
func (d *Dispatcher) Task(ctx context.Context, name string) (Task, error) {
	var t Task
	q := d.db.WithContext(ctx)
	var err error
	if id, ok := parseID(name); ok {
		err = q.Where("name = ? OR id = ?", name, id).Take(&t).Error
	} else {
		err = q.Where("name = ?", name).Take(&t).Error
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Task{}, fmt.Errorf("task %s: %w (see `airlock task list`)", name, ErrNotFound)
	}
	if err != nil {
		return Task{}, fmt.Errorf("get task %s: %w", name, err)
	}
	return t, nil
}

// Tasks lists every task by name.
func (d *Dispatcher) Tasks(ctx context.Context) ([]Task, error) {
	var ts []Task
	if err := d.db.WithContext(ctx).Order("name").Find(&ts).Error; err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return ts, nil
}

// TaskRow is a task with what a list of tasks shows beside it (the wire's type).
type TaskRow = api.TaskRow

// View returns a task with its schedule in words and its next n fire times (RFC 3339);
// the caller adds the effective policy, the warnings and the last run.
func (d *Dispatcher) View(t Task, n int) TaskRow {
	v := TaskRow{Task: t, NextRuns: []string{}, Warnings: []string{}}
	if t.Schedule == "" {
		v.Description = "manual only (run-now)"
		return v
	}
	v.Description = Describe(t.Schedule, t.TimeZone)
	next, _ := d.NextRuns(t, n)
	for _, at := range next {
		v.NextRuns = append(v.NextRuns, at.Format(time.RFC3339))
	}
	return v
}

// NextRuns returns a task's next n fire times after now, in its time zone.
func (d *Dispatcher) NextRuns(t Task, n int) ([]time.Time, error) {
	if t.Schedule == "" {
		return nil, nil
	}
	return NextTimes(t.Schedule, t.TimeZone, d.now(), n)
}

func (d *Dispatcher) taskChanged(t Task) {
	d.sched.update(t)
	d.taskUpdated(t)
	d.publishState()
}

func parseID(s string) (uint, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n uint
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint(c-'0')
	}
	return n, true
}
