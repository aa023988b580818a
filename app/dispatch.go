package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/dispatch/brokerapprovals"
	"github.com/airlock-app/airlock/dispatch/sandboxexec"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
)

// registeringExecutor records each run's sandbox pid for as long as it runs, so the
// local API refuses requests from inside it.
type registeringExecutor struct {
	core  *Core
	inner dispatch.Executor
}

func (r registeringExecutor) Exec(ctx context.Context, spec dispatch.ExecSpec) (dispatch.ExecResult, error) {
	onStart, done := r.core.trackSandboxes(spec.OnStart)
	defer done()
	spec.OnStart = onStart
	return r.inner.Exec(ctx, spec)
}

func (c *Core) openDispatch(ctx context.Context) error {
	st := c.Config.State()
	depts, err := departments.New(c.DB, departments.Options{
		WorkspaceRoots: workspaceRoots(st.File), HomeDir: c.getenv("HOME"), Publisher: c.Bus,
	})
	if err != nil {
		return fmt.Errorf("departments: %w", err)
	}
	c.Departments = depts
	approvals := brokerapprovals.New(c.Broker)
	exec := sandboxexec.New(sandboxexec.Options{
		Policy: c.runPolicy, Home: c.getenv("HOME"),
		MicroVM: c.MicroVM, OnRoute: c.auditRoute,
		MicroVMReady: func() error { _, err := c.VMPool(); return err },
		Egress:       c.runEgress,
		Ask:          c.runAsk,
	})
	opts := dispatch.Options{
		DB: c.DB, Departments: depts, Executor: registeringExecutor{core: c, inner: exec},
		Approvals: approvals, Pending: approvals, Router: exec, Secrets: c.Secrets, Publisher: digestTap{c},
		LogDir: c.Paths.RunLogs, Defaults: c.DispatchPolicy, Profile: c.Profile,
		AgentDir: c.Paths.AgentRuns, Airlock: c.airlockCLI, RemoveWithRuns: removeConnections,
		// Open holds the database's lock: a run this core does not run is dead.
		Exclusive: true,
	}
	if n := st.File.Dispatch.Concurrency; n != nil {
		opts.Concurrency = *n
	}
	if v := st.File.Dispatch.RunLogCap; v != nil {
		opts.LogLimit, _ = config.ParseSize(*v)
	}
	if v := st.File.Dispatch.LogMaxTotal; v != nil {
		opts.LogMaxTotal, _ = config.ParseSize(*v)
	}
	if v := st.File.Dispatch.LogMaxAge; v != nil {
		opts.LogMaxAge, _ = time.ParseDuration(*v)
	}
	if v := st.File.Dispatch.RunMaxAge; v != nil {
		opts.RunMaxAge, _ = time.ParseDuration(*v)
	}
	if n := st.File.Dispatch.RunMaxCount; n != nil {
		opts.RunMaxCount = *n
	}
	if n := st.File.Dispatch.MaxBacklog; n != nil {
		opts.MaxBacklog = *n
	}
	d, err := dispatch.New(opts)
	if err != nil {
		return fmt.Errorf("dispatch: %w", err)
	}
	c.Dispatch = d
	return nil
}

// EnvAirlockCLI names the airlock executable agent tasks' hooks and MCP servers run,
// where the one beside this executable is not the one to use (a test's copy the
// sandbox can see).
const EnvAirlockCLI = "AIRLOCK_CLI"

// airlockCLI is the airlock executable an agent task's hook and MCP server run: $AIRLOCK_CLI,
// else the one installed beside this executable, else airlock in PATH ("": none).
func (c *Core) airlockCLI() string {
	if p := c.getenv(EnvAirlockCLI); p != "" {
		return p
	}
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		if p, err := exec.LookPath(filepath.Join(filepath.Dir(self), "airlock")); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("airlock"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return ""
}

func workspaceRoots(f config.File) []string {
	if f.Workspace.Roots != nil {
		return f.Workspace.Roots
	}
	return config.Defaults["workspace.roots"].([]string)
}

// startDispatch recovers what happened while Airlock was closed and starts the
// scheduler and the department watch.
func (c *Core) startDispatch(ctx context.Context) error {
	digest, err := c.Dispatch.Start(ctx)
	if err != nil {
		return fmt.Errorf("start dispatch: %w", err)
	}
	slog.Info("dispatch started", "digest", digest)
	go func() {
		if err := c.Departments.Watch(ctx, 0); err != nil && !errors.Is(err, context.Canceled) {
			slog.Error("watching department directories stopped", "error", err)
		}
	}()
	return nil
}

// Operations of dispatch and departments. Each is written once, as a method of the core
// with its Caller, and called by the local API's route (dispatchRoutes) and by the
// window's façade (app/desktop). The person-proof checks (a widening, a new known place,
// authorizing a directory) apply to API callers; a click in the window is a person.

// Window calls bound their own time (Caller.Context is a background one for the window).
const (
	// windowDBTimeout bounds a window action that reads or writes the database.
	windowDBTimeout = 10 * time.Second
	// windowQuickTimeout bounds what the window shows at once (the inbox, the footer).
	windowQuickTimeout = 3 * time.Second
)

// opContext is the operation's context: the request's, or for the window a background
// one bounded by timeout.
func opContext(cl Caller, timeout time.Duration) (context.Context, context.CancelFunc) {
	if cl.r != nil {
		return cl.r.Context(), func() {}
	}
	return context.WithTimeout(cl.Context(), timeout)
}

// actor is who dispatch records as having paused, cancelled or revoked: the window, or
// the CLI (any local API caller).
func actor(cl Caller) string {
	if cl.window {
		return "window"
	}
	return "cli"
}

// errNoDispatch says dispatch is not running in this core.
var errNoDispatch = api.Errorf(http.StatusServiceUnavailable, api.CodeUnavailable,
	"dispatch is not running in this Airlock", "restart Airlock")

func (c *Core) dispatcher() (*dispatch.Dispatcher, error) {
	if c.Dispatch == nil {
		return nil, errNoDispatch
	}
	return c.Dispatch, nil
}

func (c *Core) departments() (*departments.Service, error) {
	if c.Departments == nil {
		return nil, errNoDispatch
	}
	return c.Departments, nil
}

// departmentDefaults are the defaults of department name (nil: none, or not found —
// the task is then refused or held by dispatch).
func (c *Core) departmentDefaults(ctx context.Context, name string) *departments.Defaults {
	if name == "" || c.Departments == nil {
		return nil
	}
	dep, err := c.Departments.Get(ctx, name)
	if err != nil {
		return nil
	}
	return &dep.Defaults
}

// requirePersonFor is requirePerson for a caller: the window is a person; an API caller
// proves one when what widens access.
func (c *Core) requirePersonFor(cl Caller, p api.Proof, what []string, subject, cli string) error {
	if cl.window || len(what) == 0 {
		return nil
	}
	if cl.r == nil {
		return c.needPerson(subject+" with "+strings.Join(what, " and "), cli)
	}
	return c.requirePerson(cl.r, p, what, subject, cli)
}

// ListTasks lists every task by name with its schedule in words, next five runs,
// effective policy, warnings and last run.
func (c *Core) ListTasks(cl Caller) ([]api.TaskRow, error) {
	d, err := c.dispatcher()
	if err != nil {
		return nil, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	tasks, err := d.Tasks(ctx)
	if err != nil {
		return nil, err
	}
	depts, base := c.departmentIndex(ctx), c.DispatchPolicy("")
	out := make([]api.TaskRow, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, c.taskRow(ctx, d, t, depts, base))
	}
	return out, nil
}

// GetTask is one task, by name or id.
func (c *Core) GetTask(cl Caller, name string) (api.TaskRow, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.TaskRow{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	t, err := d.Task(ctx, name)
	if err != nil {
		return api.TaskRow{}, err
	}
	return c.singleRow(ctx, d, t), nil
}

// CreateTask creates a task. Creating it approves its command for every run: one that
// widens access (full-access, approval never) is the person's act, proven as an answer is.
func (c *Core) CreateTask(cl Caller, in api.TaskIn) (api.TaskRow, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.TaskRow{}, err
	}
	if err := c.checkProfile(in.Overrides); err != nil {
		return api.TaskRow{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	if !cl.window {
		if err := c.requirePersonFor(cl, in.Proof, c.widening(c.departmentDefaults(ctx, in.Department), in.Overrides), "a task", "airlock task add --name "+in.Name+" …"); err != nil {
			return api.TaskRow{}, err
		}
	}
	t, err := d.CreateTask(ctx, in.TaskSpec)
	if err != nil {
		return api.TaskRow{}, err
	}
	return c.singleRow(ctx, d, t), nil
}

// EditTask changes the fields of task name that the patch sets. A new command (or
// directory) under a task that already runs with full access or approval never is a new
// approval of that access.
func (c *Core) EditTask(cl Caller, name string, in api.TaskPatchIn) (api.TaskRow, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.TaskRow{}, err
	}
	if in.Overrides != nil {
		if err := c.checkProfile(*in.Overrides); err != nil {
			return api.TaskRow{}, err
		}
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	if !cl.window {
		// The task as it would be: its overrides over its department's defaults. A new
		// command (or directory, or agent) under what widens is a new approval of it.
		var widens []string
		if cur, err := d.Task(ctx, name); err == nil {
			dept, ov := cur.Department, cur.Overrides
			if in.Department != nil {
				dept = *in.Department
			}
			if in.Overrides != nil {
				ov = *in.Overrides
			}
			if in.Overrides != nil || in.Department != nil || in.Argv != nil || in.Cwd != nil || in.Agent != nil {
				widens = c.widening(c.departmentDefaults(ctx, dept), ov)
			}
		}
		if err := c.requirePersonFor(cl, in.Proof, widens, "a task", "airlock task edit "+name+" …"); err != nil {
			return api.TaskRow{}, err
		}
	}
	t, err := d.EditTask(ctx, name, in.TaskPatch)
	if err != nil {
		return api.TaskRow{}, err
	}
	return c.singleRow(ctx, d, t), nil
}

// RemoveTask removes a task and cancels its open runs; its run records stay.
func (c *Core) RemoveTask(cl Caller, name string) (api.Removed, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.Removed{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	if err := d.RemoveTask(ctx, name); err != nil {
		return api.Removed{}, err
	}
	// A task made later under this name is another task: "for this task" was not said of it.
	if _, err := c.Broker.Grants().RevokeTask(ctx, name); err != nil {
		slog.Error("revoke the grants of a removed task", "task", name, "err", err)
	}
	return api.Removed{Removed: name}, nil
}

// SetTaskEnabled enables or disables a task; enabling also clears a pause after
// repeated failures.
func (c *Core) SetTaskEnabled(cl Caller, name string, enabled bool) (api.TaskRow, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.TaskRow{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	t, err := d.SetEnabled(ctx, name, enabled)
	if err != nil {
		return api.TaskRow{}, err
	}
	return c.singleRow(ctx, d, t), nil
}

// RunTaskNow starts a run of the task now, in exactly its scheduled context (it may be
// held like any other run).
func (c *Core) RunTaskNow(cl Caller, name string) (api.Run, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.Run{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	return d.RunNow(ctx, name)
}

// PreviewSchedule is a schedule line and a time zone in words with the next five fire
// times, or what is wrong and what to write.
func (c *Core) PreviewSchedule(q api.ScheduleQuery) api.SchedulePreview {
	return dispatch.Preview(q.Schedule, q.TimeZone, time.Now())
}

// runGroups are the RunQuery.Status groups.
var runGroups = map[string][]string{
	"active": {dispatch.StatusQueued, dispatch.StatusRunning},
	"failed": {dispatch.StatusFailed, dispatch.StatusTimedOut, dispatch.StatusDenied, dispatch.StatusInterrupted, dispatch.StatusExpired},
}

// ListRuns is a page of runs, newest first, filtered by task and status.
func (c *Core) ListRuns(cl Caller, q api.RunQuery) (api.RunPage, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.RunPage{}, err
	}
	if q.Limit <= 0 {
		q.Limit = 100
	}
	q.Offset = max(q.Offset, 0)
	filter := dispatch.RunFilter{Task: q.Task, Waiting: q.Waiting}
	for _, s := range strings.Split(q.Status, ",") {
		switch s = strings.TrimSpace(s); {
		case s == "":
		case s == "waiting":
			filter.Waiting = true
		case runGroups[s] != nil:
			filter.Statuses = append(filter.Statuses, runGroups[s]...)
		default:
			filter.Statuses = append(filter.Statuses, s)
		}
	}
	// One more than the page says whether older runs follow.
	filter.Offset, filter.Limit = q.Offset, q.Limit+1
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	runs, err := d.Runs(ctx, filter)
	if err != nil {
		return api.RunPage{}, err
	}
	page := api.RunPage{Runs: runs[:min(len(runs), q.Limit)], Offset: q.Offset, HasMore: len(runs) > q.Limit}
	if page.Runs == nil {
		page.Runs = []api.Run{}
	}
	return page, nil
}

// GetRun is one run.
func (c *Core) GetRun(cl Caller, id uint) (api.Run, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.Run{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	return d.Run(ctx, id)
}

// RunLog reads a piece of run id's log (dispatch.ReadLogPiece says which): the CLI
// follows it forward, the window reads its tail and then earlier pieces.
func (c *Core) RunLog(cl Caller, id uint, q api.LogQuery) (api.LogPiece, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.LogPiece{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	return d.Log(ctx, id, q)
}

// CancelRun cancels a run (queued, held, running or paused), recorded as by the caller.
func (c *Core) CancelRun(cl Caller, id uint) (api.RunCancelled, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.RunCancelled{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	if err := d.Cancel(ctx, id, actor(cl)); err != nil {
		return api.RunCancelled{}, err
	}
	return api.RunCancelled{Cancelled: id}, nil
}

// ResumeRun resumes a run paused after the same request was denied three times.
func (c *Core) ResumeRun(cl Caller, id uint) (api.RunResumed, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.RunResumed{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	if err := d.Resume(ctx, id); err != nil {
		return api.RunResumed{}, err
	}
	return api.RunResumed{Resumed: id}, nil
}

// DispatchState says whether scheduled runs start on their own, with the number of
// scheduled tasks and running runs (nothing when dispatch is not running).
func (c *Core) DispatchState() api.DispatchState {
	if c.Dispatch == nil {
		return api.DispatchState{}
	}
	return c.Dispatch.State()
}

// SetDispatchPaused pauses (true) or resumes (false) dispatch: pausing stops scheduled
// runs from starting on their own.
func (c *Core) SetDispatchPaused(cl Caller, paused bool) (api.DispatchState, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.DispatchState{}, err
	}
	ctx, cancel := opContext(cl, windowQuickTimeout)
	defer cancel()
	return d.SetPaused(ctx, paused, actor(cl))
}

// AuthorizeDir records a directory as a place the person authorized and releases every
// run held on it or below it. Authorizing widens what runs may write: it is a person's
// act, so over the API it needs a caller at a terminal who typed the directory's name.
// `/`, the home directory and its ancestors need ConfirmHome
// (*departments.ConfirmationRequiredError).
func (c *Core) AuthorizeDir(cl Caller, in api.AuthorizeIn) (api.Authorization, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.Authorization{}, err
	}
	by := permission.ByWindow
	if !cl.window {
		if in.Confirmation != filepath.Base(filepath.Clean(in.Dir)) && in.Confirmation != filepath.Clean(in.Dir) {
			return api.Authorization{}, api.Errorf(http.StatusForbidden, api.CodeNotConfirmed,
				"the typed confirmation does not name the directory", "type the directory's name when `airlock authorize` asks")
		}
		proof := api.Proof{Password: in.Password}
		if in.Password == "" {
			proof.Confirmation = in.Confirmation // terminal_proof = "tty"
		}
		if by, err = c.who(APICaller(cl.r, proof), nil); err != nil { // the name was checked above
			return api.Authorization{}, err
		}
		if !permission.ByPerson(by) {
			return api.Authorization{}, c.needPerson("authorizing a directory", "airlock authorize "+in.Dir)
		}
	}
	ctx, cancel := opContext(cl, windowQuickTimeout)
	defer cancel()
	return d.Authorize(ctx, in.Dir, by, in.ConfirmHome)
}

// ListPlaces lists every known place: workspace roots, department directories and
// authorized places.
func (c *Core) ListPlaces(cl Caller) ([]api.KnownPlace, error) {
	s, err := c.departments()
	if err != nil {
		return nil, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	return s.AllKnown(ctx)
}

// RevokePlace withdraws an authorized place; future runs there are held again.
func (c *Core) RevokePlace(cl Caller, in api.PlaceIn) (api.AuthorizedPlace, error) {
	d, err := c.dispatcher()
	if err != nil {
		return api.AuthorizedPlace{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	return d.Revoke(ctx, in.Dir, actor(cl))
}

// Inbox is "Waiting for you": held runs grouped by directory, paused runs and tasks,
// and pending approvals, most urgent first.
func (c *Core) Inbox(cl Caller) ([]api.InboxItem, error) {
	d, err := c.dispatcher()
	if err != nil {
		return nil, err
	}
	ctx, cancel := opContext(cl, windowQuickTimeout)
	defer cancel()
	items, err := d.Inbox(ctx)
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []api.InboxItem{}
	}
	return items, nil
}

// ListDepartments lists the departments by name with their defaults, whether their
// directory is there, and their tasks.
func (c *Core) ListDepartments(cl Caller) ([]api.DepartmentRow, error) {
	s, err := c.departments()
	if err != nil {
		return nil, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	list, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	byDept := map[string][]string{}
	if c.Dispatch != nil {
		tasks, err := c.Dispatch.Tasks(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range tasks {
			if t.Department != "" {
				byDept[t.Department] = append(byDept[t.Department], t.Name)
			}
		}
	}
	out := make([]api.DepartmentRow, 0, len(list))
	for _, d := range list {
		tasks := byDept[d.Name]
		if tasks == nil {
			tasks = []string{}
		}
		out = append(out, api.DepartmentRow{Department: d, Tasks: tasks})
	}
	return out, nil
}

// AddDepartment names a directory (which must exist; ~ is expanded) as a department
// with defaults. Its directory becomes a known place, where runs start without being
// held: over the API, a new one is the person's to decide, as authorizing it is, and so
// are defaults that widen access.
func (c *Core) AddDepartment(cl Caller, in api.DepartmentIn) (api.Department, error) {
	s, err := c.departments()
	if err != nil {
		return api.Department{}, err
	}
	if err := c.checkProfile(in.Defaults); err != nil {
		return api.Department{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	if !cl.window {
		what := c.widening(nil, in.Defaults)
		if k, err := s.Known(ctx, in.Dir); err == nil && !k.Known {
			what = append(what, "a new known place ("+k.Path+")")
		}
		if err := c.requirePersonFor(cl, in.Proof, what, "a department", "airlock dept add "+in.Name+" DIR …"); err != nil {
			return api.Department{}, err
		}
	}
	return s.Add(ctx, in.Name, in.Dir, in.Defaults)
}

// GetDepartment is one department.
func (c *Core) GetDepartment(cl Caller, name string) (api.Department, error) {
	s, err := c.departments()
	if err != nil {
		return api.Department{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	return s.Get(ctx, name)
}

// SetDepartmentDefaults replaces a department's defaults; runs started from then on use
// them (a running run keeps the policy it started with).
func (c *Core) SetDepartmentDefaults(cl Caller, name string, in api.DefaultsIn) (api.Department, error) {
	s, err := c.departments()
	if err != nil {
		return api.Department{}, err
	}
	if err := c.checkProfile(in.Defaults); err != nil {
		return api.Department{}, err
	}
	if err := c.requirePersonFor(cl, in.Proof, c.widening(nil, in.Defaults), "department defaults", "airlock dept set "+name+" …"); err != nil {
		return api.Department{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	return s.SetDefaults(ctx, name, in.Defaults)
}

// RemoveDepartment removes a department (its directory is left alone). Its tasks stay;
// their runs wait until it is re-created or they are edited.
func (c *Core) RemoveDepartment(cl Caller, name string) (api.Removed, error) {
	s, err := c.departments()
	if err != nil {
		return api.Removed{}, err
	}
	ctx, cancel := opContext(cl, windowDBTimeout)
	defer cancel()
	if err := s.Remove(ctx, name); err != nil {
		return api.Removed{}, err
	}
	return api.Removed{Removed: name}, nil
}

func (c *Core) departmentIndex(ctx context.Context) map[string]departments.Department {
	out := map[string]departments.Department{}
	if c.Departments == nil {
		return out
	}
	list, err := c.Departments.List(ctx)
	if err != nil {
		return out
	}
	for _, d := range list {
		out[d.Name] = d
	}
	return out
}

// singleRow is taskRow for one task (it reads the departments and the base policy itself).
func (c *Core) singleRow(ctx context.Context, d *dispatch.Dispatcher, t dispatch.Task) api.TaskRow {
	return c.taskRow(ctx, d, t, c.departmentIndex(ctx), c.DispatchPolicy(""))
}

func (c *Core) taskRow(ctx context.Context, d *dispatch.Dispatcher, t dispatch.Task, depts map[string]departments.Department, base dispatch.Policy) api.TaskRow {
	row := d.View(t, 5)
	eff := base
	dept, hasDept := depts[t.Department]
	if hasDept {
		eff, _ = dispatch.ApplyDefaults(eff, dept.Defaults, c.Profile)
	}
	row.Effective, _ = dispatch.ApplyDefaults(eff, t.Overrides, c.Profile)
	row.Warnings = taskWarnings(t, row.Effective, dept, hasDept, c.getenv("HOME"))
	if runs, err := d.Runs(ctx, dispatch.RunFilter{Task: fmt.Sprint(t.ID), Limit: 1}); err == nil && len(runs) == 1 {
		row.LastRun = &runs[0]
	}
	return row
}

// taskWarnings are the red lines of a task: the dangerous combination and a
// home-directory working directory, plus what will hold every run of the task.
func taskWarnings(t dispatch.Task, eff dispatch.Policy, dept departments.Department, hasDept bool, home string) []string {
	mode, _ := sandbox.ParseMode(eff.SandboxMode)
	out := policy.Warnings("every run", mode, eff.ApprovalPolicy, t.Cwd, home)
	switch {
	case t.Department != "" && !hasDept:
		out = append(out, fmt.Sprintf("Department %s no longer exists: every run waits until you re-create it or change the task's department.", t.Department))
	case hasDept && dept.Status != departments.StatusOK:
		out = append(out, fmt.Sprintf("Department %s is missing its directory: every run waits until it is back.", dept.Name))
	}
	return out
}

// runID reads a route's {id}.
func runID(r *http.Request) (uint, error) {
	n, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		return 0, api.Errorf(http.StatusBadRequest, api.CodeBadRequest,
			fmt.Sprintf("run id %q is not a number", r.PathValue("id")), "list runs with `airlock runs list`")
	}
	return uint(n), nil
}

// withRun serves a run's route: the path's {id}, then op.
func withRun[In, Out any](op func(r *http.Request, id uint, in In) (Out, error)) func(*http.Request, In) (Out, error) {
	return func(r *http.Request, in In) (Out, error) {
		id, err := runID(r)
		if err != nil {
			var zero Out
			return zero, err
		}
		return op(r, id, in)
	}
}

func (c *Core) dispatchRoutes() {
	// none is the caller of a route that carries no proof of a person.
	none := func(r *http.Request) Caller { return APICaller(r, api.Proof{}) }
	name := func(r *http.Request) string { return r.PathValue("name") }
	// Departments.
	handle(c, api.ListDepartments, func(r *http.Request, _ api.None) ([]api.DepartmentRow, error) {
		return c.ListDepartments(none(r))
	})
	handle(c, api.AddDepartment, func(r *http.Request, in api.DepartmentIn) (api.Department, error) {
		return c.AddDepartment(APICaller(r, in.Proof), in)
	})
	handle(c, api.GetDepartment, func(r *http.Request, _ api.None) (api.Department, error) {
		return c.GetDepartment(none(r), name(r))
	})
	handle(c, api.SetDepartmentDefaults, func(r *http.Request, in api.DefaultsIn) (api.Department, error) {
		return c.SetDepartmentDefaults(APICaller(r, in.Proof), name(r), in)
	})
	handle(c, api.RemoveDepartment, func(r *http.Request, _ api.None) (api.Removed, error) {
		return c.RemoveDepartment(none(r), name(r))
	})
	// Tasks.
	handle(c, api.ListTasks, func(r *http.Request, _ api.None) ([]api.TaskRow, error) {
		return c.ListTasks(none(r))
	})
	handle(c, api.CreateTask, func(r *http.Request, in api.TaskIn) (api.TaskRow, error) {
		return c.CreateTask(APICaller(r, in.Proof), in)
	})
	handle(c, api.GetTask, func(r *http.Request, _ api.None) (api.TaskRow, error) {
		return c.GetTask(none(r), name(r))
	})
	handle(c, api.EditTask, func(r *http.Request, in api.TaskPatchIn) (api.TaskRow, error) {
		return c.EditTask(APICaller(r, in.Proof), name(r), in)
	})
	handle(c, api.RemoveTask, func(r *http.Request, _ api.None) (api.Removed, error) {
		return c.RemoveTask(none(r), name(r))
	})
	handle(c, api.EnableTask, func(r *http.Request, _ api.None) (api.TaskRow, error) {
		return c.SetTaskEnabled(none(r), name(r), true)
	})
	handle(c, api.DisableTask, func(r *http.Request, _ api.None) (api.TaskRow, error) {
		return c.SetTaskEnabled(none(r), name(r), false)
	})
	handle(c, api.RunTaskNow, func(r *http.Request, _ api.None) (api.Run, error) {
		return c.RunTaskNow(none(r), name(r))
	})
	handle(c, api.PreviewSchedule, func(r *http.Request, q api.ScheduleQuery) (api.SchedulePreview, error) {
		p := c.PreviewSchedule(q)
		if !p.Valid {
			return p, api.Errorf(http.StatusBadRequest, api.CodeInvalid, p.Error, "")
		}
		return p, nil
	})
	// Runs.
	handle(c, api.ListRuns, func(r *http.Request, q api.RunQuery) (api.RunPage, error) {
		return c.ListRuns(none(r), q)
	})
	handle(c, api.GetRun, withRun(func(r *http.Request, id uint, _ api.None) (api.Run, error) {
		return c.GetRun(none(r), id)
	}))
	// A piece of the log at a time, at most 1 MiB: a 2 GB log is read in pieces.
	handle(c, api.RunLog, withRun(func(r *http.Request, id uint, q api.LogQuery) (api.LogPiece, error) {
		return c.RunLog(none(r), id, q)
	}))
	// Where the run connected through its egress proxy, per domain.
	handle(c, api.GetRunNetwork, withRun(func(r *http.Request, id uint, _ api.None) (api.RunNetwork, error) {
		return c.RunNetwork(none(r), id)
	}))
	handle(c, api.CancelRun, withRun(func(r *http.Request, id uint, _ api.None) (api.RunCancelled, error) {
		return c.CancelRun(none(r), id)
	}))
	handle(c, api.ResumeRun, withRun(func(r *http.Request, id uint, _ api.None) (api.RunResumed, error) {
		return c.ResumeRun(none(r), id)
	}))
	// Dispatch as a whole: pausing stops scheduled runs from starting on their own.
	handle(c, api.GetDispatch, func(r *http.Request, _ api.None) (api.DispatchState, error) {
		return c.DispatchState(), nil
	})
	handle(c, api.PauseDispatch, func(r *http.Request, _ api.None) (api.DispatchState, error) {
		return c.SetDispatchPaused(none(r), true)
	})
	handle(c, api.ResumeDispatch, func(r *http.Request, _ api.None) (api.DispatchState, error) {
		return c.SetDispatchPaused(none(r), false)
	})
	// Places.
	handle(c, api.Authorize, func(r *http.Request, in api.AuthorizeIn) (api.Authorization, error) {
		return c.AuthorizeDir(APICaller(r, in.Proof), in)
	})
	handle(c, api.ListPlaces, func(r *http.Request, _ api.None) ([]api.KnownPlace, error) {
		return c.ListPlaces(none(r))
	})
	handle(c, api.RevokePlace, func(r *http.Request, in api.PlaceIn) (api.AuthorizedPlace, error) {
		return c.RevokePlace(none(r), in)
	})
	handle(c, api.Inbox, func(r *http.Request, _ api.None) ([]api.InboxItem, error) {
		return c.Inbox(none(r))
	})
}
