package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Where a run's command runs, as the Router decides it before the run starts.
const (
	RouteHost    = "host"
	RouteMicroVM = "micro-VM"
	// RouteAsk: the command should run in the micro-VM, which is not ready; the person is
	// asked (as the run's approval, holding no slot) whether it may run on the host.
	RouteAsk = "ask"
)

// RouteQuery is what the Router decides on.
type RouteQuery struct {
	RunID  uint
	Argv   []string
	Dir    string // the resolved working directory
	Policy Policy
}

// RoutePlan is where a run's command runs and why, decided before the run starts.
type RoutePlan struct {
	// Where is RouteHost, RouteMicroVM or RouteAsk; "" leaves it to the executor (every
	// execution mode but auto).
	Where string
	// Reason is why, e.g. "auto: package install `pip install x`".
	Reason string
	// Question is what the person is asked when Where is RouteAsk (the run's reason while
	// it waits).
	Question string
	// Asked is set when the person was asked and allowed running on the host; AnsweredBy
	// says who.
	Asked      bool
	AnsweredBy string
}

// Router decides, before a run takes a concurrency slot, where its command runs under
// execution_mode auto (dispatch/sandboxexec implements it with the risk classifier).
type Router interface {
	Route(ctx context.Context, q RouteQuery) RoutePlan
	// NotRun is told when the person refused (or never answered) the host question, so
	// the decision reaches the audit like every other route.
	NotRun(q RouteQuery, plan RoutePlan, why string)
}

func (d *Dispatcher) router() Router {
	if d.opts.Router != nil {
		return d.opts.Router
	}
	r, _ := d.opts.Executor.(Router)
	return r
}

// errRerouted withdraws a run's host question: the Router no longer asks (the micro-VM
// became ready while the run waited).
var errRerouted = errors.New("rerouted: the micro-VM became ready")

// RerouteWaiting tells dispatch that where commands can run has changed (the app calls it
// when the micro-VM becomes ready). Every auto run waiting on the question whether it may
// run on the host is routed again; when the Router no longer asks, the question is
// withdrawn and the run goes on with the new route, without a restart.
func (d *Dispatcher) RerouteWaiting() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ar := range d.active {
		select {
		case ar.routeChanged <- struct{}{}:
		default: // already told; one look at the route covers both
		}
	}
}

// route decides where an auto run's command runs. When the micro-VM it needs is not
// ready it asks the person, as the run's approval: the run shows waiting_approval with
// the question as its reason and holds no slot. An allow is recorded on the run, so a
// restart before the run starts does not ask again. It returns false when the run must
// not go on (its state is then recorded).
func (d *Dispatcher) route(ctx context.Context, ar *activeRun, r *Run, t Task, v gateVerdict) (*RoutePlan, bool) {
	rt := d.router()
	if rt == nil || v.policy.ExecutionMode != "auto" {
		return nil, true
	}
	q := RouteQuery{RunID: r.ID, Argv: t.Argv, Dir: v.dir, Policy: v.policy}
	plan := rt.Route(ctx, q)
	if plan.Where != RouteAsk {
		return &plan, true
	}
	if a := r.HostAllowed; allowanceCovers(a, t.Argv, v.dir) {
		// Allowed before a restart, for this very command: the answer stands. A task
		// edited since is asked again (covers is false).
		plan.Where, plan.Asked, plan.AnsweredBy = RouteHost, true, a.By
		return &plan, true
	}
	host := v.policy
	host.ExecutionMode = "local"
	req := ApprovalRequest{
		ID: fmt.Sprintf("run-%d-host", r.ID), Kind: ApprovalEscalation, Tool: "exec",
		Argv: t.Argv, RunID: r.ID, Task: t.Name, Department: t.Department, Cwd: v.dir,
		Policy: host, Denial: plan.Question,
	}
	dec, next, ok := d.askHost(ctx, ar, r, t, rt, q, req, plan.Question)
	if next != nil {
		d.resumeQueued(r, "the micro-VM became ready; waiting for its approval and a concurrency slot")
		return next, true
	}
	if !ok {
		// Ended without an answer (await recorded the state); on shutdown the run stays
		// waiting and the next start asks again, so nothing is audited then.
		switch r.Status {
		case StatusCancelled:
			rt.NotRun(q, plan, "not answered: the run was cancelled")
		case StatusExpired:
			rt.NotRun(q, plan, "not answered within the hold deadline")
		case StatusFailed:
			rt.NotRun(q, plan, "not asked: "+r.Reason)
		}
		return nil, false
	}
	if !dec.Allow {
		by := ""
		if dec.AnsweredBy != "" {
			by = " by " + dec.AnsweredBy
		}
		plan.AnsweredBy = dec.AnsweredBy
		rt.NotRun(q, plan, "denied"+by)
		d.finish(r, StatusDenied, fmt.Sprintf("%s; running it on the host was denied%s — install the micro-VM (`airlock sandbox install` or the Sandbox tab) to run it there", plan.Reason, by), nil)
		return nil, false
	}
	allowed := &HostAllowance{By: dec.AnsweredBy, Argv: t.Argv, Dir: v.dir, At: d.now().UTC()}
	if err := d.db.Model(&Run{ID: r.ID}).Select("host_allowed").Updates(&Run{HostAllowed: allowed}).Error; err != nil {
		// The run goes on; only a restart before it starts would ask again.
		slog.Warn("dispatch: record the host allowance", "run", r.ID, "err", err)
	}
	r.HostAllowed = allowed
	d.resumeQueued(r, "allowed on the host; waiting for its approval and a concurrency slot")
	plan.Where, plan.Asked, plan.AnsweredBy = RouteHost, true, dec.AnsweredBy
	return &plan, true
}

// askHost asks the host question. Meanwhile a RerouteWaiting routes the run again: when
// the Router no longer asks, the question is withdrawn (the broker drops the pending
// request, so the window and tray stop showing it) and next is the new plan.
func (d *Dispatcher) askHost(ctx context.Context, ar *activeRun, r *Run, t Task, rt Router, q RouteQuery, req ApprovalRequest, reason string) (dec ApprovalDecision, next *RoutePlan, ok bool) {
	actx, withdraw := context.WithCancelCause(ctx)
	defer withdraw(nil)
	var rerouted *RoutePlan
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-ar.routeChanged:
				if p := rt.Route(actx, q); p.Where != RouteAsk {
					rerouted = &p
					withdraw(errRerouted)
					return
				}
			}
		}
	}()
	dec, ok = d.await(actx, ar, r, t, req, reason)
	close(stop)
	<-watched
	// An answer that came first stands; a cancel by the person wins over a reroute.
	if !ok && rerouted != nil && errors.Is(context.Cause(actx), errRerouted) {
		return dec, rerouted, false
	}
	return dec, nil, ok
}

// placed is the run's policy as the approval sees it: under auto, where the command
// will run ("sandbox" in the micro-VM, "local" on the host), so the broker judges a VM
// command by the VM's guarantees and a host command as before.
func placed(p Policy, plan *RoutePlan) Policy {
	if plan == nil || p.ExecutionMode != "auto" {
		return p
	}
	switch plan.Where {
	case RouteMicroVM:
		p.ExecutionMode = "sandbox"
	case RouteHost:
		p.ExecutionMode = "local"
	}
	return p
}
