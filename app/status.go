package app

import (
	"context"
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

// Status gathers the status: what runs, where its data lives, and what is wrong (GET
// /v1/status and the window's Settings). ctx bounds the keyring's check.
func (c *Core) Status(ctx context.Context) api.Status {
	kr := api.KeyringView{OK: true, Store: string(c.Secrets.Kind()), Where: c.Secrets.Where()}
	kctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := c.Secrets.Check(kctx); err != nil {
		kr.OK, kr.Error = false, err.Error()
	}
	var sb *api.SandboxSummary
	select {
	case <-c.sandbox.done: // the probes' summary only once they are done: never wait for them here
		if st, err := c.SandboxStatus(ctx); err == nil {
			sb = &api.SandboxSummary{Backend: st.Backend, Warning: st.Warning, Error: st.Error, Indicator: st.Indicator}
		}
	default:
	}
	proof := c.Proof()
	return api.Status{
		Kind: string(c.Kind), PID: os.Getpid(), Version: buildinfo.Version, StartedAt: c.StartedAt,
		Uptime: time.Since(c.StartedAt).Round(time.Second).String(), Paths: c.Paths,
		Config: c.ConfigView(), Keyring: kr, Previous: c.Previous, Sandbox: sb, Approvals: &proof,
		Attended: c.attended(), TCPAddress: c.tcpAddress, TCPFrom: c.tcpFrom,
	}
}

// ConfigView is the configuration's health and its effective values as the core sees
// them (GET /v1/config, the window's Settings and the config.changed event).
func (c *Core) ConfigView() api.ConfigView {
	st := c.Config.State()
	v := api.ConfigView{Path: st.Path, Exists: st.Exists, LoadedAt: st.LoadedAt, Error: st.Error, Pending: st.Pending}
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

// apiToken returns the loopback listener's bearer token, minting it in the secret store
// the first time.
func (c *Core) apiToken(ctx context.Context) (string, error) {
	store := c.Secrets
	if c.Config == nil {
		// The listener asks before the configuration is open (the single-instance lock
		// comes first): the store config.toml chooses, read from the file now.
		var err error
		if store, err = c.configuredStore(); err != nil {
			return "", err
		}
	}
	return secrets.Token(ctx, store, "api.token")
}

// configuredStore opens the secret store config.toml's `[secrets] store` chooses, read
// from the file itself (no file: the keyring).
func (c *Core) configuredStore() (secrets.Backend, error) {
	f, err := c.fileBeforeOpen()
	if err != nil {
		return nil, fmt.Errorf("the secret store config.toml chooses: %w", err)
	}
	return secrets.Open(secrets.Kind(f.SecretStore()), c.Paths.DataDir)
}

// fileBeforeOpen is config.toml as parsed, for what is needed before the configuration
// is open (the zero File when there is none).
func (c *Core) fileBeforeOpen() (config.File, error) {
	data, err := config.ReadFile(c.Paths.ConfigFile)
	switch {
	case err == nil:
		return config.Parse(c.Paths.ConfigFile, data)
	case errors.Is(err, os.ErrNotExist):
		return config.File{}, nil
	}
	return config.File{}, fmt.Errorf("read %s: %w", c.Paths.ConfigFile, err)
}

func (c *Core) routes() {
	handle(c, api.GetStatus, func(r *http.Request, _ api.None) (api.Status, error) {
		return c.Status(r.Context()), nil
	})
	handle(c, api.GetConfig, func(*http.Request, api.None) (api.ConfigView, error) {
		return c.ConfigView(), nil
	})
	handle(c, api.ConfirmConfig, func(r *http.Request, in api.ConfigConfirmIn) (api.ConfigView, error) {
		return c.ConfirmConfig(APICaller(r, in.Proof), in.Digest)
	})
	// Served raw (a stream, not one JSON answer), under the table's pattern.
	c.api.Handle(api.EventStream.Pattern(), localapi.EventsHandler(c.Bus))
}
