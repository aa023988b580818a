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
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/permission"
)

// afterToolUseBody is the body of POST /v1/permission/after.
type afterToolUseBody struct {
	Request  permission.Request  `json:"request"`
	Decision permission.Decision `json:"decision"`
	Outcome  permission.Outcome  `json:"outcome"`
}

// approveRequestBody is the body of POST /v1/ops/plans/{id}/approve-request.
type approveRequestBody struct {
	TTL     string             `json:"ttl,omitempty"`
	Context permission.Context `json:"context"`
}

// approveRequestAnswer is what the agent gets back: the person's decision and, when they
// approved, the token (shown this once).
type approveRequestAnswer struct {
	Decision permission.Decision `json:"decision"`
	Approval *ops.ApproveResult  `json:"approval,omitempty"`
}

// sandboxBody is the body of POST /v1/sandboxes.
type sandboxBody struct {
	PID int `json:"pid"`
}

// gatewayRoutes serve the MCP server and the hook adapter (package app/gateway, which
// runs in the `airlock` CLI and reaches the core only through these routes).
func (c *Core) gatewayRoutes() {
	h := c.api.Handle
	// The outcome of an allowed call, for the after_tool_use hooks. The hooks run in the
	// background: the caller (an agent's hook) must not wait for them.
	h("POST /v1/permission/after", func(w http.ResponseWriter, r *http.Request) {
		var b afterToolUseBody
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c.Broker.AfterToolUse(ctx, b.Request, b.Decision, b.Outcome)
		}()
		localapi.WriteJSON(w, http.StatusAccepted, map[string]bool{"accepted": true})
	})
	// An agent asks the person to approve a plan. The broker's ops_approve request is
	// interactive-only: it waits until a person answers in the window or at a terminal,
	// and only then is the token minted, attested by that answer.
	h("POST /v1/ops/plans/{id}/approve-request", func(w http.ResponseWriter, r *http.Request) {
		var b approveRequestBody
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		d, res, err := c.OpsApproveRequest(APICaller(r, api.Proof{}), r.PathValue("id"), b.TTL, b.Context)
		if err != nil {
			localapi.WriteError(w, apiError(err))
			return
		}
		localapi.WriteJSON(w, http.StatusOK, approveRequestAnswer{Decision: d, Approval: res})
	})
	// The MCP server registers the host pid of each bash sandbox it starts, so the API
	// refuses state-changing requests from inside it even where namespaces do not tell.
	reg := &gatewaySandboxes{forget: map[int]func(){}}
	h("POST /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		var b sandboxBody
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		peer, _ := localapi.PeerFrom(r.Context())
		if b.PID <= 0 || !peer.Unix || !descendsFrom(b.PID, peer.PID) {
			localapi.WriteError(w, &api.Error{Status: http.StatusBadRequest, Code: "not_your_sandbox",
				Message: fmt.Sprintf("pid %d is not a process the caller started", b.PID),
				Hint:    "register only the sandboxes your own process started"})
			return
		}
		reg.add(b.PID, c.RegisterSandbox(b.PID))
		localapi.WriteJSON(w, http.StatusOK, map[string]int{"registered": b.PID})
	})
	h("DELETE /v1/sandboxes/{pid}", func(w http.ResponseWriter, r *http.Request) {
		pid, err := strconv.Atoi(r.PathValue("pid"))
		if err != nil {
			localapi.WriteError(w, &api.Error{Status: http.StatusBadRequest, Code: "bad_pid", Message: "the pid is not a number"})
			return
		}
		reg.remove(pid)
		localapi.WriteJSON(w, http.StatusOK, map[string]int{"forgotten": pid})
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
