package app

import (
	"context"
	"net/http"
	"sync"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/sandbox"
)

// sandboxState holds the start-up probes' result, probed once in the background so a
// slow probe never delays the window.
type sandboxState struct {
	mu     sync.Mutex
	status *sandbox.Status
	done   chan struct{}
}

// probeSandbox runs the start-up probes for the configured backend and publishes them.
func (c *Core) probeSandbox(ctx context.Context) {
	requested := sandbox.BackendAuto
	if p, err := c.effectiveSandboxBackend(); err == nil {
		requested = p
	}
	st := sandbox.ProbeStatus(ctx, requested)
	c.sandbox.mu.Lock()
	c.sandbox.status = &st
	c.sandbox.mu.Unlock()
	close(c.sandbox.done)
	c.Bus.Publish(api.TopicSandboxStatus, api.SandboxStatusChanged{Requested: string(st.Requested), Backend: st.Backend, Warning: st.Warning, Error: st.Error})
}

// effectiveSandboxBackend is the backend the one resolution gives (flags > environment
// > config.toml > default), the one the probes evaluate.
func (c *Core) effectiveSandboxBackend() (sandbox.Backend, error) {
	g, err := policy.Global(c.policyInputs("", policy.Flags{}, false))
	if err != nil {
		return sandbox.BackendAuto, err
	}
	return g.Backend, nil
}

// errProbing answers a sandbox status asked for before the start-up probes finished;
// the sandbox.status event brings their result when they do.
var errProbing = api.Errorf(http.StatusServiceUnavailable, api.CodeProbing, "the sandbox probes have not finished yet", "")

// SandboxStatus waits for the start-up probes (or ctx) and returns their result (GET
// /v1/sandbox/status and the window's Sandbox tab); an *api.Error with CodeProbing when
// ctx ends first.
func (c *Core) SandboxStatus(ctx context.Context) (api.SandboxStatus, error) {
	select {
	case <-c.sandbox.done:
	case <-ctx.Done():
		return api.SandboxStatus{}, errProbing
	}
	c.sandbox.mu.Lock()
	defer c.sandbox.mu.Unlock()
	return *c.sandbox.status, nil
}

func (c *Core) sandboxRoutes() {
	handle(c, api.GetSandboxStatus, func(r *http.Request, _ api.None) (api.SandboxStatus, error) {
		return c.SandboxStatus(r.Context())
	})
}
