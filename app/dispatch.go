package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/dispatch/brokerapprovals"
	"github.com/airlock-app/airlock/dispatch/sandboxexec"
	"github.com/airlock-app/airlock/permission"
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
	})
	opts := dispatch.Options{
		DB: c.DB, Departments: depts, Executor: registeringExecutor{core: c, inner: exec},
		Approvals: approvals, Pending: approvals, Router: exec, Secrets: c.Secrets, Publisher: c.Bus,
		LogDir: c.Paths.RunLogs, Defaults: c.DispatchPolicy,
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
	d, err := dispatch.New(opts)
	if err != nil {
		return fmt.Errorf("dispatch: %w", err)
	}
	c.Dispatch = d
	return nil
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

type authorizeBody struct {
	Dir          string `json:"dir"`
	ConfirmHome  bool   `json:"confirmHome"`
	Confirmation string `json:"confirmation"`
	// Password proves the person to the operating system (answerer).
	Password string `json:"password,omitempty"`
}

func (c *Core) dispatchRoutes() {
	h := c.api.Handle
	ok := func(w http.ResponseWriter, v any, err error) {
		if err != nil {
			localapi.WriteError(w, dispatchError(err))
			return
		}
		localapi.WriteJSON(w, http.StatusOK, v)
	}
	// Departments.
	h("GET /v1/departments", func(w http.ResponseWriter, r *http.Request) {
		v, err := c.Departments.List(r.Context())
		ok(w, v, err)
	})
	h("POST /v1/departments", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Name     string               `json:"name"`
			Dir      string               `json:"dir"`
			Defaults departments.Defaults `json:"defaults"`
			personProof
		}
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		what := widening(b.Defaults)
		// A department's directory becomes a known place, where runs start without being
		// held: a new one over the API is the person's to decide, as authorizing it is.
		if k, err := c.Departments.Known(r.Context(), b.Dir); err == nil && !k.Known {
			what = append(what, "a new known place ("+k.Path+")")
		}
		if err := c.requirePerson(r, b.personProof, what, "a department", "airlock dept add "+b.Name+" DIR …"); err != nil {
			localapi.WriteError(w, err)
			return
		}
		v, err := c.Departments.Add(r.Context(), b.Name, b.Dir, b.Defaults)
		ok(w, v, err)
	})
	h("GET /v1/departments/{name}", func(w http.ResponseWriter, r *http.Request) {
		v, err := c.Departments.Get(r.Context(), r.PathValue("name"))
		ok(w, v, err)
	})
	h("PUT /v1/departments/{name}/defaults", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			departments.Defaults
			personProof
		}
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		if err := c.requirePerson(r, b.personProof, widening(b.Defaults), "department defaults", "airlock dept set "+r.PathValue("name")+" …"); err != nil {
			localapi.WriteError(w, err)
			return
		}
		v, err := c.Departments.SetDefaults(r.Context(), r.PathValue("name"), b.Defaults)
		ok(w, v, err)
	})
	h("DELETE /v1/departments/{name}", func(w http.ResponseWriter, r *http.Request) {
		err := c.Departments.Remove(r.Context(), r.PathValue("name"))
		ok(w, map[string]string{"removed": r.PathValue("name")}, err)
	})
	// Tasks.
	h("GET /v1/tasks", func(w http.ResponseWriter, r *http.Request) {
		tasks, err := c.Dispatch.Tasks(r.Context())
		views := make([]dispatch.TaskView, 0, len(tasks))
		for _, t := range tasks {
			views = append(views, c.Dispatch.View(t, 5))
		}
		ok(w, views, err)
	})
	h("POST /v1/tasks", func(w http.ResponseWriter, r *http.Request) {
		// Creating a task approves its command for every run: one that widens access
		// (full-access, approval never) is the person's act, proven as an answer is.
		var b struct {
			dispatch.TaskSpec
			personProof
		}
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		if err := c.requirePerson(r, b.personProof, widening(b.Overrides), "a task", "airlock task add --name "+b.Name+" …"); err != nil {
			localapi.WriteError(w, err)
			return
		}
		t, err := c.Dispatch.CreateTask(r.Context(), b.TaskSpec)
		if err != nil {
			ok(w, nil, err)
			return
		}
		ok(w, c.Dispatch.View(t, 5), nil)
	})
	h("GET /v1/tasks/{name}", func(w http.ResponseWriter, r *http.Request) {
		t, err := c.Dispatch.Task(r.Context(), r.PathValue("name"))
		if err != nil {
			ok(w, nil, err)
			return
		}
		ok(w, c.Dispatch.View(t, 5), nil)
	})
	h("PATCH /v1/tasks/{name}", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			dispatch.TaskPatch
			personProof
		}
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		// A new command (or directory) under a task that already runs with full access
		// or approval never is a new approval of that access.
		var widens []string
		if b.Overrides != nil {
			widens = widening(*b.Overrides)
		} else if b.Argv != nil || b.Cwd != nil {
			if cur, err := c.Dispatch.Task(r.Context(), r.PathValue("name")); err == nil {
				widens = widening(cur.Overrides)
			}
		}
		if err := c.requirePerson(r, b.personProof, widens, "a task", "airlock task edit "+r.PathValue("name")+" …"); err != nil {
			localapi.WriteError(w, err)
			return
		}
		t, err := c.Dispatch.EditTask(r.Context(), r.PathValue("name"), b.TaskPatch)
		if err != nil {
			ok(w, nil, err)
			return
		}
		ok(w, c.Dispatch.View(t, 5), nil)
	})
	h("DELETE /v1/tasks/{name}", func(w http.ResponseWriter, r *http.Request) {
		err := c.Dispatch.RemoveTask(r.Context(), r.PathValue("name"))
		ok(w, map[string]string{"removed": r.PathValue("name")}, err)
	})
	for _, action := range []string{"enable", "disable"} {
		enabled := action == "enable"
		h("POST /v1/tasks/{name}/"+action, func(w http.ResponseWriter, r *http.Request) {
			t, err := c.Dispatch.SetEnabled(r.Context(), r.PathValue("name"), enabled)
			ok(w, t, err)
		})
	}
	h("POST /v1/tasks/{name}/run-now", func(w http.ResponseWriter, r *http.Request) {
		run, err := c.Dispatch.RunNow(r.Context(), r.PathValue("name"))
		ok(w, run, err)
	})
	h("GET /v1/schedule/preview", func(w http.ResponseWriter, r *http.Request) {
		line, tz := r.URL.Query().Get("schedule"), r.URL.Query().Get("tz")
		next, err := dispatch.NextTimes(line, tz, time.Now(), 5)
		if err != nil {
			localapi.WriteError(w, &api.Error{Status: http.StatusBadRequest, Code: "bad_schedule", Message: err.Error()})
			return
		}
		localapi.WriteJSON(w, http.StatusOK, map[string]any{"description": dispatch.Describe(line, tz), "next": next})
	})
	// Runs.
	h("GET /v1/runs", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := dispatch.RunFilter{Task: q.Get("task"), Waiting: q.Get("waiting") == "1"}
		if s := q.Get("status"); s != "" {
			f.Statuses = strings.Split(s, ",")
		}
		if n, err := strconv.Atoi(q.Get("limit")); err == nil {
			f.Limit = n
		}
		v, err := c.Dispatch.Runs(r.Context(), f)
		ok(w, v, err)
	})
	runID := func(w http.ResponseWriter, r *http.Request) (uint, bool) {
		n, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
		if err != nil {
			localapi.WriteError(w, &api.Error{Status: http.StatusBadRequest, Code: "bad_id", Message: fmt.Sprintf("run id %q is not a number", r.PathValue("id")), Hint: "list runs with `airlock runs list`"})
			return 0, false
		}
		return uint(n), true
	}
	h("GET /v1/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		if id, good := runID(w, r); good {
			v, err := c.Dispatch.Run(r.Context(), id)
			ok(w, v, err)
		}
	})
	// The log from ?offset= on, at most 1 MiB per call: a 2 GB log is read in pieces.
	h("GET /v1/runs/{id}/log", func(w http.ResponseWriter, r *http.Request) {
		id, good := runID(w, r)
		if !good {
			return
		}
		path, err := c.Dispatch.LogPath(r.Context(), id)
		if err != nil {
			ok(w, nil, err)
			return
		}
		offset, _ := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			localapi.WriteJSON(w, http.StatusOK, map[string]any{"offset": 0, "data": "", "size": 0})
			return
		}
		if err != nil {
			ok(w, nil, err)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			ok(w, nil, fmt.Errorf("run #%d log: %w", id, err))
			return
		}
		if offset < 0 || offset > fi.Size() {
			offset = fi.Size()
		}
		buf := make([]byte, min(int64(1<<20), fi.Size()-offset))
		n, err := f.ReadAt(buf, offset)
		if n < len(buf) && err != nil && !errors.Is(err, io.EOF) {
			ok(w, nil, fmt.Errorf("run #%d log: %w", id, err))
			return
		}
		localapi.WriteJSON(w, http.StatusOK, map[string]any{"offset": offset + int64(n), "data": string(buf[:n]), "size": fi.Size()})
	})
	// Dispatch as a whole: pausing stops scheduled runs from starting on their own.
	h("GET /v1/dispatch", func(w http.ResponseWriter, r *http.Request) {
		ok(w, c.Dispatch.State(), nil)
	})
	h("POST /v1/dispatch/pause", func(w http.ResponseWriter, r *http.Request) {
		st, err := c.Dispatch.SetPaused(r.Context(), true, "cli")
		ok(w, st, err)
	})
	h("POST /v1/dispatch/resume", func(w http.ResponseWriter, r *http.Request) {
		st, err := c.Dispatch.SetPaused(r.Context(), false, "cli")
		ok(w, st, err)
	})
	h("POST /v1/runs/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		if id, good := runID(w, r); good {
			err := c.Dispatch.Cancel(r.Context(), id, "cli")
			ok(w, map[string]any{"cancelled": id}, err)
		}
	})
	h("POST /v1/runs/{id}/resume", func(w http.ResponseWriter, r *http.Request) {
		if id, good := runID(w, r); good {
			err := c.Dispatch.Resume(r.Context(), id)
			ok(w, map[string]any{"resumed": id}, err)
		}
	})
	// Places. Authorizing widens what runs may write: it is a person's act, so over the
	// API it needs a caller at a terminal who typed the directory's name.
	h("POST /v1/authorize", func(w http.ResponseWriter, r *http.Request) {
		var b authorizeBody
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		if b.Confirmation != filepath.Base(filepath.Clean(b.Dir)) && b.Confirmation != filepath.Clean(b.Dir) {
			localapi.WriteError(w, &api.Error{Status: http.StatusForbidden, Code: "not_confirmed",
				Message: "the typed confirmation does not name the directory", Hint: "type the directory's name when `airlock authorize` asks"})
			return
		}
		proof := personProof{Password: b.Password}
		if b.Password == "" {
			proof.Confirmation = b.Confirmation // terminal_proof = "tty"
		}
		by, err := c.answerer(r, proof, nil) // the name was checked above
		if err != nil {
			localapi.WriteError(w, err)
			return
		}
		if !permission.ByPerson(by) {
			localapi.WriteError(w, c.needPerson("authorizing a directory", "airlock authorize "+b.Dir))
			return
		}
		v, err := c.Dispatch.Authorize(r.Context(), b.Dir, by, b.ConfirmHome)
		ok(w, v, err)
	})
	h("GET /v1/places", func(w http.ResponseWriter, r *http.Request) {
		v, err := c.Departments.AllKnown(r.Context())
		ok(w, v, err)
	})
	h("POST /v1/places/revoke", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Dir string `json:"dir"`
		}
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		v, err := c.Dispatch.Revoke(r.Context(), b.Dir, "cli")
		ok(w, v, err)
	})
	h("GET /v1/inbox", func(w http.ResponseWriter, r *http.Request) {
		v, err := c.Dispatch.Inbox(r.Context())
		ok(w, v, err)
	})
}

// dispatchError is apiError, except that dispatch's and departments' own refusals that
// wrap no sentinel yet are 400 (TODO(edge): an ErrInvalid sentinel in each).
func dispatchError(err error) error {
	e := apiError(err)
	if ae, ok := e.(*api.Error); ok && ae.Code == api.CodeInternal {
		return api.Errorf(http.StatusBadRequest, "refused", err.Error(), "")
	}
	return e
}
