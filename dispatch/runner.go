package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/dispatch/agenttask"
	"github.com/airlock-app/airlock/internal/poll"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/redact"
	"github.com/airlock-app/airlock/sandbox"
)

var (
	errCancelled   = errors.New("cancelled")
	errNoProgress  = errors.New("no progress")
	errHardTimeout = errors.New("hard timeout")
)

// activeRun is a run this dispatcher is working on (approval wait, slot wait or running).
type activeRun struct {
	cancel context.CancelCauseFunc

	mu          sync.Mutex
	pid         int
	cancelledBy string
	holdsSlot   bool
	paused      bool
	// personWaits counts the questions its running command waits on (WaitForPerson);
	// ended is set when its execution is over, so no slot is taken again after it.
	personWaits int
	ended       bool
	log         *runLog
	// routeChanged is poked by RerouteWaiting (buffered: a poke before the run starts
	// waiting on its host question is not lost).
	routeChanged chan struct{}
}

func (d *Dispatcher) launch(id uint) {
	d.spawn(func() { d.process(id) })
}

// process takes one run from queued (or waiting_approval after a restart) through the
// gate, the approval, a concurrency slot and execution.
func (d *Dispatcher) process(id uint) {
	ctx, cancel := context.WithCancelCause(d.ctx)
	defer cancel(nil)
	ar := &activeRun{cancel: cancel, routeChanged: make(chan struct{}, 1)}
	d.mu.Lock()
	if _, dup := d.active[id]; dup {
		d.mu.Unlock()
		return
	}
	d.active[id] = ar
	d.mu.Unlock()
	defer func() {
		d.leave(id, ar)
		// Cancelled at any point (even after being held): make sure it is recorded.
		if errors.Is(context.Cause(ctx), errCancelled) {
			var cur Run
			if err := d.db.Take(&cur, id).Error; err == nil && !Finished(cur.Status) {
				d.finish(&cur, StatusCancelled, "cancelled by "+ar.by(), nil)
			}
		}
	}()

	var r Run
	if err := d.db.WithContext(ctx).Take(&r, id).Error; err != nil {
		slog.Error("dispatch: load run", "run", id, "err", err)
		return
	}
	if r.Status != StatusQueued && r.Status != StatusWaitingApproval {
		return
	}
	var t Task
	if err := d.db.WithContext(ctx).Take(&t, r.TaskID).Error; err != nil {
		d.finish(&r, StatusCancelled, "task removed", nil)
		return
	}
	if t.Overlap == OverlapQueue {
		lock := d.taskLock(t.ID)
		select {
		case lock <- struct{}{}:
			defer func() { <-lock }()
		case <-ctx.Done():
			d.stopped(ctx, ar, &r)
			return
		}
	}

	v, err := d.gate(ctx, t, r)
	if err != nil {
		if ctx.Err() != nil {
			d.stopped(ctx, ar, &r)
			return
		}
		d.finish(&r, StatusFailed, err.Error(), nil)
		return
	}
	if v.fail {
		d.finish(&r, StatusFailed, v.reason, nil)
		return
	}
	if v.hold {
		// Leave before the hold is visible, so a release can start it again at once.
		d.leave(id, ar)
		d.hold(&r, t, v)
		return
	}

	// auto: where the command runs is decided here, before the slot; a question to the
	// person (the micro-VM it needs is not ready) is a waiting_approval like any other.
	plan, ok := d.route(ctx, ar, &r, t, v)
	if !ok {
		return
	}
	approval, ok := d.approve(ctx, ar, &r, t, v, plan)
	if !ok {
		return
	}

	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		d.stopped(ctx, ar, &r)
		return
	}
	ar.mu.Lock()
	ar.holdsSlot = true
	ar.mu.Unlock()
	defer d.endSlot(ar)
	d.execute(ctx, ar, &r, t, v, plan, approval)
}

// leave forgets ar as the goroutine working on run id.
func (d *Dispatcher) leave(id uint, ar *activeRun) {
	d.mu.Lock()
	if d.active[id] == ar {
		delete(d.active, id)
	}
	d.mu.Unlock()
}

func (d *Dispatcher) releaseSlot(ar *activeRun) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.holdsSlot {
		ar.holdsSlot = false
		<-d.slots
	}
}

// stopped records why a run that had not started yet stopped: cancelled by the person,
// or (on shutdown) nothing — it stays queued or waiting and is picked up again at start.
func (d *Dispatcher) stopped(ctx context.Context, ar *activeRun, r *Run) {
	if errors.Is(context.Cause(ctx), errCancelled) {
		d.finish(r, StatusCancelled, "cancelled by "+ar.by(), nil)
	}
}

func (ar *activeRun) by() string {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.cancelledBy == "" {
		return "the person"
	}
	return ar.cancelledBy
}

// approval is what the broker allowed a run to execute: the question and its answer.
type approval struct {
	req ApprovalRequest
	dec ApprovalDecision
}

// argv is the command to run: the task's, or the one a before_tool_use hook rewrote it
// to (the broker judged that one).
func (a approval) argv() []string {
	if len(a.dec.Argv) > 0 {
		return a.dec.Argv
	}
	return a.req.Argv
}

// approve passes the run's command (or its escalation) through the permission broker.
// ok is false when the run must not go on (its state is then recorded). What it returns
// holds the command to run and the extra access the person allowed (an escalation).
func (d *Dispatcher) approve(ctx context.Context, ar *activeRun, r *Run, t Task, v gateVerdict, plan *RoutePlan) (approval, bool) {
	req := ApprovalRequest{
		ID: fmt.Sprintf("run-%d", r.ID), Kind: ApprovalCommand, Tool: "exec",
		Argv: t.Argv, TaskArgv: t.Argv, RunID: r.ID, Task: t.Name, Department: t.Department,
		Cwd: v.dir, Policy: placed(v.policy, plan),
	}
	if r.Trigger == TriggerEscalation {
		req.ID += "-escalation"
		req.Kind = ApprovalEscalation
		req.Denial = r.Denial
		req.Grant = r.Grant
	}
	dec, ok := d.await(ctx, ar, r, t, req, "waiting for your approval of its command")
	if !ok {
		return approval{}, false
	}
	if !dec.Allow {
		reason := "denied"
		if len(dec.Reasons) > 0 {
			reason += ": " + strings.Join(dec.Reasons, "; ")
		}
		if dec.AnsweredBy != "" {
			reason += " (by " + dec.AnsweredBy + ")"
		}
		d.finish(r, StatusDenied, reason, nil)
		return approval{}, false
	}
	d.resumeQueued(r, "approved; waiting for a concurrency slot")
	return approval{req: req, dec: dec}, true
}

// await asks the broker for req, marking the run waiting_approval (with reason) while a
// person is asked, within the run's hold deadline. ok is false when no answer came (the
// run's state is then recorded: cancelled, expired, failed, or left for the next start).
func (d *Dispatcher) await(ctx context.Context, ar *activeRun, r *Run, t Task, req ApprovalRequest, reason string) (ApprovalDecision, bool) {
	deadline := d.now().Add(t.HoldDeadline)
	if r.Status == StatusWaitingApproval && r.HoldUntil != nil {
		deadline = *r.HoldUntil
	}
	req.OnPending = func(requestID string) { d.markWaitingApproval(r, requestID, reason, deadline) }
	actx, cancel := context.WithTimeoutCause(ctx, max(deadline.Sub(d.now()), 0), context.DeadlineExceeded)
	defer cancel()
	dec, err := d.opts.Approvals.Await(actx, req)
	if err != nil {
		switch {
		case errors.Is(context.Cause(ctx), errCancelled):
			d.finish(r, StatusCancelled, "cancelled by "+ar.by(), nil)
		case d.ctx.Err() != nil:
			// Shutting down: the run keeps its state; the next start re-attaches.
		case errors.Is(context.Cause(ctx), errRerouted):
			// The question was withdrawn (the caller routes the run anew); its state stays.
		case actx.Err() != nil:
			d.finish(r, StatusExpired, fmt.Sprintf("no answer to the approval within the hold deadline (%s)", t.HoldDeadline), nil)
		default:
			d.finish(r, StatusFailed, "approval failed: "+err.Error(), nil)
		}
		return dec, false
	}
	return dec, true
}

// resumeQueued puts a run that waited for an approval back to queued (it waits for the
// next step: another approval or a concurrency slot).
func (d *Dispatcher) resumeQueued(r *Run, reason string) {
	if r.Status != StatusWaitingApproval {
		return
	}
	d.db.Model(&Run{}).Where("id = ? AND status = ?", r.ID, StatusWaitingApproval).
		Updates(map[string]any{"status": StatusQueued, "reason": reason})
	r.Status = StatusQueued
	d.publishRun(r.ID)
	d.inboxChanged()
}

func (d *Dispatcher) markWaitingApproval(r *Run, requestID, reason string, deadline time.Time) {
	now := d.now().UTC()
	res := d.db.Model(&Run{}).Where("id = ? AND status IN ?", r.ID, []string{StatusQueued, StatusWaitingApproval}).
		Updates(map[string]any{
			"status": StatusWaitingApproval, "approval_id": requestID, "reason": reason,
			"held_since": gorm.Expr("COALESCE(held_since, ?)", now), "hold_until": deadline.UTC(),
		})
	if res.Error == nil && res.RowsAffected > 0 {
		r.Status = StatusWaitingApproval
		r.ApprovalID = requestID
		d.publishRun(r.ID)
		d.inboxChanged()
		msg := "a run is waiting for your approval"
		if reason != "waiting for your approval of its command" {
			msg = reason
		}
		d.notice(api.DispatchNotice{Kind: api.NoticeNeedsYou, RunID: r.ID, Task: r.TaskName, Message: msg})
	}
}

// hold records a run as waiting for a directory (or a department), with its deadline.
func (d *Dispatcher) hold(r *Run, t Task, v gateVerdict) {
	now := d.now().UTC()
	res := d.db.Model(&Run{}).Where("id = ? AND status = ?", r.ID, StatusQueued).Updates(map[string]any{
		"status": StatusWaitingDirectory, "reason": v.reason, "waiting_dir": v.waitingDir, "waiting_dept": v.waitingDept,
		"held_since": gorm.Expr("COALESCE(held_since, ?)", now),
		"hold_until": gorm.Expr("COALESCE(hold_until, ?)", now.Add(t.HoldDeadline)),
	})
	if res.Error != nil {
		slog.Error("dispatch: hold run", "run", r.ID, "err", res.Error)
		return
	}
	if res.RowsAffected > 0 {
		d.publishRun(r.ID)
		d.inboxChanged()
		// One notification per place: the hundredth run held on the same directory is
		// already covered by the inbox item the first one raised.
		var others int64
		d.db.Model(&Run{}).Where("status = ? AND waiting_dir = ? AND waiting_dept = ? AND id < ?",
			StatusWaitingDirectory, v.waitingDir, v.waitingDept, r.ID).Count(&others)
		if others == 0 {
			d.notice(api.DispatchNotice{Kind: api.NoticeNeedsYou, RunID: r.ID, Task: t.Name, Message: v.reason})
		}
	}
}

// finish records a terminal state unless the run already has one.
func (d *Dispatcher) finish(r *Run, status, reason string, extra map[string]any) {
	if err := d.finishErr(r, status, reason, extra); err != nil {
		slog.Error("dispatch: finish run", "run", r.ID, "err", err)
	}
}

// finishErr is finish, saying whether the database took it.
func (d *Dispatcher) finishErr(r *Run, status, reason string, extra map[string]any) error {
	now := d.now().UTC()
	upd := map[string]any{"status": status, "reason": reason, "finished_at": now, "paused": false}
	for k, v := range extra {
		upd[k] = v
	}
	res := d.db.Model(&Run{}).Where("id = ? AND status IN ?", r.ID, activeStatuses).Updates(upd)
	if res.Error != nil {
		return fmt.Errorf("record run #%d %s: %w", r.ID, status, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil
	}
	wasHeld, wasRunning := Held(r.Status), r.Status == StatusRunning
	r.Status, r.Reason = status, reason
	d.publishRun(r.ID)
	if wasRunning {
		d.publishState()
	}
	if wasHeld {
		d.inboxChanged()
	}
	switch status {
	case StatusFailed, StatusTimedOut, StatusExpired, StatusDenied:
		d.notice(api.DispatchNotice{Kind: api.NoticeFailure, RunID: r.ID, Task: r.TaskName, Status: status, Message: reason})
	}
	return nil
}

func (d *Dispatcher) publishRun(id uint) {
	if d.opts.Publisher == nil {
		return
	}
	var r Run
	if err := d.db.Take(&r, id).Error; err == nil {
		d.runUpdated(r)
	}
}

// environment builds the run's environment: the base, the task's variables, its secrets
// (read now, at start) and the AIRLOCK_ variables. It returns the secret values for
// redaction.
func (d *Dispatcher) environment(ctx context.Context, t Task, r *Run, started time.Time) ([]string, []string, error) {
	m := map[string]string{}
	for _, kv := range d.opts.BaseEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	for k, v := range t.Env {
		m[k] = v
	}
	var secrets []string
	for _, name := range t.Secrets {
		if d.opts.Secrets == nil {
			return nil, nil, fmt.Errorf("secret %s: no secret store configured", name)
		}
		v, err := d.opts.Secrets.Get(ctx, name)
		if err != nil {
			return nil, nil, fmt.Errorf("secret %s could not be read (%v): set it with `airlock secret set %s`", name, err, name)
		}
		m[name] = v
		secrets = append(secrets, v)
	}
	m["AIRLOCK_RUN_ID"] = fmt.Sprint(r.ID)
	m["AIRLOCK_TASK"] = t.Name
	m["AIRLOCK_TRIGGER"] = r.Trigger
	m["AIRLOCK_SCHEDULED_AT"] = r.ScheduledAt.UTC().Format(time.RFC3339Nano)
	m["AIRLOCK_STARTED_AT"] = started.UTC().Format(time.RFC3339Nano)
	env := make([]string, 0, len(m))
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env, secrets, nil
}

// execute runs the command the broker allowed with the effective policy recorded on the
// run, and reports how it ended to the broker's after_tool_use hooks.
func (d *Dispatcher) execute(ctx context.Context, ar *activeRun, r *Run, t Task, v gateVerdict, plan *RoutePlan, ap approval) {
	started := d.now().UTC()
	env, secrets, err := d.environment(ctx, t, r, started)
	if err != nil {
		d.finish(r, StatusFailed, err.Error(), nil)
		return
	}
	var agent *agentRun
	if t.Agent != nil {
		if agent, err = d.prepareAgent(ctx, t, r, v.policy, v.dir, env); err != nil {
			d.finish(r, StatusFailed, err.Error(), nil)
			return
		}
		env, secrets = agent.env, append(secrets, agent.secrets...)
	}
	logPath, err := newLogPath(d.opts.LogDir, r.ID)
	if err != nil {
		d.finish(r, StatusFailed, err.Error(), nil)
		return
	}
	// The end's room is reserved before the run is recorded running, so that a run seen
	// running already has it (a disk filled from then on cannot take it away).
	reserveErr := reserveEnd(endPath(logPath))
	p := v.policy
	res := d.db.Model(&Run{}).Where("id = ? AND status IN ?", r.ID, []string{StatusQueued, StatusWaitingApproval}).Updates(map[string]any{
		"status": StatusRunning, "started_at": started, "owner": d.opts.Owner, "reason": "", "log_path": logPath, "cwd": v.dir,
		"policy_posture": p.Posture, "policy_sandbox_mode": p.SandboxMode, "policy_network": p.Network,
		"policy_approval_policy": p.ApprovalPolicy, "policy_backend": p.Backend, "policy_execution_mode": p.ExecutionMode,
	})
	if res.Error != nil || res.RowsAffected == 0 {
		_ = os.Remove(endPath(logPath)) // the room reserved for an end that will not come
		return                          // cancelled meanwhile, or another dispatcher took it
	}
	r.Status = StatusRunning
	d.publishRun(r.ID)
	d.publishState()
	lg, err := openRunLog(logPath, d.opts.LogLimit, secrets, func(b []byte) {
		d.publish(api.TopicRunLog, api.RunLogChunk{RunID: r.ID, TaskID: t.ID, Chunk: string(b)})
	})
	if err != nil {
		d.finish(r, StatusFailed, err.Error(), nil)
		return
	}
	ar.mu.Lock()
	ar.log = lg
	ar.mu.Unlock()
	if reserveErr != nil {
		lg.note("%v: with the disk full at the end, the run's outcome waits for space before it is recorded", reserveErr)
	}
	lg.note("run #%d of task %s (scheduled %s, started %s) in %s; policy: sandbox %s, network %v, approvals %s, backend %s, execution %s",
		r.ID, t.Name, r.ScheduledAt.Format(time.RFC3339), started.Format(time.RFC3339), v.dir,
		p.SandboxMode, p.Network.Describe(), p.ApprovalPolicy, p.Backend, p.ExecutionMode)
	if grant := ap.dec.Grant; grant != nil && !grant.IsZero() {
		lg.note("escalation allowed by the person for this run only: %s", grant)
	}
	argv := ap.argv()
	if agent != nil {
		lg.note("agent task: %s in %s (model API %s allowed for this run under an allowlist; key from the keyring secret %s): %s",
			agenttask.Name(t.Agent.Kind), agent.dir, agent.plan.Host, t.Agent.APIKeySecret, redact.StringWithSecrets(agent.plan.Describe(), secrets))
		argv = agent.plan.Argv
	} else if !slices.Equal(argv, t.Argv) {
		lg.note("a before_tool_use hook rewrote the command: %s → %s",
			api.ShellJoin(redact.Argv(t.Argv)), api.ShellJoin(redact.Argv(argv))) // note hides the injected values
	}

	execCtx, cancelExec := ctx, context.CancelFunc(func() {})
	if t.Timeout > 0 {
		backstop := t.Timeout + executorBackstopDuration
		if p.ExecutionMode == "sandbox" || p.ExecutionMode == "auto" {
			// The executor times the command from when it starts in the micro-VM; booting
			// one (tens of seconds without KVM) must not eat the run's timeout.
			backstop += microVMBootAllowance
		}
		execCtx, cancelExec = context.WithTimeoutCause(ctx, backstop, errHardTimeout)
	}
	defer cancelExec()
	wdDone := make(chan struct{})
	if t.NoProgressTimeout > 0 {
		go d.watchdog(ar, lg, t.NoProgressTimeout, wdDone)
	}
	spec := ExecSpec{
		RunID: r.ID, Argv: argv, Dir: v.dir, Env: env, Policy: p, Timeout: t.Timeout, Stdout: lg, Stderr: lg, Route: plan, Grant: ap.dec.Grant,
		AllowHosts: agent.hosts(), AgentDir: agent.directory(), AgentWritable: agent.writable(),
		OnStart: func(pid int) {
			ar.mu.Lock()
			ar.pid = pid
			ar.mu.Unlock()
			d.db.Model(&Run{}).Where("id = ?", r.ID).Update("pid", pid)
		},
	}
	result, execErr := d.opts.Executor.Exec(execCtx, spec)
	close(wdDone)
	if agent != nil {
		// What the agent kept there (its transcripts: what it read) is not left for
		// other sandboxes to read; the run's log has its output.
		if err := d.removeAgentDir(r.ID); err != nil {
			lg.note("%v", err)
		}
	}

	status, reason := StatusSucceeded, ""
	cause := context.Cause(execCtx)
	switch {
	case errors.Is(cause, errCancelled):
		status, reason = StatusCancelled, "cancelled by "+ar.by()+"; the process tree was killed"
	case d.ctx.Err() != nil:
		status, reason = StatusInterrupted, "the app stopped during the run; the process tree was killed"
	case errors.Is(cause, errNoProgress):
		status, reason = StatusTimedOut, fmt.Sprintf("no output for %s (no-progress timeout); the process tree was killed", t.NoProgressTimeout)
	case result.TimedOut || errors.Is(cause, errHardTimeout):
		status, reason = StatusTimedOut, fmt.Sprintf("ran longer than its timeout (%s); the process tree was killed", t.Timeout)
	case execErr != nil:
		status, reason = StatusFailed, "could not run: "+execErr.Error()
	case result.SandboxDenied:
		status, reason = StatusFailed, "sandbox denied: "+result.Denial
	case result.Limit != "":
		status, reason = StatusFailed, result.Limit
	case result.Signal != "":
		status, reason = StatusFailed, "killed by signal "+result.Signal
	case result.ExitCode != 0:
		status, reason = StatusFailed, fmt.Sprintf("exit status %d", result.ExitCode)
	}
	reason = redact.StringWithSecrets(reason, secrets)
	var escalation *Run
	if result.SandboxDenied && status == StatusFailed && p.ApprovalPolicy == string(permission.PolicyOnFailure) && r.Trigger != TriggerEscalation {
		if result.Grant == nil || result.Grant.IsZero() {
			reason += "; no escalation can lift this denial, so nothing was asked"
		} else if escalation = d.escalate(r, t, p, redact.StringWithSecrets(result.Denial, secrets), *result.Grant); escalation != nil {
			reason += fmt.Sprintf("; asked you to re-run it with %s (run #%d)", result.Grant, escalation.ID)
		}
	}
	if reason != "" {
		lg.note("%s: %s", status, reason)
	} else {
		lg.note("%s", status)
	}
	written, truncated, _ := lg.close()
	end := endRecord{Status: status, Reason: reason, Signal: result.Signal, LogBytes: written, LogTruncated: truncated, FinishedAt: d.now().UTC()}
	if execErr == nil {
		code := result.ExitCode
		end.ExitCode = &code
	}
	d.countFailure(t, status, reason) // before the run shows finished
	d.recordEnd(ar, r, logPath, end)
	if escalation != nil {
		d.launch(escalation.ID)
	}
	if o, ok := d.opts.Approvals.(ApprovalOutcomes); ok {
		out := RunOutcome{Ran: execErr == nil, Error: reason, SandboxDenied: result.SandboxDenied}
		if execErr == nil && result.Signal == "" && !result.TimedOut && status != StatusCancelled &&
			status != StatusInterrupted && status != StatusTimedOut {
			code := result.ExitCode
			out.ExitCode = &code
		}
		// The hooks run after the run is recorded, without its slot: they cannot change
		// what happened, and a slow hook must not hold up the next run.
		d.releaseSlot(ar)
		// d.ctx, not the run's: a run the person cancelled still reports its outcome.
		hctx, cancel := context.WithTimeout(d.ctx, afterHooksLimit)
		o.After(hctx, ap.req, ap.dec, out)
		cancel()
	}
}

// afterHooksLimit bounds the after_tool_use hooks of one run (each also has its own timeout).
const afterHooksLimit = 2 * time.Minute

// watchdog cancels the run when it prints nothing for limit. A run waiting for a person
// (paused, or its command waiting on an answer: WaitForPerson) is waiting, not stuck; the
// end of the wait restarts the clock.
func (d *Dispatcher) watchdog(ar *activeRun, lg *runLog, limit time.Duration, done <-chan struct{}) {
	tick := min(max(limit/4, 10*time.Millisecond), time.Second)
	silent := poll.Until(done, tick, func() bool {
		ar.mu.Lock()
		waiting := ar.paused || ar.personWaits > 0
		ar.mu.Unlock()
		return !waiting && lg.idle() > limit
	})
	if silent {
		ar.cancel(errNoProgress)
	}
}

// escalate records a re-run that waits for the person's approval: the same policy, plus
// exactly the access the denial needs (g), for that re-run only.
func (d *Dispatcher) escalate(r *Run, t Task, p Policy, denial string, g sandbox.Grant) *Run {
	proposed := p
	parent := r.ID
	e := Run{
		TaskID: t.ID, TaskName: t.Name, ScheduledAt: r.ScheduledAt, Trigger: TriggerEscalation, Status: StatusQueued,
		Reason: fmt.Sprintf("re-run of #%d with more access after a sandbox denial", r.ID), Cwd: t.Cwd, Department: t.Department,
		PolicyOverride: &proposed, Grant: &g, ParentRunID: &parent, Denial: denial,
	}
	res := d.db.Clauses(clause.OnConflict{DoNothing: true}).Create(&e)
	if res.Error != nil || res.RowsAffected == 0 {
		return nil
	}
	return &e
}

// countFailure keeps the task's consecutive-failure count and pauses it at the limit.
func (d *Dispatcher) countFailure(t Task, status, reason string) {
	switch status {
	case StatusSucceeded:
		d.db.Model(&Task{}).Where("id = ?", t.ID).Update("consecutive_failures", 0)
		return
	case StatusFailed, StatusTimedOut:
	default:
		return
	}
	d.db.Model(&Task{}).Where("id = ?", t.ID).Update("consecutive_failures", gorm.Expr("consecutive_failures + 1"))
	var cur Task
	if err := d.db.Take(&cur, t.ID).Error; err != nil {
		return
	}
	if cur.ConsecutiveFailures >= MaxConsecutiveFailures && !cur.Paused {
		why := fmt.Sprintf("failed %d times in a row (last: %s)", cur.ConsecutiveFailures, reason)
		d.db.Model(&Task{}).Where("id = ?", t.ID).Updates(map[string]any{"paused": true, "pause_reason": why})
		cur.Paused, cur.PauseReason = true, why
		d.taskUpdated(cur)
		d.inboxChanged()
		d.notice(api.DispatchNotice{Kind: api.NoticeTaskPaused, Task: t.Name, Message: "task paused: " + why})
	}
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return errors.New("no process")
	}
	return syscall.Kill(-pid, sig)
}
