package desktop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
)

// The Dispatch page's façade: tasks with their schedule in words, next runs, effective
// policy and warnings; the task editor's create/edit with a live schedule preview; runs
// page by page; a run's log read from its end in bounded pieces. Each method makes the
// same core call as the local API's route (app/dispatch.go) and returns the core's own
// error text, which names the problem and the way out.

// windowTimeout bounds a window action that only reads or writes the database.
const windowTimeout = 10 * time.Second

// TaskRow is one task as the Dispatch page lists it.
type TaskRow struct {
	dispatch.Task
	// Description is the schedule in words with its time zone.
	Description string `json:"description"`
	// NextRuns are the next five fire times (RFC 3339; the generated TypeScript has no
	// time type).
	NextRuns []string `json:"next_runs"`
	// Effective is the policy a run would start with now: the configuration's defaults,
	// then the department's, then the task's overrides (the start gate's order).
	Effective dispatch.Policy `json:"effective"`
	// Warnings are red warning lines, in words (full-access with approval never, a
	// working directory that is the home directory, a missing department).
	Warnings []string `json:"warnings"`
	// LastRun is the task's newest run, if any.
	LastRun *dispatch.Run `json:"last_run,omitempty"`
}

// TaskForm is the task editor's content. Durations are text such as "30m" or "2h"
// ("" or "0" for none); Argv is the command already split into words.
type TaskForm struct {
	Name              string               `json:"name"`
	Argv              []string             `json:"argv"`
	Cwd               string               `json:"cwd"`
	Schedule          string               `json:"schedule"`
	TimeZone          string               `json:"time_zone"`
	Department        string               `json:"department"`
	Overrides         departments.Defaults `json:"overrides"`
	Env               map[string]string    `json:"env"`
	Secrets           []string             `json:"secrets"`
	Timeout           string               `json:"timeout"`
	NoProgressTimeout string               `json:"no_progress_timeout"`
	HoldDeadline      string               `json:"hold_deadline"`
	Overlap           string               `json:"overlap"`
	Missed            string               `json:"missed"`
	Disabled          bool                 `json:"disabled"`
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

// RunQuery selects a page of runs, newest first.
type RunQuery struct {
	// Task is a task name ("" for all).
	Task string `json:"task"`
	// Status is a run state (running, failed, …) or a group: active (queued, running),
	// waiting (held or paused), failed (failed, timed_out, denied, interrupted, expired),
	// "" for all.
	Status string `json:"status"`
	Offset int    `json:"offset"`
	// Limit is the page size (default 50, at most 200).
	Limit int `json:"limit"`
}

// RunPage is one page of runs.
type RunPage struct {
	Runs    []dispatch.Run `json:"runs"`
	Offset  int            `json:"offset"`
	HasMore bool           `json:"has_more"`
}

// LogPiece is a piece of a run's log: bytes [Start, End) of a file of Size bytes.
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
}

// Log pieces: the default and the most one call returns, so a 2 GB log is never read whole.
const (
	defaultLogPiece = 256 << 10
	maxLogPiece     = 1 << 20
)

var runGroups = map[string]dispatch.RunFilter{
	"active":  {Statuses: []string{dispatch.StatusQueued, dispatch.StatusRunning}},
	"failed":  {Statuses: []string{dispatch.StatusFailed, dispatch.StatusTimedOut, dispatch.StatusDenied, dispatch.StatusInterrupted, dispatch.StatusExpired}},
	"waiting": {Waiting: true},
}

func (f *Facade) dispatcher() (*dispatch.Dispatcher, error) {
	if f.core == nil || f.core.Dispatch == nil {
		return nil, errNoCore
	}
	return f.core.Dispatch, nil
}

func windowCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), windowTimeout)
}

// Tasks lists every task by name with its schedule in words, next five runs, effective
// policy, warnings and last run. The window re-reads it on task.updated, task.removed,
// department.updated and run.updated.
func (f *Facade) Tasks() ([]TaskRow, error) {
	d, err := f.dispatcher()
	if err != nil {
		return nil, err
	}
	ctx, cancel := windowCtx()
	defer cancel()
	tasks, err := d.Tasks(ctx)
	if err != nil {
		return nil, err
	}
	depts := f.departmentIndex(ctx)
	base := f.basePolicy()
	out := make([]TaskRow, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, f.taskRow(ctx, d, t, depts, base))
	}
	return out, nil
}

// Task is one task, by name or id, as the editor loads it.
func (f *Facade) Task(name string) (TaskRow, error) {
	d, err := f.dispatcher()
	if err != nil {
		return TaskRow{}, err
	}
	ctx, cancel := windowCtx()
	defer cancel()
	t, err := d.Task(ctx, name)
	if err != nil {
		return TaskRow{}, err
	}
	return f.singleRow(ctx, d, t), nil
}

// CreateTask creates a task from the editor. Creating it is the person's approval of
// its exact command.
func (f *Facade) CreateTask(form TaskForm) (TaskRow, error) {
	d, err := f.dispatcher()
	if err != nil {
		return TaskRow{}, err
	}
	spec, err := form.spec()
	if err != nil {
		return TaskRow{}, err
	}
	ctx, cancel := windowCtx()
	defer cancel()
	t, err := d.CreateTask(ctx, spec)
	if err != nil {
		return TaskRow{}, err
	}
	return f.singleRow(ctx, d, t), nil
}

// EditTask replaces every field of task name with the editor's (the name itself stays).
// Editing the command approves the new command.
func (f *Facade) EditTask(name string, form TaskForm) (TaskRow, error) {
	d, err := f.dispatcher()
	if err != nil {
		return TaskRow{}, err
	}
	spec, err := form.spec()
	if err != nil {
		return TaskRow{}, err
	}
	env := spec.Env
	if env == nil {
		env = map[string]string{} // non-nil: clears the variables
	}
	secrets := spec.Secrets
	if secrets == nil {
		secrets = []string{}
	}
	overrides := spec.Overrides
	p := dispatch.TaskPatch{
		Argv: spec.Argv, Cwd: &spec.Cwd, Schedule: &spec.Schedule, TimeZone: &spec.TimeZone,
		Department: &spec.Department, Overrides: &overrides, Env: env, Secrets: secrets,
		Timeout: &spec.Timeout, NoProgressTimeout: &spec.NoProgressTimeout,
		Overlap: &spec.Overlap, Missed: &spec.Missed,
	}
	if spec.HoldDeadline > 0 {
		p.HoldDeadline = &spec.HoldDeadline
	}
	if p.Argv == nil {
		p.Argv = []string{""} // an empty command is refused by the core, not kept
	}
	ctx, cancel := windowCtx()
	defer cancel()
	t, err := d.EditTask(ctx, name, p)
	if err != nil {
		return TaskRow{}, err
	}
	if t.Enabled == form.Disabled {
		if t, err = d.SetEnabled(ctx, name, !form.Disabled); err != nil {
			return TaskRow{}, err
		}
	}
	return f.singleRow(ctx, d, t), nil
}

// RemoveTask removes a task and cancels its open runs; its run records stay.
func (f *Facade) RemoveTask(name string) error {
	d, err := f.dispatcher()
	if err != nil {
		return err
	}
	ctx, cancel := windowCtx()
	defer cancel()
	return d.RemoveTask(ctx, name)
}

// SetTaskEnabled enables or disables a task; enabling also clears a pause after
// repeated failures.
func (f *Facade) SetTaskEnabled(name string, enabled bool) (TaskRow, error) {
	d, err := f.dispatcher()
	if err != nil {
		return TaskRow{}, err
	}
	ctx, cancel := windowCtx()
	defer cancel()
	t, err := d.SetEnabled(ctx, name, enabled)
	if err != nil {
		return TaskRow{}, err
	}
	return f.singleRow(ctx, d, t), nil
}

// RunNow starts a run of the task now, in exactly its scheduled context (it may be held
// like any other run).
func (f *Facade) RunNow(name string) (dispatch.Run, error) {
	d, err := f.dispatcher()
	if err != nil {
		return dispatch.Run{}, err
	}
	ctx, cancel := windowCtx()
	defer cancel()
	return d.RunNow(ctx, name)
}

// SchedulePreview validates a schedule line and a time zone as the person types: the
// schedule in words and its next five times, or what is wrong and what to write.
func (f *Facade) SchedulePreview(expr, tz string) SchedulePreview {
	return schedulePreview(expr, tz, time.Now())
}

func schedulePreview(expr, tz string, now time.Time) SchedulePreview {
	if strings.TrimSpace(expr) == "" {
		if _, err := dispatch.LoadZone(tz); err != nil {
			return SchedulePreview{Error: err.Error(), Next: []string{}}
		}
		return SchedulePreview{Valid: true, Description: "manual only: runs when you press Run now", Next: []string{}}
	}
	next, err := dispatch.NextTimes(expr, tz, now, 5)
	if err != nil {
		return SchedulePreview{Error: err.Error(), Next: []string{}}
	}
	return SchedulePreview{Valid: true, Description: dispatch.Describe(expr, tz), Next: timeTexts(next)}
}

// Runs is a page of runs, newest first, filtered by task and status.
func (f *Facade) Runs(q RunQuery) (RunPage, error) {
	d, err := f.dispatcher()
	if err != nil {
		return RunPage{}, err
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	q.Limit = min(q.Limit, 200)
	q.Offset = max(q.Offset, 0)
	filter, ok := runGroups[q.Status]
	if !ok && q.Status != "" {
		filter = dispatch.RunFilter{Statuses: []string{q.Status}}
	}
	filter.Task = q.Task
	// One more than the page says whether older runs follow.
	filter.Offset, filter.Limit = q.Offset, q.Limit+1
	ctx, cancel := windowCtx()
	defer cancel()
	runs, err := d.Runs(ctx, filter)
	if err != nil {
		return RunPage{}, err
	}
	page := RunPage{Runs: runs[:min(len(runs), q.Limit)], Offset: q.Offset}
	if page.Runs == nil {
		page.Runs = []dispatch.Run{}
	}
	page.HasMore = len(runs) > q.Limit
	return page, nil
}

// Run is one run.
func (f *Facade) Run(id uint) (dispatch.Run, error) {
	d, err := f.dispatcher()
	if err != nil {
		return dispatch.Run{}, err
	}
	ctx, cancel := windowCtx()
	defer cancel()
	return d.Run(ctx, id)
}

// RunLog reads at most maxBytes (default 256 KiB, at most 1 MiB) of run id's log
// ending at end (end < 0: the end of the file), starting at a line boundary when it
// does not start at the beginning. The window reads the tail once, then appends the
// run.log events; "load earlier" passes the previous piece's Start as end.
func (f *Facade) RunLog(id uint, end int64, maxBytes int) (LogPiece, error) {
	d, err := f.dispatcher()
	if err != nil {
		return LogPiece{}, err
	}
	ctx, cancel := windowCtx()
	defer cancel()
	run, err := d.Run(ctx, id)
	if err != nil {
		return LogPiece{}, err
	}
	piece := LogPiece{RunID: id, Truncated: run.LogTruncated}
	path, err := d.LogPath(ctx, id)
	if err != nil {
		piece.Missing = err.Error()
		return piece, nil
	}
	if path == "" {
		piece.Missing = "this run has no log: it never started"
		return piece, nil
	}
	return readLogPiece(piece, path, end, maxBytes)
}

func readLogPiece(piece LogPiece, path string, end int64, maxBytes int) (LogPiece, error) {
	if maxBytes <= 0 {
		maxBytes = defaultLogPiece
	}
	maxBytes = min(maxBytes, maxLogPiece)
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return piece, nil // not written yet: the run has printed nothing
	}
	if err != nil {
		return piece, fmt.Errorf("run #%d log: %w", piece.RunID, err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return piece, fmt.Errorf("run #%d log: %w", piece.RunID, err)
	}
	piece.Size = fi.Size()
	if end < 0 || end > piece.Size {
		end = piece.Size
	}
	start := max(0, end-int64(maxBytes))
	buf := make([]byte, end-start)
	n, err := file.ReadAt(buf, start)
	if n < len(buf) && err != nil {
		return piece, fmt.Errorf("run #%d log: %w", piece.RunID, err)
	}
	buf = buf[:n]
	if start > 0 {
		// Begin at a line: a piece cut mid-line (or mid-character) would show garbage.
		if i := strings.IndexByte(string(buf), '\n'); i >= 0 && i < len(buf)-1 {
			buf = buf[i+1:]
			start += int64(i + 1)
		}
	}
	piece.Start, piece.End = start, start+int64(len(buf))
	piece.Data = strings.ToValidUTF8(string(buf), "\uFFFD")
	return piece, nil
}

// CancelRun cancels a run (queued, held, running or paused), recorded as by the window.
func (f *Facade) CancelRun(id uint) error {
	d, err := f.dispatcher()
	if err != nil {
		return err
	}
	ctx, cancel := windowCtx()
	defer cancel()
	return d.Cancel(ctx, id, "window")
}

// ResumeRun resumes a run paused after the same request was denied three times.
func (f *Facade) ResumeRun(id uint) error {
	d, err := f.dispatcher()
	if err != nil {
		return err
	}
	ctx, cancel := windowCtx()
	defer cancel()
	return d.Resume(ctx, id)
}

// spec turns the editor's form into the core's task spec.
func (form TaskForm) spec() (dispatch.TaskSpec, error) {
	spec := dispatch.TaskSpec{
		Name: strings.TrimSpace(form.Name), Argv: form.Argv, Cwd: strings.TrimSpace(form.Cwd),
		Schedule: strings.TrimSpace(form.Schedule), TimeZone: strings.TrimSpace(form.TimeZone),
		Department: strings.TrimSpace(form.Department), Overrides: form.Overrides,
		Env: form.Env, Secrets: form.Secrets, Overlap: form.Overlap, Missed: form.Missed,
		Disabled: form.Disabled,
	}
	if spec.Overlap == "" {
		spec.Overlap = dispatch.OverlapSkip
	}
	if spec.Missed == "" {
		spec.Missed = dispatch.MissedSkip
	}
	if len(spec.Env) == 0 {
		spec.Env = nil
	}
	if len(spec.Secrets) == 0 {
		spec.Secrets = nil
	}
	if strings.HasPrefix(spec.Cwd, "~") {
		home, err := os.UserHomeDir()
		if err == nil && (spec.Cwd == "~" || strings.HasPrefix(spec.Cwd, "~/")) {
			spec.Cwd = filepath.Join(home, spec.Cwd[1:])
		}
	}
	var err error
	for _, d := range []struct {
		field, text string
		dst         *time.Duration
	}{
		{"timeout", form.Timeout, &spec.Timeout},
		{"no-progress timeout", form.NoProgressTimeout, &spec.NoProgressTimeout},
		{"hold deadline", form.HoldDeadline, &spec.HoldDeadline},
	} {
		if *d.dst, err = parseFormDuration(d.field, d.text); err != nil {
			return spec, err
		}
	}
	return spec, nil
}

// parseFormDuration reads "30m", "2h", "1h30m"; "" and "0" mean none.
func parseFormDuration(field, text string) (time.Duration, error) {
	text = strings.TrimSpace(text)
	if text == "" || text == "0" {
		return 0, nil
	}
	v, err := time.ParseDuration(text)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s %q: give a duration such as 90s, 30m or 2h (empty for none)", field, text)
	}
	return v, nil
}

func (f *Facade) departmentIndex(ctx context.Context) map[string]departments.Department {
	out := map[string]departments.Department{}
	if f.core == nil || f.core.Departments == nil {
		return out
	}
	list, err := f.core.Departments.List(ctx)
	if err != nil {
		return out
	}
	for _, d := range list {
		out[d.Name] = d
	}
	return out
}

// basePolicy is the global policy runs start with, from the effective configuration
// (the same keys app.Core's dispatch policy reads).
func (f *Facade) basePolicy() dispatch.Policy {
	if f.core == nil {
		return dispatch.DefaultPolicy()
	}
	return f.core.DispatchPolicy("")
}

// singleRow is taskRow for one task (it reads the departments and the base policy itself).
func (f *Facade) singleRow(ctx context.Context, d *dispatch.Dispatcher, t dispatch.Task) TaskRow {
	return f.taskRow(ctx, d, t, f.departmentIndex(ctx), f.basePolicy())
}

func (f *Facade) taskRow(ctx context.Context, d *dispatch.Dispatcher, t dispatch.Task, depts map[string]departments.Department, base dispatch.Policy) TaskRow {
	view := d.View(t, 5)
	row := TaskRow{Task: t, Description: view.Description, NextRuns: timeTexts(view.NextRuns), Warnings: []string{}}
	eff := base
	dept, hasDept := depts[t.Department]
	if hasDept {
		eff = eff.Apply(dept.Defaults)
	}
	row.Effective = eff.Apply(t.Overrides)
	row.Warnings = taskWarnings(t, row.Effective, dept, hasDept, f.Home())
	if runs, err := d.Runs(ctx, dispatch.RunFilter{Task: fmt.Sprint(t.ID), Limit: 1}); err == nil && len(runs) == 1 {
		row.LastRun = &runs[0]
	}
	return row
}

func timeTexts(ts []time.Time) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Format(time.RFC3339))
	}
	return out
}

// taskWarnings are the red lines of UI.md: the dangerous combination and a home-directory
// working directory, plus what will hold every run of the task.
func taskWarnings(t dispatch.Task, eff dispatch.Policy, dept departments.Department, hasDept bool, home string) []string {
	out := []string{}
	mode, _ := sandbox.ParseMode(eff.SandboxMode)
	if mode == sandbox.ModeFullAccess && eff.ApprovalPolicy == string(permission.PolicyNever) {
		out = append(out, "Full access with approval never: every run may change anything your user can, and nothing asks you first.")
	}
	if home != "" && filepath.Clean(t.Cwd) == filepath.Clean(home) {
		out = append(out, "Runs in your home directory: everything in it is within reach of the command.")
	} else if t.Cwd == "/" {
		out = append(out, "Runs in / — the whole file system is within reach of the command.")
	}
	switch {
	case t.Department != "" && !hasDept:
		out = append(out, fmt.Sprintf("Department %s no longer exists: every run waits until you re-create it or change the task's department.", t.Department))
	case hasDept && dept.Status != departments.StatusOK:
		out = append(out, fmt.Sprintf("Department %s is missing its directory: every run waits until it is back.", dept.Name))
	}
	return out
}
