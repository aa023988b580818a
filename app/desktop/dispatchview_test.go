package desktop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/vartmp"
)

func startedCore(t *testing.T) (*app.Core, *Facade) {
	t.Helper()
	core, _ := openCore(t)
	if _, err := core.Dispatch.Start(context.Background()); err != nil {
		t.Fatalf("start dispatch: %v", err)
	}
	return core, NewFacade(core)
}

func findTask(t *testing.T, f *Facade, name string) TaskRow {
	t.Helper()
	rows, err := f.Tasks()
	if err != nil {
		t.Fatalf("tasks: %v", err)
	}
	for _, r := range rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("task %s is not listed (%d tasks)", name, len(rows))
	return TaskRow{}
}

// The editor's whole round trip through the façade: a department with dangerous
// defaults, a task in it carries the red warning; editing replaces every field
// (clearing env and secrets); disabling and removing are seen by the list.
func TestTaskEditorRoundTrip(t *testing.T) {
	_, f := startedCore(t)
	dir := vartmp.Dir(t, "airlock-dept-")
	never := api.NetworkOff
	if _, err := f.AddDepartment("ops", dir, api.Defaults{SandboxMode: "full-access", ApprovalPolicy: "never", Network: &never}); err != nil {
		t.Fatalf("add department: %v", err)
	}
	form := TaskForm{
		Name: "nightly", Argv: []string{"sh", "-c", "echo hi"}, Cwd: dir, Schedule: "0 2 * * 1-5", TimeZone: "Europe/Madrid",
		Department: "ops", Env: map[string]string{"LEVEL": "3"}, Secrets: []string{"API_TOKEN"}, Timeout: "30m", Overlap: "queue", Missed: "run_once",
	}
	row, err := f.CreateTask(form)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if row.Timeout != 30*time.Minute || row.Overlap != "queue" || row.Missed != "run_once" || !row.Enabled {
		t.Errorf("created row = %+v", row.Task)
	}
	if !strings.Contains(row.Description, "Europe/Madrid") || len(row.NextRuns) != 5 {
		t.Errorf("schedule shown as %q with %d next runs; want words with the zone and 5 times", row.Description, len(row.NextRuns))
	}
	if row.Effective.SandboxMode != "full-access" || row.Effective.ApprovalPolicy != "never" {
		t.Errorf("effective policy = %+v; want the department's full-access + never", row.Effective)
	}
	if len(row.Warnings) != 1 || !strings.Contains(row.Warnings[0], "Full access with approval never") {
		t.Errorf("warnings = %q; want the dangerous-combination line", row.Warnings)
	}

	// A task override that asks first takes the warning away.
	form.Overrides = api.Defaults{ApprovalPolicy: "on-request"}
	form.Env, form.Secrets, form.Timeout = nil, nil, ""
	form.Schedule = "@every 15m"
	form.Disabled = true
	row, err = f.EditTask("nightly", form)
	if err != nil {
		t.Fatalf("edit: %v", err)
	}
	if len(row.Warnings) != 0 || row.Effective.ApprovalPolicy != "on-request" {
		t.Errorf("after override: warnings %q, effective %+v", row.Warnings, row.Effective)
	}
	if len(row.Env) != 0 || len(row.Secrets) != 0 || row.Timeout != 0 || row.Enabled || row.Schedule != "@every 15m" {
		t.Errorf("edit did not replace every field: %+v", row.Task)
	}
	if got := findTask(t, f, "nightly"); got.Enabled {
		t.Error("the list still shows the task enabled")
	}
	if row, err = f.SetTaskEnabled("nightly", true); err != nil || !row.Enabled {
		t.Fatalf("enable = %+v, %v", row.Task, err)
	}
	if err := f.RemoveTask("nightly"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if rows, _ := f.Tasks(); len(rows) != 0 {
		t.Errorf("tasks after remove = %d", len(rows))
	}
}

// Bad input in the editor comes back as the core's error, naming the field and the way out.
func TestTaskEditorErrors(t *testing.T) {
	_, f := startedCore(t)
	dir := vartmp.Dir(t, "airlock-task-")
	good := TaskForm{Name: "ok", Argv: []string{"true"}, Cwd: dir, TimeZone: "UTC"}
	cases := []struct {
		name string
		edit func(*TaskForm)
		want string
	}{
		{"bad cron", func(f *TaskForm) { f.Schedule = "61 * * * *" }, "invalid schedule"},
		{"bad zone", func(f *TaskForm) { f.TimeZone = "Mars/Olympus" }, "unknown time zone"},
		{"no command", func(f *TaskForm) { f.Argv = nil }, "no command"},
		{"relative dir", func(f *TaskForm) { f.Cwd = "code/x" }, "working directory"},
		{"unknown department", func(f *TaskForm) { f.Department = "nope" }, "airlock dept add nope"},
		{"bad timeout", func(f *TaskForm) { f.Timeout = "soon" }, `timeout "soon": give a duration`},
		{"bad mode", func(f *TaskForm) { f.Overrides.SandboxMode = "yolo" }, "unknown sandbox mode"},
		{"bad secret name", func(f *TaskForm) { f.Secrets = []string{"my secret"} }, "secret name"},
		{"bad name", func(f *TaskForm) { f.Name = "has space" }, "task name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			form := good
			c.edit(&form)
			_, err := f.CreateTask(form)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("create = %v; want an error with %q", err, c.want)
			}
		})
	}
	if _, err := f.CreateTask(good); err != nil {
		t.Fatalf("create the good task: %v", err)
	}
	if _, err := f.CreateTask(good); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate = %v", err)
	}
	if _, err := f.EditTask("missing", good); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("edit missing = %v", err)
	}
}

func TestSchedulePreview(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC) // a Monday
	cases := []struct {
		expr, tz string
		valid    bool
		want     string // in the description or the error
	}{
		{"0 2 * * 1-5", "Europe/Madrid", true, "Europe/Madrid"},
		{"@every 15m", "", true, "UTC"},
		{"@daily", "UTC", true, "UTC"},
		{"", "", true, "manual only"},
		{"61 * * * *", "UTC", false, "invalid schedule"},
		{"* * *", "UTC", false, "five fields"},
		{"@every 0s", "UTC", false, "at least 1s"},
		{"0 2 * * *", "Mars/Olympus", false, "unknown time zone"},
		{"TZ=UTC 0 2 * * *", "", false, "time zone separately"},
	}
	for _, c := range cases {
		p := dispatch.Preview(c.expr, c.tz, now)
		if p.Valid != c.valid {
			t.Errorf("%q %q: valid = %v (%+v)", c.expr, c.tz, p.Valid, p)
			continue
		}
		text := p.Description + p.Error
		if !strings.Contains(text, c.want) {
			t.Errorf("%q %q: %q does not say %q", c.expr, c.tz, text, c.want)
		}
		if c.valid && c.expr != "" && len(p.Next) != 5 {
			t.Errorf("%q: %d next times, want 5", c.expr, len(p.Next))
		}
		if p.Next == nil {
			t.Errorf("%q: next is nil (the window expects a list)", c.expr)
		}
	}
	if p := dispatch.Preview("0 2 * * *", "UTC", now); p.Next[0] != "2026-12-01T02:00:00Z" {
		t.Errorf("first next = %v", p.Next[0])
	}
}

// Runs: run-now runs in the department's directory, the page lists them newest first
// with has_more, the status filters work, and the log is read back.
func TestRunsPageAndLog(t *testing.T) {
	core, f := startedCore(t)
	dir := vartmp.Dir(t, "airlock-runs-")
	if _, err := f.AddDepartment("work", dir, api.Defaults{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateTask(TaskForm{Name: "echo", Argv: []string{"sh", "-c", "echo line-one; echo line-two"}, Cwd: dir, Department: "work", Overlap: "allow"}); err != nil {
		t.Fatalf("create: %v", err)
	}
	var ids []uint
	for range 3 {
		r, err := f.RunNow("echo")
		if err != nil {
			t.Fatalf("run now: %v", err)
		}
		ids = append(ids, r.ID)
	}
	for _, id := range ids {
		waitFor(t, fmt.Sprintf("run %d to finish", id), func() bool {
			r, err := f.Run(id)
			return err == nil && dispatch.Finished(r.Status)
		})
	}
	page, err := f.Runs(RunQuery{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 2 || !page.HasMore || page.Runs[0].ID != ids[2] || page.Runs[1].ID != ids[1] {
		t.Fatalf("first page = %+v", page)
	}
	page, _ = f.Runs(RunQuery{Offset: 2, Limit: 2})
	if len(page.Runs) != 1 || page.HasMore || page.Runs[0].ID != ids[0] {
		t.Fatalf("second page = %+v", page)
	}
	if p, _ := f.Runs(RunQuery{Status: "succeeded", Task: "echo"}); len(p.Runs) != 3 {
		r, _ := f.Run(ids[0])
		t.Fatalf("succeeded runs = %d; first run %+v", len(p.Runs), r)
	}
	if p, _ := f.Runs(RunQuery{Status: "failed"}); len(p.Runs) != 0 {
		t.Errorf("failed runs = %d", len(p.Runs))
	}
	if _, err := f.Runs(RunQuery{Task: "nope"}); err == nil {
		t.Error("runs of a missing task: no error")
	}
	piece, err := f.RunLog(ids[0], -1, 0)
	if err != nil || !strings.Contains(piece.Data, "line-one\nline-two") || piece.End != piece.Size || piece.Start != 0 {
		t.Fatalf("log = %+v, %v", piece, err)
	}
	row := findTask(t, f, "echo")
	if row.LastRun == nil || row.LastRun.ID != ids[2] {
		t.Errorf("last run = %+v; want run %d", row.LastRun, ids[2])
	}
	deps, err := f.Departments()
	if err != nil || len(deps) != 1 || len(deps[0].Tasks) != 1 || deps[0].Tasks[0] != "echo" {
		t.Errorf("departments = %+v, %v", deps, err)
	}
	_ = core
}

// A run outside known places is held; cancelling it from the run view records it.
func TestCancelAndResumeFromTheRunView(t *testing.T) {
	_, f := startedCore(t)
	dir := vartmp.Dir(t, "airlock-held-")
	if _, err := f.CreateTask(TaskForm{Name: "held", Argv: []string{"true"}, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	r, err := f.RunNow("held")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to be held", func() bool {
		r, _ = f.Run(r.ID)
		return r.Status == dispatch.StatusWaitingDirectory
	})
	if p, _ := f.Runs(RunQuery{Status: "waiting"}); len(p.Runs) != 1 {
		t.Errorf("waiting runs = %+v", p.Runs)
	}
	piece, err := f.RunLog(r.ID, -1, 0)
	if err != nil || piece.Missing == "" {
		t.Errorf("log of a run that never started = %+v, %v; want it said missing", piece, err)
	}
	if err := f.ResumeRun(r.ID); err == nil {
		t.Error("resuming a held (not paused) run succeeded")
	}
	if err := f.CancelRun(r.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if r, _ = f.Run(r.ID); r.Status != dispatch.StatusCancelled {
		t.Errorf("status = %s", r.Status)
	}
}

func TestParseFormDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"", 0, false}, {"0", 0, false}, {" 30m ", 30 * time.Minute, false}, {"1h30m", 90 * time.Minute, false},
		{"soon", 0, true}, {"-5m", 0, true}, {"10", 0, true},
	}
	for _, c := range cases {
		got, err := parseFormDuration("timeout", c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("%q = %v, %v", c.in, got, err)
		}
	}
}

func FuzzParseFormDuration(f *testing.F) {
	for _, s := range []string{"", "30m", "1h30m", "-1s", "9999999999h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseFormDuration("timeout", s)
		if err == nil && d < 0 {
			t.Fatalf("%q gave a negative duration %v", s, d)
		}
	})
}

// seedRuns stores n finished runs of one task directly, as months of a nightly task leave.
func seedRuns(b testing.TB, core *app.Core, f *Facade, n int) {
	b.Helper()
	dir := vartmp.Dir(b, "airlock-bench-")
	if _, err := f.CreateTask(TaskForm{Name: "nightly", Argv: []string{"true"}, Cwd: dir, Schedule: "@daily"}); err != nil {
		b.Fatal(err)
	}
	task, _ := core.Dispatch.Task(context.Background(), "nightly")
	start := time.Date(2024, 1, 1, 2, 0, 0, 0, time.UTC)
	runs := make([]dispatch.Run, n)
	for i := range runs {
		at := start.Add(time.Duration(i) * 24 * time.Hour)
		code := i % 7
		runs[i] = dispatch.Run{TaskID: task.ID, TaskName: task.Name, ScheduledAt: at, Trigger: dispatch.TriggerSchedule,
			Status: map[bool]string{true: dispatch.StatusSucceeded, false: dispatch.StatusFailed}[code != 0], Cwd: dir,
			StartedAt: &at, FinishedAt: &at, ExitCode: &code, Policy: dispatch.DefaultPolicy()}
	}
	if err := core.DB.CreateInBatches(runs, 200).Error; err != nil {
		b.Fatal(err)
	}
}

// Listing 1,000 runs a page at a time: the window's Runs view (50 rows) and a wide page.
func BenchmarkRunsPage(b *testing.B) {
	core, _ := openCore(b)
	f := NewFacade(core)
	seedRuns(b, core, f, 1000)
	for _, c := range []struct {
		name   string
		q      RunQuery
		expect int
	}{
		{"first-50", RunQuery{Limit: 50}, 50},
		{"last-50-of-1000", RunQuery{Offset: 950, Limit: 50}, 50},
		{"failed-50", RunQuery{Status: "failed", Limit: 50}, 50},
		{"200", RunQuery{Limit: 200}, 200},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				p, err := f.Runs(c.q)
				if err != nil || len(p.Runs) != c.expect {
					b.Fatalf("%d runs, %v", len(p.Runs), err)
				}
			}
		})
	}
	b.Run("tasks-with-last-run", func(b *testing.B) {
		for b.Loop() {
			if rows, err := f.Tasks(); err != nil || len(rows) != 1 {
				b.Fatal(err)
			}
		}
	})
}

// A run paused after the same request was denied three times is listed as waiting and
// resumed from the run view; it then finishes.
func TestResumePausedRunFromTheRunView(t *testing.T) {
	core, f := startedCore(t)
	dir := vartmp.Dir(t, "airlock-pause-")
	if _, err := f.AddDepartment("p", dir, api.Defaults{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateTask(TaskForm{Name: "waits", Argv: []string{"sh", "-c", "while [ ! -e go ]; do sleep 0.05; done; echo done"}, Cwd: dir, Department: "p"}); err != nil {
		t.Fatal(err)
	}
	r, err := f.RunNow("waits")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to start", func() bool {
		r, _ = f.Run(r.ID)
		return r.Status == dispatch.StatusRunning
	})
	if err := f.ResumeRun(r.ID); err == nil {
		t.Error("resuming a run that is not paused succeeded")
	}
	for range 3 {
		if _, err := core.Dispatch.RecordDenial(context.Background(), r.ID, "write /etc/hosts"); err != nil {
			t.Fatal(err)
		}
	}
	if r, _ = f.Run(r.ID); !r.Paused {
		t.Fatalf("run after three denials = %+v; want paused", r)
	}
	if p, _ := f.Runs(RunQuery{Status: "waiting"}); len(p.Runs) != 1 || p.Runs[0].ID != r.ID {
		t.Errorf("waiting runs = %+v; want the paused run", p.Runs)
	}
	if err := f.ResumeRun(r.ID); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if r, _ = f.Run(r.ID); r.Paused {
		t.Error("still paused after resume")
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to finish", func() bool {
		r, _ = f.Run(r.ID)
		return dispatch.Finished(r.Status)
	})
	if r.Status != dispatch.StatusSucceeded {
		t.Errorf("status = %s (%s)", r.Status, r.Reason)
	}
	piece, _ := f.RunLog(r.ID, -1, 0)
	if !strings.Contains(piece.Data, "done") {
		t.Errorf("log = %q", piece.Data)
	}
}

// The editor's agent choice makes an agent task (its prompt stored, the API's defaults
// filled in), an edit back to a command makes it a command task again, and a bad API
// base is the core's error naming it.
func TestTaskEditorAgentTask(t *testing.T) {
	_, f := startedCore(t)
	dir := vartmp.Dir(t, "airlock-agent-")
	form := TaskForm{Name: "tidy", Cwd: dir, Agent: &api.AgentSpec{Kind: "codex", Prompt: "Tidy the build.", Model: " m1 "}}
	row, err := f.CreateTask(form)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if a := row.Agent; a == nil || a.Kind != "codex" || a.Model != "m1" || a.APIBase != "https://api.openai.com/v1" || a.APIKeySecret != "OPENAI_API_KEY" || a.Prompt != "Tidy the build." {
		t.Fatalf("created agent = %+v", row.Agent)
	}
	if len(row.Argv) != 1 || row.Argv[0] != "codex" {
		t.Errorf("an agent task's command = %q, want the agent's name", row.Argv)
	}
	form.Agent.Prompt = "Tidy it again."
	if row, err = f.EditTask("tidy", form); err != nil || row.Agent == nil || row.Agent.Prompt != "Tidy it again." {
		t.Fatalf("edit the prompt = %+v, %v", row.Agent, err)
	}
	form.Agent.APIBase = "api.openai.com"
	if _, err := f.EditTask("tidy", form); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("a bad API base: %v", err)
	}
	form.Agent, form.Argv = nil, []string{"true"}
	if row, err = f.EditTask("tidy", form); err != nil || row.Agent != nil || row.Argv[0] != "true" {
		t.Fatalf("back to a command = %+v %q, %v", row.Agent, row.Argv, err)
	}
}

// The run view's decisions are the audit rows of that run's requests only, with who
// answered and what the call's outcome was.
func TestRunDecisionsFromTheRunView(t *testing.T) {
	core, f := startedCore(t)
	ctx := context.Background()
	dir := vartmp.Dir(t, "airlock-decisions-")
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	for _, run := range []string{"7", "8"} {
		req := api.Request{Tool: api.ToolReadFile, Params: []byte(`{"path":"` + filepath.Join(dir, "a") + `"}`), CallID: "c" + run,
			Context: api.Context{Run: run, Cwd: dir}, Timeout: time.Second}
		d, err := core.Broker.Await(ctx, req)
		if err != nil || d.Verdict != api.Allow {
			t.Fatalf("run %s: %+v, %v", run, d, err)
		}
		core.Broker.AfterToolUse(ctx, req, d, api.Outcome{Ran: true})
	}
	got, err := f.RunDecisions(7)
	if err != nil || len(got) != 1 || got[0].Run != "7" || got[0].Ran != api.OutcomeRan || got[0].Tool != api.ToolReadFile {
		t.Fatalf("decisions of run 7 = %+v, %v", got, err)
	}
}
