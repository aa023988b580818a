package app

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
)

// Dispatch's and departments' refusals of what the caller asked are 400 invalid, by the
// sentinel they wrap; the message still names the problem and the way out.
func TestDispatchRefusalsAreInvalid(t *testing.T) {
	c, _ := runCore(t)
	cl := localapi.NewClient(c.Paths.Socket)
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, says string
		call       func() error
	}{
		{"a bad task name", "task name", func() error {
			_, err := localapi.Call(ctx, cl, api.CreateTask, api.TaskIn{TaskSpec: api.TaskSpec{Name: "no spaces", Argv: []string{"true"}, Cwd: dir}})
			return err
		}},
		{"a bad schedule", "invalid schedule", func() error {
			_, err := localapi.Call(ctx, cl, api.CreateTask, api.TaskIn{TaskSpec: api.TaskSpec{Name: "s", Argv: []string{"true"}, Cwd: dir, Schedule: "every day"}})
			return err
		}},
		{"an unknown time zone", "unknown time zone", func() error {
			_, err := localapi.Call(ctx, cl, api.CreateTask, api.TaskIn{TaskSpec: api.TaskSpec{Name: "z", Argv: []string{"true"}, Cwd: dir, Schedule: "@daily", TimeZone: "Mars/Olympus"}})
			return err
		}},
		{"an unknown approval policy", "unknown approval policy", func() error {
			_, err := localapi.Call(ctx, cl, api.SetDepartmentDefaults, api.DefaultsIn{Defaults: api.Defaults{ApprovalPolicy: "sometimes"}}, "ops")
			return err
		}},
		{"a schedule preview", "invalid schedule", func() error {
			_, err := localapi.Call(ctx, cl, api.PreviewSchedule, api.ScheduleQuery{Schedule: "every day"})
			return err
		}},
	} {
		err := tc.call()
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Code != api.CodeInvalid || !strings.Contains(ae.Message, tc.says) {
			t.Errorf("%s: %v (%+v), want 400 invalid saying %q", tc.name, err, ae, tc.says)
		}
	}
	_, err := localapi.Call(ctx, cl, api.GetTask, api.None{}, "nothing-here")
	if !errors.Is(err, &api.Error{Code: api.CodeNotFound, Status: http.StatusNotFound}) {
		t.Errorf("an unknown task: %v, want 404 not_found", err)
	}
}

// The run log route reads forward in bounded pieces that join up to the file exactly,
// also where a piece would end inside a character; past the end it reads nothing, and a
// log not written yet or pruned says so.
func TestRunLogRoute(t *testing.T) {
	c, _ := runCore(t)
	cl := localapi.NewClient(c.Paths.Socket)
	ctx := context.Background()
	var b strings.Builder
	for b.Len() < 3<<20 {
		b.WriteString("ünïcödé line of a long log\n")
	}
	path := filepath.Join(t.TempDir(), "run.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	runs := []dispatch.Run{
		{TaskName: "t", ScheduledAt: now, Trigger: dispatch.TriggerManual, Status: dispatch.StatusSucceeded, LogPath: path},
		{TaskName: "t", ScheduledAt: now.Add(time.Second), Trigger: dispatch.TriggerManual, Status: dispatch.StatusRunning, LogPath: path + ".not-yet"},
		{TaskName: "t", ScheduledAt: now.Add(2 * time.Second), Trigger: dispatch.TriggerManual, Status: dispatch.StatusSucceeded, LogPath: path, LogPruned: true},
	}
	for i := range runs {
		if err := c.DB.Create(&runs[i]).Error; err != nil {
			t.Fatal(err)
		}
	}
	id := func(r dispatch.Run) string { return strconv.FormatUint(uint64(r.ID), 10) }

	// As `airlock runs logs` reads it: from each piece's end.
	var got strings.Builder
	var offset int64
	for pieces := 0; pieces < 100; pieces++ {
		p, err := localapi.Call(ctx, cl, api.RunLog, api.LogQuery{Offset: offset}, id(runs[0]))
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(p.Data)) > dispatch.MaxLogPiece || p.Start != offset {
			t.Fatalf("piece from %d: [%d, %d), %d bytes", offset, p.Start, p.End, len(p.Data))
		}
		got.WriteString(p.Data)
		offset = p.End
		if p.End >= p.Size {
			break
		}
	}
	if got.String() != b.String() {
		t.Error("the pieces of the log do not join up to the file")
	}
	past, err := localapi.Call(ctx, cl, api.RunLog, api.LogQuery{Offset: 1 << 40}, id(runs[0]))
	if err != nil || past.Data != "" || past.Start != int64(b.Len()) || past.End != past.Start {
		t.Errorf("past the end: %+v, %v", past, err)
	}
	notYet, err := localapi.Call(ctx, cl, api.RunLog, api.LogQuery{}, id(runs[1]))
	if err != nil || notYet.Data != "" || notYet.Size != 0 || notYet.Missing != "" {
		t.Errorf("a log not written yet: %+v, %v", notYet, err)
	}
	pruned, err := localapi.Call(ctx, cl, api.RunLog, api.LogQuery{}, id(runs[2]))
	if err != nil || !pruned.Pruned || !strings.Contains(pruned.Missing, "pruned") {
		t.Errorf("a pruned log: %+v, %v", pruned, err)
	}
	// A run id that is no number is the caller's mistake.
	if _, err := localapi.Call(ctx, cl, api.RunLog, api.LogQuery{}, "seven"); !errors.Is(err, &api.Error{Code: api.CodeBadRequest}) {
		t.Errorf("run id seven: %v, want bad_request", err)
	}
}

// The runs route pages like the window: states, groups and held runs select, newest
// first, and has_more says that older runs follow.
func TestListRunsRoute(t *testing.T) {
	c, _ := runCore(t)
	cl := localapi.NewClient(c.Paths.Socket)
	ctx := context.Background()
	now := time.Now()
	for i, st := range []string{dispatch.StatusSucceeded, dispatch.StatusFailed, dispatch.StatusWaitingDirectory, dispatch.StatusRunning, dispatch.StatusTimedOut} {
		r := dispatch.Run{TaskName: "t", ScheduledAt: now.Add(time.Duration(i) * time.Second), Trigger: dispatch.TriggerManual, Status: st}
		if err := c.DB.Create(&r).Error; err != nil {
			t.Fatal(err)
		}
	}
	statuses := func(p api.RunPage) string {
		var out []string
		for _, r := range p.Runs {
			out = append(out, r.Status)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		q    api.RunQuery
		want string
		more bool
	}{
		{api.RunQuery{}, "timed_out running waiting_directory failed succeeded", false},
		{api.RunQuery{Status: "failed"}, "timed_out failed", false},
		{api.RunQuery{Status: "succeeded,running"}, "running succeeded", false},
		{api.RunQuery{Status: "waiting"}, "waiting_directory", false},
		{api.RunQuery{Waiting: true}, "waiting_directory", false},
		{api.RunQuery{Limit: 2}, "timed_out running", true},
		{api.RunQuery{Limit: 2, Offset: 4}, "succeeded", false},
	} {
		page, err := localapi.Call(ctx, cl, api.ListRuns, tc.q)
		if err != nil || statuses(page) != tc.want || page.HasMore != tc.more || page.Offset != tc.q.Offset {
			t.Errorf("%+v: %q more %v offset %d (%v), want %q more %v", tc.q, statuses(page), page.HasMore, page.Offset, err, tc.want, tc.more)
		}
	}
}

func TestTaskWarnings(t *testing.T) {
	home := "/home/ana"
	ok := departments.Department{Name: "d", Status: departments.StatusOK}
	cases := []struct {
		name    string
		task    dispatch.Task
		eff     dispatch.Policy
		dept    departments.Department
		hasDept bool
		want    []string
	}{
		{"safe", dispatch.Task{Cwd: "/home/ana/code"}, dispatch.Policy{SandboxMode: "workspace-write", ApprovalPolicy: "never"}, ok, false, nil},
		{"full never", dispatch.Task{Cwd: "/srv"}, dispatch.Policy{SandboxMode: "full-access", ApprovalPolicy: "never"}, ok, false, []string{"Full access with approval never"}},
		{"danger alias", dispatch.Task{Cwd: "/srv"}, dispatch.Policy{SandboxMode: "danger-full-access", ApprovalPolicy: "never"}, ok, false, []string{"Full access"}},
		{"full asks", dispatch.Task{Cwd: "/srv"}, dispatch.Policy{SandboxMode: "full-access", ApprovalPolicy: "on-request"}, ok, false, nil},
		{"home", dispatch.Task{Cwd: "/home/ana/"}, dispatch.Policy{}, ok, false, []string{"home directory"}},
		{"root", dispatch.Task{Cwd: "/"}, dispatch.Policy{}, ok, false, []string{"whole file system"}},
		{"gone dept", dispatch.Task{Cwd: "/srv", Department: "x"}, dispatch.Policy{}, ok, false, []string{"Department x no longer exists"}},
		{"missing dir", dispatch.Task{Cwd: "/srv", Department: "d"}, dispatch.Policy{}, departments.Department{Name: "d", Status: departments.StatusMissing}, true, []string{"missing its directory"}},
	}
	for _, c := range cases {
		got := taskWarnings(c.task, c.eff, c.dept, c.hasDept, home)
		if len(got) != len(c.want) {
			t.Errorf("%s: warnings %q, want %d", c.name, got, len(c.want))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("%s: %q does not say %q", c.name, got[i], c.want[i])
			}
		}
	}
}
