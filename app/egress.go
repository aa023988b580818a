package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/app/proc"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/dispatch/brokerapprovals"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/egress"
)

// egressConfig is the proxy configuration of one allowlist run: the policy's lists, each
// connection written to log (the run's log) and to the audit, and an unlisted domain
// asked as a P1 network_domain request through the broker when ask_unknown (otherwise
// refused; the proxy's answer then names allowed_domains).
func (c *Core) egressConfig(pol sandbox.Policy, log io.Writer, ask *permission.Request) egress.Config {
	lists := sandbox.DefaultNetworkLists()
	if pol.Allowlist != nil {
		lists = *pol.Allowlist
	}
	cfg := egress.Config{
		Allowed: lists.AllowedDomains, Denied: lists.DeniedDomains, AllowLocal: lists.AllowLocal,
		Log: func(r egress.Record) {
			if log != nil {
				fmt.Fprintf(log, "airlock: %s\n", r.LogLine())
			}
			if ask != nil {
				c.auditEgress(ask.Context, r)
			}
		},
	}
	if c.egressNet != nil {
		cfg.Resolver, cfg.Dial = c.egressNet.Resolver, c.egressNet.Dial
	}
	if lists.AskUnknown && ask != nil && c.Broker != nil {
		base := *ask
		// One question per destination: the run's concurrent connections to it wait on
		// the same request.
		asks := &sharedAsks{m: map[string]*sharedAsk{}}
		cfg.Decide = func(ctx context.Context, r egress.Request) (egress.Verdict, error) {
			return asks.do(ctx, net.JoinHostPort(r.Domain, strconv.Itoa(r.Port)), func(ctx context.Context) (egress.Verdict, error) {
				return c.askDomain(ctx, base, r, log)
			})
		}
	}
	return cfg
}

// egressNet is how the proxy resolves and dials, for tests only: nil (always, outside a
// test of this package) is the machine's own DNS and network. A test sets it to route
// made-up domains to a server on loopback, so allow_local can stay off while the agent
// reaches its fake model host (sandbox/egress/egresstest).
type egressNet struct {
	Resolver egress.Resolver
	Dial     func(ctx context.Context, network, addr string) (net.Conn, error)
}

// sharedAsks runs one question per key at a time: callers asking while it is open wait
// for the same answer. The question is withdrawn (its context cancelled) when every
// caller waiting on it has gone.
type sharedAsks struct {
	mu sync.Mutex
	m  map[string]*sharedAsk
}

type sharedAsk struct {
	done    chan struct{}
	v       egress.Verdict
	err     error
	waiters int
	cancel  context.CancelFunc
}

func (s *sharedAsks) do(ctx context.Context, key string, ask func(context.Context) (egress.Verdict, error)) (egress.Verdict, error) {
	s.mu.Lock()
	a := s.m[key]
	if a == nil {
		actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		a = &sharedAsk{done: make(chan struct{}), cancel: cancel}
		s.m[key] = a
		go func() {
			defer cancel()
			v, err := ask(actx)
			s.mu.Lock()
			a.v, a.err = v, err
			delete(s.m, key)
			s.mu.Unlock()
			close(a.done)
		}()
	}
	a.waiters++
	s.mu.Unlock()
	select {
	case <-a.done:
		return a.v, a.err
	case <-ctx.Done():
		s.mu.Lock()
		a.waiters--
		if a.waiters == 0 {
			a.cancel()
		}
		s.mu.Unlock()
		return egress.Deny, fmt.Errorf("waiting for the answer about %s: %w", key, ctx.Err())
	}
}

// networkDomainRequest turns a run's request template into the network_domain request
// for one destination.
func networkDomainRequest(base permission.Request, r egress.Request) permission.Request {
	params, _ := json.Marshal(map[string]any{"domain": r.Domain, "port": r.Port})
	req := base
	req.ID = "" // the broker names each question
	req.Tool, req.Params = permission.ToolNetworkDomain, params
	req.Escalation = nil
	req.Context.TaskArgv = nil // creating the task approved its command, not a destination
	return req
}

// askDomain asks the broker about an unlisted destination and waits for the answer; a
// remembered answer (session, task, department, always) becomes a grant the broker
// applies to the later requests it covers. A scheduled run gives back its concurrency
// slot while a person is asked, and takes one again before its connection goes on. Why
// a remembered grant allowed it, or why it was refused (the person's own reason
// included), goes to log, the run's log.
func (c *Core) askDomain(ctx context.Context, base permission.Request, r egress.Request, log io.Writer) (egress.Verdict, error) {
	req := networkDomainRequest(base, r)
	dest := net.JoinHostPort(r.Domain, strconv.Itoa(r.Port))
	// One sandbox's questions about destinations are one caller's, whose waiting
	// requests the broker caps: a flood of new names asks the person only so often.
	asker := "the network of the sandbox of " + base.Context.Caller.Description
	switch {
	case base.Context.Run != "":
		asker = "the network of the sandbox of run " + base.Context.Run
	case base.Context.Session != "":
		asker = "the network of the sandbox of session " + base.Context.Session
	}
	ctx = permission.WithCaller(ctx, asker)
	d, err := c.awaitForRun(ctx, req, "domain", func(id string) string {
		return fmt.Sprintf("waiting for you: may it connect to %s? (network_domain request %s)", dest, id)
	})
	if err != nil {
		return egress.Deny, fmt.Errorf("network_domain request for %s: %w", dest, err)
	}
	if d.Verdict == permission.Allow {
		if log != nil && d.Layer == permission.LayerGrant {
			fmt.Fprintf(log, "airlock: network: %s allowed without asking: %s\n", dest, strings.Join(d.Reasons, "; "))
		}
		return egress.Allow, nil
	}
	if log != nil && len(d.Reasons) > 0 {
		fmt.Fprintf(log, "airlock: network: %s refused: %s\n", dest, strings.Join(d.Reasons, "; "))
	}
	return egress.Deny, nil
}

// awaitForRun asks the broker about req, a request of the scheduled run req.Context.Run
// names, and waits for the decision. When a person is asked, the run gives back its
// concurrency slot meanwhile and shows as waiting for you, with why(request ID) as its
// reason (Dispatcher.WaitForPerson); its no-progress watchdog counts it as waiting; it
// takes a slot again before it goes on. kind names the request in its ID.
func (c *Core) awaitForRun(ctx context.Context, req permission.Request, kind string, why func(id string) string) (permission.Decision, error) {
	var resume func(context.Context) error
	if run, err := strconv.ParseUint(req.Context.Run, 10, 64); err == nil && c.Dispatch != nil && c.asksPerson(ctx, req) {
		req.ID = "run-" + req.Context.Run + "-" + kind + "-" + strings.ToLower(rand.Text())[:12]
		// A run's question is held as the run's own would be: until its task's hold
		// deadline, past which it expires, denied with the reason.
		if hold := c.holdDeadline(ctx, uint(run)); req.Timeout <= 0 || req.Timeout > hold {
			req.Timeout = hold
		}
		resume = c.Dispatch.WaitForPerson(uint(run), req.ID, why(req.ID))
	}
	d, err := c.Broker.Await(ctx, req)
	if resume != nil {
		if rerr := resume(ctx); rerr != nil && err == nil {
			err = rerr
		}
	}
	return d, err
}

// holdDeadline is how long a question of run id is held for the person: its task's
// hold deadline (dispatch.DefaultHoldDeadline when the task cannot be read).
func (c *Core) holdDeadline(ctx context.Context, id uint) time.Duration {
	if r, err := c.Dispatch.Run(ctx, id); err == nil {
		if t, err := c.Dispatch.Task(ctx, r.TaskName); err == nil && t.HoldDeadline > 0 {
			return t.HoldDeadline
		}
	}
	return dispatch.DefaultHoldDeadline
}

// asksPerson reports whether the broker would put req to a person (a before_tool_use
// hook may make any request ask, so with hooks it counts as asking).
func (c *Core) asksPerson(ctx context.Context, req permission.Request) bool {
	return len(c.Broker.Settings().BeforeHooks) > 0 || c.Broker.Check(ctx, req).Decision.Verdict == permission.Ask
}

// auditEgress writes one connection to the audit.
func (c *Core) auditEgress(pc permission.Context, r egress.Record) {
	if c.DB == nil {
		return
	}
	verdict := permission.Deny
	if r.Verdict == egress.Allow {
		verdict = permission.Allow
	}
	reasons, _ := json.Marshal([]string{r.LogLine()})
	rec := permission.AuditRecord{AuditRecord: api.AuditRecord{
		RequestID: fmt.Sprintf("run-%s-net-%d", pc.Run, r.Start.UnixNano()), Tool: permission.ToolNetworkDomain,
		Subject: r.Domain + ":" + strconv.Itoa(r.Port), Verdict: verdict, Layer: permission.LayerIsolation, Reasons: string(reasons),
		Run: pc.Run, Session: pc.Session, Cwd: pc.Cwd, AskedBy: "egress proxy", AnsweredBy: string(r.Reason), CreatedAt: time.Now().UTC(),
	}}
	if err := c.DB.Create(&rec).Error; err != nil {
		slog.Error("audit a network connection", "run", pc.Run, "domain", r.Domain, "err", err)
	}
}

// runEgress is the egress hook of one dispatch run under network_access = "allowlist".
// Its questions carry the run's task and department, so an answer may be remembered
// for them.
func (c *Core) runEgress(spec dispatch.ExecSpec, pol sandbox.Policy) sandbox.Egress {
	ar := dispatch.ApprovalRequest{RunID: spec.RunID, Cwd: spec.Dir, Policy: spec.Policy}
	if c.Dispatch != nil {
		ctx, cancel := context.WithTimeout(context.Background(), windowDBTimeout)
		run, err := c.Dispatch.Run(ctx, spec.RunID)
		cancel()
		if err != nil {
			slog.Warn("the run of an egress proxy: its questions name no task", "run", spec.RunID, "err", err)
		}
		ar.Task, ar.Department = run.TaskName, run.Department
	}
	base := brokerapprovals.Request(ar)
	return sandbox.Egress(egress.Hook(c.recordConnections(spec.RunID, c.egressConfig(pol, spec.Stderr, &base))))
}

// egressServers are the proxies the core serves for `airlock exec` sandboxes, by pid.
type egressServers struct {
	mu   sync.Mutex
	stop map[int]func()
}

func (g *egressServers) add(pid int, stop func()) {
	g.mu.Lock()
	old := g.stop[pid]
	g.stop[pid] = stop
	g.mu.Unlock()
	if old != nil {
		old()
	}
	go func() { // the sandbox gone without a word from its caller: the proxy goes too
		for {
			time.Sleep(2 * time.Second)
			if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
				g.remove(pid)
				return
			}
			g.mu.Lock()
			_, still := g.stop[pid]
			g.mu.Unlock()
			if !still {
				return
			}
		}
	}()
}

func (g *egressServers) remove(pid int) {
	g.mu.Lock()
	stop := g.stop[pid]
	delete(g.stop, pid)
	g.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// egressRoutes serve the proxy for the sandboxes of `airlock exec`: the CLI does not
// link it (its start-up cost would be paid by every exec), so it asks the core, which
// checks that the sandbox descends from the caller (as POST /v1/sandboxes does) and
// resolves the [network] lists for the run's directory itself: the caller's word
// chooses no list. Connections go to the audit; unknown domains ask the broker.
func (c *Core) egressRoutes() {
	servers := &egressServers{stop: map[int]func(){}}
	handle(c, api.ServeEgress, func(r *http.Request, b api.EgressIn) (api.EgressServed, error) {
		peer, err := callersSandbox(r, b)
		if err != nil {
			return api.EgressServed{}, err
		}
		allowlist := api.NetworkAllowlist
		res, err := policy.Resolve(c.policyInputs(b.Cwd, policy.Flags{Sandbox: sandbox.Layer{Network: &allowlist}}, false))
		if err != nil {
			return api.EgressServed{}, fmt.Errorf("the sandbox policy for %s: %w", b.Cwd, err)
		}
		pc := api.Context{Cwd: b.Cwd, Workspace: b.Cwd, Caller: api.Caller{PID: peer.PID, Description: "airlock exec"},
			Policy: api.PolicySummary{Mode: string(res.Sandbox.Mode), Network: allowlist, EgressConnected: true}}
		ask := permission.Request{Tool: permission.ToolNetworkDomain, Context: pc}
		stop, err := egress.Serve(context.Background(), b.PID, b.Addr, c.egressConfig(res.Sandbox, nil, &ask))
		if err != nil {
			return api.EgressServed{}, fmt.Errorf("serve the egress proxy for sandbox %d: %w", b.PID, err)
		}
		servers.add(b.PID, stop)
		return api.EgressServed{Serving: b.PID}, nil
	})
	handle(c, api.StopEgress, servers.stopRoute)
	// The ask-only channel of an `airlock exec` sandbox: its requests are tagged with the
	// sandbox's directory and the policy the core resolves there, a session of its own.
	channels := &egressServers{stop: map[int]func(){}}
	handle(c, api.ServeAsk, func(r *http.Request, b api.EgressIn) (api.EgressServed, error) {
		peer, err := callersSandbox(r, b)
		if err != nil {
			return api.EgressServed{}, err
		}
		res, err := policy.Resolve(c.policyInputs(b.Cwd, policy.Flags{}, false))
		if err != nil {
			return api.EgressServed{}, fmt.Errorf("the sandbox policy for %s: %w", b.Cwd, err)
		}
		session, caller := b.Session, b.Caller
		if session == "" {
			session = "exec-" + strconv.Itoa(b.PID)
		}
		if caller == "" {
			caller = "airlock exec"
		}
		session, caller = api.Label(session, api.LabelName), api.Label(caller, 32)
		id := api.Context{Session: session, Cwd: b.Cwd, Workspace: b.Cwd,
			Caller: api.Caller{PID: peer.PID, Description: caller},
			Policy: api.PolicySummary{Mode: string(res.Sandbox.Mode), Network: res.Sandbox.Network}}
		stop, err := c.askChannel(id)(context.Background(), b.PID, b.Addr)
		if err != nil {
			return api.EgressServed{}, fmt.Errorf("serve the ask-only channel for sandbox %d: %w", b.PID, err)
		}
		channels.add(b.PID, stop)
		return api.EgressServed{Serving: b.PID}, nil
	})
	handle(c, api.StopAsk, channels.stopRoute)
}

// callersSandbox checks that the sandbox a ServeEgress or ServeAsk body names descends
// from the caller (as POST /v1/sandboxes does) and that its directory is absolute.
func callersSandbox(r *http.Request, b api.EgressIn) (localapi.Peer, error) {
	peer, _ := localapi.PeerFrom(r.Context())
	if b.PID <= 0 || !peer.Unix || !proc.DescendsFrom(b.PID, peer.PID) {
		return peer, api.Errorf(http.StatusBadRequest, api.CodeNotYourSandbox,
			fmt.Sprintf("pid %d is not a process the caller started", b.PID), "ask for the services of your own sandboxes only")
	}
	if !filepath.IsAbs(b.Cwd) {
		return peer, api.Errorf(http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("cwd %q is not an absolute path", b.Cwd), "")
	}
	return peer, nil
}

// stopRoute ends the service of the sandbox the path's {pid} names.
func (g *egressServers) stopRoute(r *http.Request, _ api.None) (api.EgressStopped, error) {
	pid, err := strconv.Atoi(r.PathValue("pid"))
	if err != nil {
		return api.EgressStopped{}, api.Errorf(http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("pid %q is not a number", r.PathValue("pid")), "")
	}
	g.remove(pid)
	return api.EgressStopped{Stopped: pid}, nil
}
