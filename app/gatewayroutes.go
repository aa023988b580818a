package app

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/proc"
)

// gatewayRoutes serve the MCP server and the hook adapter (package app/gateway, which
// runs in the `airlock` CLI and reaches the core only through these routes).
func (c *Core) gatewayRoutes() {
	// The outcome of an allowed call, for the after_tool_use hooks. The hooks run in the
	// background: the caller (an agent's hook) must not wait for them.
	handle(c, api.PermissionAfter, func(r *http.Request, b api.AfterToolUse) (api.Accepted, error) {
		return c.afterToolUse(b)
	})
	// An agent asks the person to approve a plan. The broker's ops_approve request is
	// interactive-only: it waits until a person answers in the window or at a terminal,
	// and only then is the token minted, attested by that answer.
	handle(c, api.OpsApproveRequest, func(r *http.Request, b api.ApproveRequestBody) (api.ApproveRequestAnswer, error) {
		d, res, err := c.OpsApproveRequest(APICaller(r, api.Proof{}), r.PathValue("id"), b.TTL, b.Context)
		return api.ApproveRequestAnswer{Decision: d, Approval: res}, err
	})
	// The MCP server registers the host pid of each bash sandbox it starts, so the API
	// refuses state-changing requests from inside it even where namespaces do not tell.
	reg := &gatewaySandboxes{forget: map[int]func(){}}
	handle(c, api.RegisterSandbox, func(r *http.Request, b api.SandboxIn) (api.SandboxRegistered, error) {
		peer, _ := localapi.PeerFrom(r.Context())
		if b.PID <= 0 || !peer.Unix || !proc.DescendsFrom(b.PID, peer.PID) {
			return api.SandboxRegistered{}, api.Errorf(http.StatusBadRequest, api.CodeNotYourSandbox,
				fmt.Sprintf("pid %d is not a process the caller started", b.PID),
				"register only the sandboxes your own process started")
		}
		reg.add(b.PID, c.RegisterSandbox(b.PID))
		return api.SandboxRegistered{Registered: b.PID}, nil
	})
	handle(c, api.ForgetSandbox, func(r *http.Request, _ api.None) (api.SandboxForgotten, error) {
		pid, err := strconv.Atoi(r.PathValue("pid"))
		if err != nil {
			return api.SandboxForgotten{}, api.Errorf(http.StatusBadRequest, api.CodeBadRequest,
				fmt.Sprintf("pid %q is not a number", r.PathValue("pid")), "")
		}
		reg.remove(pid)
		return api.SandboxForgotten{Forgotten: pid}, nil
	})
}

// gatewaySandboxes remembers the registrations made over the API; each is also dropped
// when its process is gone, in case the caller died before saying so.
type gatewaySandboxes struct {
	mu     sync.Mutex
	forget map[int]func()
}

func (g *gatewaySandboxes) add(pid int, forget func()) {
	g.mu.Lock()
	if old, ok := g.forget[pid]; ok {
		old()
	}
	g.forget[pid] = forget
	g.mu.Unlock()
	go func() {
		for {
			time.Sleep(2 * time.Second)
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
				g.remove(pid)
				return
			}
			g.mu.Lock()
			_, still := g.forget[pid]
			g.mu.Unlock()
			if !still {
				return
			}
		}
	}()
}

func (g *gatewaySandboxes) remove(pid int) {
	g.mu.Lock()
	f, ok := g.forget[pid]
	delete(g.forget, pid)
	g.mu.Unlock()
	if ok {
		f()
	}
}

// afterToolUse hands an allowed call's outcome to the after_tool_use hooks, in the
// background: the caller (an agent's hook) must not wait for them.
func (c *Core) afterToolUse(b api.AfterToolUse) (api.Accepted, error) {
	br, err := c.broker()
	if err != nil {
		return api.Accepted{}, err
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		br.AfterToolUse(ctx, b.Request, b.Decision, b.Outcome)
	}()
	return api.Accepted{Accepted: true}, nil
}
