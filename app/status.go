package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/buildinfo"

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/secrets"
)

// Status is the wire status; the core fills it.
type Status = localapi.Status

// ConfigView is the configuration's health and effective values.
type ConfigView = localapi.ConfigView

// Status gathers the status.
func (c *Core) Status(ctx context.Context) Status {
	kr := localapi.KeyringView{OK: true}
	kctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := c.Secrets.Check(kctx); err != nil {
		kr = localapi.KeyringView{Error: err.Error()}
	}
	var sb *localapi.SandboxSummary
	select {
	case <-c.sandbox.done:
		st, _ := c.SandboxStatus(ctx)
		sb = &localapi.SandboxSummary{Backend: st.Backend, Warning: st.Warning, Error: st.Error}
	default:
	}
	proof := c.Proof()
	return Status{
		Kind: string(c.Kind), PID: os.Getpid(), Version: buildinfo.Version, StartedAt: c.StartedAt,
		Uptime: time.Since(c.StartedAt).Round(time.Second).String(), Paths: c.Paths,
		Config: c.configView(), Keyring: kr, Previous: c.Previous, Sandbox: sb, Approvals: &proof,
	}
}

func (c *Core) configView() ConfigView {
	st := c.Config.State()
	v := ConfigView{Path: st.Path, Exists: st.Exists, LoadedAt: st.LoadedAt, Error: st.Error}
	if v.Error == nil && c.startupErr != nil && st.LoadedAt.IsZero() {
		v.Error = c.startupErr
	}
	settings, err := config.Effective(st.File, st.Path, c.getenv, c.flags)
	if err != nil {
		v.Error = &config.Error{Path: "environment", Problems: []config.Problem{{Message: err.Error()}}}
		settings, _ = config.Effective(st.File, st.Path, func(string) string { return "" }, c.flags)
	}
	v.Settings = settings
	return v
}

// ConfigView returns the configuration's health and effective values.
func (c *Core) ConfigView() ConfigView { return c.configView() }

// apiToken returns the loopback listener's bearer token, minting it in the keyring the
// first time.
func (c *Core) apiToken(ctx context.Context) (string, error) {
	tok, err := c.Secrets.Get(ctx, "api.token")
	if err == nil {
		return tok, nil
	}
	if !errors.Is(err, secrets.ErrNotFound) {
		return "", err
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("mint API token: %w", err)
	}
	tok = base64.RawURLEncoding.EncodeToString(buf)
	if err := c.Secrets.Set(ctx, "api.token", tok); err != nil {
		return "", err
	}
	return tok, nil
}

func (c *Core) routes() {
	c.api.Handle("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		localapi.WriteJSON(w, http.StatusOK, c.Status(r.Context()))
	})
	c.api.Handle("GET /v1/config", func(w http.ResponseWriter, r *http.Request) {
		localapi.WriteJSON(w, http.StatusOK, c.configView())
	})
	// Served raw (a stream, not one JSON answer), under the table's pattern.
	c.api.Handle(api.EventStream.Pattern(), localapi.EventsHandler(c.Bus))
}
