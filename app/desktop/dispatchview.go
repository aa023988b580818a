package desktop

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app"
	"github.com/airlock-app/airlock/dispatch"
)

// The Dispatch page's façade: tasks with their schedule in words, next runs, effective
// policy and warnings; the task editor's create/edit with a live schedule preview; runs
// page by page; a run's log read from its end in bounded pieces. Each method calls the
// core's operation that the local API's route calls too (app/dispatch.go), as the
// window, and returns the core's own error text, which names the problem and the way out.

// The Dispatch page's types: the wire's.
type (
	// TaskRow is one task as the Dispatch page lists it.
	TaskRow = api.TaskRow
	// TaskForm is the task editor's content.
	TaskForm = api.TaskForm
	// SchedulePreview is what the editor shows under the schedule field.
	SchedulePreview = api.SchedulePreview
	// RunQuery selects a page of runs, newest first.
	RunQuery = api.RunQuery
	// RunPage is one page of runs.
	RunPage = api.RunPage
	// LogPiece is a piece of a run's log.
	LogPiece = api.LogPiece
)

// Runs pages: the window's default and its largest page.
const (
	defaultRunPage = 50
	maxRunPage     = 200
)

func (f *Facade) dispatcher() error {
	if f.core == nil || f.core.Dispatch == nil {
		return errNoCore
	}
	return nil
}

// Tasks lists every task by name with its schedule in words, next five runs, effective
// policy, warnings and last run. The window re-reads it on task.updated, task.removed,
// department.updated and run.updated.
func (f *Facade) Tasks() ([]TaskRow, error) {
	if err := f.dispatcher(); err != nil {
		return nil, err
	}
	return f.core.ListTasks(app.WindowCaller())
}

// Task is one task, by name or id, as the editor loads it.
func (f *Facade) Task(name string) (TaskRow, error) {
	if err := f.dispatcher(); err != nil {
		return TaskRow{}, err
	}
	return f.core.GetTask(app.WindowCaller(), name)
}

// CreateTask creates a task from the editor. Creating it is the person's approval of
// its exact command.
func (f *Facade) CreateTask(form TaskForm) (TaskRow, error) {
	if err := f.dispatcher(); err != nil {
		return TaskRow{}, err
	}
	spec, err := formSpec(form)
	if err != nil {
		return TaskRow{}, err
	}
	return f.core.CreateTask(app.WindowCaller(), api.TaskIn{TaskSpec: spec})
}

// EditTask replaces every field of task name with the editor's (the name itself stays).
// Editing the command approves the new command.
func (f *Facade) EditTask(name string, form TaskForm) (TaskRow, error) {
	if err := f.dispatcher(); err != nil {
		return TaskRow{}, err
	}
	spec, err := formSpec(form)
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
	p := api.TaskPatch{
		Argv: spec.Argv, Cwd: &spec.Cwd, Schedule: &spec.Schedule, TimeZone: &spec.TimeZone,
		Department: &spec.Department, Overrides: &overrides, Env: env, Secrets: secrets,
		Timeout: &spec.Timeout, NoProgressTimeout: &spec.NoProgressTimeout,
		Overlap: &spec.Overlap, Missed: &spec.Missed,
	}
	if spec.HoldDeadline > 0 {
		p.HoldDeadline = &spec.HoldDeadline
	}
	switch {
	case spec.Agent != nil:
		p.Agent, p.Argv = spec.Agent, nil
	case p.Argv == nil:
		p.Argv = []string{""} // an empty command is refused by the core, not kept
	}
	row, err := f.core.EditTask(app.WindowCaller(), name, api.TaskPatchIn{TaskPatch: p})
	if err != nil {
		return TaskRow{}, err
	}
	if row.Enabled == form.Disabled {
		return f.core.SetTaskEnabled(app.WindowCaller(), name, !form.Disabled)
	}
	return row, nil
}

// RemoveTask removes a task and cancels its open runs; its run records stay.
func (f *Facade) RemoveTask(name string) error {
	if err := f.dispatcher(); err != nil {
		return err
	}
	_, err := f.core.RemoveTask(app.WindowCaller(), name)
	return err
}

// SetTaskEnabled enables or disables a task; enabling also clears a pause after
// repeated failures.
func (f *Facade) SetTaskEnabled(name string, enabled bool) (TaskRow, error) {
	if err := f.dispatcher(); err != nil {
		return TaskRow{}, err
	}
	return f.core.SetTaskEnabled(app.WindowCaller(), name, enabled)
}

// RunNow starts a run of the task now, in exactly its scheduled context (it may be held
// like any other run).
func (f *Facade) RunNow(name string) (dispatch.Run, error) {
	if err := f.dispatcher(); err != nil {
		return dispatch.Run{}, err
	}
	return f.core.RunTaskNow(app.WindowCaller(), name)
}

// SchedulePreview validates a schedule line and a time zone as the person types: the
// schedule in words and its next five times, or what is wrong and what to write.
func (f *Facade) SchedulePreview(expr, tz string) SchedulePreview {
	return dispatch.Preview(expr, tz, time.Now())
}

// Runs is a page of runs, newest first, filtered by task and status (a state or a
// group: active, waiting, failed).
func (f *Facade) Runs(q RunQuery) (RunPage, error) {
	if err := f.dispatcher(); err != nil {
		return RunPage{}, err
	}
	if q.Limit <= 0 {
		q.Limit = defaultRunPage
	}
	q.Limit = min(q.Limit, maxRunPage)
	return f.core.ListRuns(app.WindowCaller(), q)
}

// Run is one run.
func (f *Facade) Run(id uint) (dispatch.Run, error) {
	if err := f.dispatcher(); err != nil {
		return dispatch.Run{}, err
	}
	return f.core.GetRun(app.WindowCaller(), id)
}

// RunLog reads at most maxBytes (default 256 KiB, at most 1 MiB) of run id's log
// ending at end (end < 0: the end of the file), starting at a line boundary when it
// does not start at the beginning. The window reads the tail once, then appends the
// run.log events; "load earlier" passes the previous piece's Start as end.
func (f *Facade) RunLog(id uint, end int64, maxBytes int) (LogPiece, error) {
	if err := f.dispatcher(); err != nil {
		return LogPiece{}, err
	}
	return f.core.RunLog(app.WindowCaller(), id, api.LogQuery{Tail: true, End: end, Max: maxBytes})
}

// RunNetwork is where run id connected through its egress proxy, per domain.
func (f *Facade) RunNetwork(id uint) (api.RunNetwork, error) {
	if err := f.dispatcher(); err != nil {
		return api.RunNetwork{}, err
	}
	return f.core.RunNetwork(app.WindowCaller(), id)
}

// RunDecisions are the permission decisions of run id's requests, newest first (at
// most maxRunDecisions): what its agent's hook and MCP tools asked, who answered — or
// that it was handed over, expired or found nobody — and whether the call then ran.
// Its connections are RunNetwork's.
func (f *Facade) RunDecisions(id uint) ([]api.AuditRecord, error) {
	recs, err := f.core.Audit(app.WindowCaller(), api.AuditFilter{Run: strconv.FormatUint(uint64(id), 10), Limit: maxRunDecisions})
	if err != nil {
		return nil, err
	}
	out := make([]api.AuditRecord, 0, len(recs))
	for _, r := range recs {
		if r.Tool != api.ToolNetworkDomain {
			out = append(out, r)
		}
	}
	return out, nil
}

// maxRunDecisions bounds the decisions a run's view lists.
const maxRunDecisions = 200

// CancelRun cancels a run (queued, held, running or paused), recorded as by the window.
func (f *Facade) CancelRun(id uint) error {
	if err := f.dispatcher(); err != nil {
		return err
	}
	_, err := f.core.CancelRun(app.WindowCaller(), id)
	return err
}

// ResumeRun resumes a run paused after the same request was denied three times.
func (f *Facade) ResumeRun(id uint) error {
	if err := f.dispatcher(); err != nil {
		return err
	}
	_, err := f.core.ResumeRun(app.WindowCaller(), id)
	return err
}

// formSpec turns the editor's form into the core's task spec.
func formSpec(form TaskForm) (api.TaskSpec, error) {
	spec := api.TaskSpec{
		Name: strings.TrimSpace(form.Name), Argv: form.Argv, Cwd: strings.TrimSpace(form.Cwd),
		Schedule: strings.TrimSpace(form.Schedule), TimeZone: strings.TrimSpace(form.TimeZone),
		Department: strings.TrimSpace(form.Department), Overrides: form.Overrides,
		Env: form.Env, Secrets: form.Secrets, Overlap: form.Overlap, Missed: form.Missed,
		Disabled: form.Disabled,
	}
	if form.Agent != nil {
		a := *form.Agent
		a.Kind, a.Model = strings.TrimSpace(a.Kind), strings.TrimSpace(a.Model)
		a.APIBase, a.APIKeySecret, a.Binary = strings.TrimSpace(a.APIBase), strings.TrimSpace(a.APIKeySecret), strings.TrimSpace(a.Binary)
		spec.Agent, spec.Argv = &a, nil
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
