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

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/secrets"
)

// Status is what `airlock status` prints: what runs, where its data lives, and what is wrong.
type Status struct {
	Kind      Kind        `json:"kind"`
	PID       int         `json:"pid"`
	Version   string      `json:"version"`
	StartedAt time.Time   `json:"startedAt"`
	Uptime    string      `json:"uptime"`
	Paths     Paths       `json:"paths"`
	Config    ConfigView  `json:"config"`
	Keyring   KeyringView `json:"keyring"`
	// Previous is the start before this one; previous.clean false means it was killed.
	Previous *PreviousStart `json:"previous,omitempty"`
}

// ConfigView is the configuration's health and its effective values.
type ConfigView struct {
	Path     string           `json:"path"`
	Exists   bool             `json:"exists"`
	LoadedAt time.Time        `json:"loadedAt"`
	Error    *config.Error    `json:"error,omitempty"`
	Settings []config.Setting `json:"settings"`
}

// KeyringView says whether the OS keyring answers.
type KeyringView struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Status gathers the status.
func (c *Core) Status(ctx context.Context) Status {
	kr := KeyringView{OK: true}
	kctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := c.Secrets.Check(kctx); err != nil {
		kr = KeyringView{Error: err.Error()}
	}
	return Status{
		Kind: c.Kind, PID: os.Getpid(), Version: Version, StartedAt: c.StartedAt,
		Uptime: time.Since(c.StartedAt).Round(time.Second).String(), Paths: c.Paths,
		Config: c.configView(), Keyring: kr, Previous: c.Previous,
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
	c.api.Handle("GET /v1/events", localapi.EventsHandler(c.Bus))
}
