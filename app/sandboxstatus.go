package app

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
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
	ind := c.publishSandboxStatus(st)
	logIndicator(ind)
}

// logIndicator says at start-up, in the core's log, when the sandbox is not all it
// promises: a missing or degraded OS sandbox, or full-access, with the way out.
func logIndicator(ind api.SandboxIndicator) {
	switch ind.Level {
	case api.IndicatorRed:
		slog.Error("sandbox: "+ind.Words, "reasons", strings.Join(ind.Reasons, "; "), "fix", ind.Fix)
	case api.IndicatorAmber:
		slog.Warn("sandbox: "+ind.Words, "reasons", strings.Join(ind.Reasons, "; "), "fix", ind.Fix)
	}
}

// publishSandboxStatus publishes sandbox.status with the indicator for the policy in
// force now, and returns that indicator.
func (c *Core) publishSandboxStatus(st sandbox.Status) api.SandboxIndicator {
	ind := c.indicator(st)
	c.Bus.Publish(api.TopicSandboxStatus, api.SandboxStatusChanged{Requested: st.Requested, Backend: st.Backend, Warning: st.Warning, Error: st.Error, Indicator: ind})
	return ind
}

// sandboxConfigChanged re-publishes sandbox.status after config.toml changed: the
// indicator follows sandbox_mode and network_access. Nothing while the probes run (their
// end publishes it).
func (c *Core) sandboxConfigChanged() {
	select {
	case <-c.sandbox.done:
	default:
		return
	}
	c.sandbox.mu.Lock()
	st := *c.sandbox.status
	c.sandbox.mu.Unlock()
	c.publishSandboxStatus(st)
}

// indicator is sandbox.Indicate for the global policy in force (flags > environment >
// config.toml > default). A policy that does not resolve is judged as the defaults'.
func (c *Core) indicator(st sandbox.Status) api.SandboxIndicator {
	g, err := policy.Global(c.policyInputs("", policy.Flags{}, false))
	if err != nil {
		slog.Warn("sandbox indicator: the global policy does not resolve", "error", err)
	}
	return sandbox.Indicate(st, g)
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
	st := *c.sandbox.status
	c.sandbox.mu.Unlock()
	st.Indicator = c.indicator(st)
	return st, nil
}

// SandboxIndicator is the sandbox indicator now, without waiting: false while the
// start-up probes run (their sandbox.status event brings it).
func (c *Core) SandboxIndicator() (api.SandboxIndicator, bool) {
	select {
	case <-c.sandbox.done:
	default:
		return api.SandboxIndicator{}, false
	}
	c.sandbox.mu.Lock()
	st := *c.sandbox.status
	c.sandbox.mu.Unlock()
	return c.indicator(st), true
}

func (c *Core) sandboxRoutes() {
	handle(c, api.GetSandboxStatus, func(r *http.Request, _ api.None) (api.SandboxStatus, error) {
		return c.SandboxStatus(r.Context())
	})
}
