package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/dispatch/brokerapprovals"
	"github.com/airlock-app/airlock/internal/realpath"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress"
)

// askChannel serves the ask-only channel of one sandbox the core starts, whose identity
// is id (its run, task, department, directory and policy, as the core recorded them).
// It listens on sandbox.AskAddr inside the sandbox's own network namespace, where only
// the sandbox's processes reach it, and serves three of the table's routes: check,
// await and after. Every request on it is tagged with id here; what the caller says of
// its session, run, task, department, directory or policy is replaced. Nothing on it
// lists, answers, authorizes, approves, mints or changes anything: those routes are not
// there. So an agent inside a run can ask, and wait for the person, but not answer.
func (c *Core) askChannel(id api.Context) sandbox.Egress {
	return func(ctx context.Context, pid int, addr string) (func(), error) {
		ln, err := egress.ListenInNetns(pid, addr)
		if err != nil {
			return nil, fmt.Errorf("ask-only channel: %w", err)
		}
		mux := localapi.NewMux(apiError)
		c.askRoutes(mux, id, pid)
		srv := localapi.NewHTTPServer(mux, c.askTimeouts)
		// An await in flight ends with the run: its context is the run's. All of the
		// sandbox's requests are one caller's, whose waiting requests the broker caps.
		caller := fmt.Sprintf("the sandbox %d", pid)
		if id.Run != "" {
			caller = fmt.Sprintf("the sandbox of run %s (pid %d)", id.Run, pid)
		}
		base := permission.WithGate(permission.WithCaller(ctx, caller), make(chan struct{}, askDecidersPerSandbox))
		srv.BaseContext = func(net.Listener) context.Context { return base }
		ln = localapi.Guard(ln, localapi.Limits{
			PerCaller: MaxAsksPerSandbox, Reserve: true, OneCaller: true, Name: "ask-only channel of " + caller,
			Who: func(string) string { return caller },
			OnCap: func(_ string, open int) {
				if b, err := c.broker(); err == nil {
					b.RecordRefusal(permission.Request{Tool: toolAskConnection, Context: id},
						fmt.Sprintf("%s opened %d connections to its ask-only channel, the most it may: further ones are refused, "+
							"without an audit row each, until some close", caller, open))
				}
			},
		})
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				slog.Warn("ask-only channel stopped", "run", id.Run, "pid", pid, "error", err)
			}
		}()
		return func() { srv.Close(); <-done }, nil
	}
}

// MaxAsksPerSandbox caps the connections one sandbox holds open on its ask-only channel
// (each await holds one until the person answers); beyond it a connection is refused
// with the reason. The broker caps its waiting requests lower still
// (permission.DefaultMaxPendingPerCaller).
const MaxAsksPerSandbox = 64

// askDecidersPerSandbox is how many of one sandbox's requests are decided at once (the
// classifier's CPU): the rest of its open asks wait their turn, not the person's.
const askDecidersPerSandbox = 4

// toolAskConnection names, in the audit, a sandbox's connection to its ask-only
// channel refused at the door.
const toolAskConnection = "ask_channel_connection"

// askRoutes are the ask-only channel's routes.
func (c *Core) askRoutes(mux *localapi.Mux, id api.Context, pid int) {
	localapi.Handle(mux, api.PermissionCheck, func(r *http.Request, req api.Request) (api.Evaluation, error) {
		b, err := c.broker()
		if err != nil {
			return api.Evaluation{}, err
		}
		tagRequest(&req, id, pid)
		return b.Check(r.Context(), req), nil
	})
	localapi.Handle(mux, api.PermissionAwait, func(r *http.Request, req api.Request) (api.Decision, error) {
		tagRequest(&req, id, pid)
		if _, err := c.broker(); err != nil {
			return api.Decision{}, err
		}
		// The run waits for the person, not stuck: its slot goes back meanwhile.
		d, err := c.awaitForRun(r.Context(), req, "ask", func(rid string) string {
			return fmt.Sprintf("waiting for you: may it %s %s? (request %s)", req.Tool, req.Subject(), rid)
		})
		if err != nil {
			return api.Decision{}, err
		}
		c.noteDenial(r.Context(), req, d)
		return d, nil
	})
	localapi.Handle(mux, api.PermissionAfter, func(r *http.Request, b api.AfterToolUse) (api.Accepted, error) {
		tagRequest(&b.Request, id, pid)
		return c.afterToolUse(b)
	})
	mux.Handle("/", func(w http.ResponseWriter, r *http.Request) {
		localapi.WriteError(w, api.Errorf(http.StatusForbidden, api.CodeSandboxed,
			fmt.Sprintf("%s %s is not served inside a sandbox: its ask-only channel takes only requests to check, to wait for an answer and to report an outcome", r.Method, r.URL.Path),
			"answer, authorize, approve and change settings in the Airlock window or with the airlock CLI outside the sandbox"))
	})
}

// tagRequest replaces what a request from a sandbox says of where it comes from with the
// sandbox's identity. The caller's working directory is kept only when it lies inside
// the sandbox's own (an agent in a subdirectory of its run's); its description ("hook:
// claude") is kept as a label, bounded, after the sandbox's.
func tagRequest(req *api.Request, id api.Context, pid int) {
	cwd := id.Cwd
	if c := req.Context.Cwd; c != "" && filepath.IsAbs(c) {
		if real, ok, err := realpath.Resolve(c, realpath.Options{}); err == nil && ok && realpath.Within(real, id.Cwd) {
			cwd = real
		}
	}
	desc := api.Label(req.Context.Caller.Description, 32)
	who := "sandbox of " + id.Caller.Description // airlock exec, an MCP session's bash call
	if id.Run != "" {
		who = "sandbox of run " + id.Run
	}
	req.Context = id
	req.Context.Cwd = cwd
	req.Context.TaskArgv = nil // the task's approval is of its own command, not of what an agent in it asks
	req.Context.Caller = api.Caller{PID: pid, Description: who}
	if desc != "" {
		req.Context.Caller.Description += " (" + desc + ")"
	}
}

// runAsk is the ask-only channel of one dispatch run's sandbox: its requests are the
// run's, under the policy the run recorded, in its directory.
func (c *Core) runAsk(spec dispatch.ExecSpec, _ sandbox.Policy) sandbox.Egress {
	ar := dispatch.ApprovalRequest{RunID: spec.RunID, Cwd: spec.Dir, Policy: spec.Policy}
	if c.Dispatch != nil {
		if r, err := c.Dispatch.Run(context.Background(), spec.RunID); err == nil {
			ar.Task, ar.Department = r.TaskName, r.Department
		}
	}
	return c.askChannel(brokerapprovals.Request(ar).Context)
}
