package app

import (
	"errors"
	"log/slog"
	"net/http"
	"os"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/permission"
)

// ConfirmConfig takes a waiting config.toml into force: one that loosens the answer
// path (config.Guard) waits for the person, in the window or with the proof at a
// terminal. digest names the file the person saw ("" takes what waits now). A PAM
// service that lets the caller through without a password is refused here, before
// it could be the proof.
func (c *Core) ConfirmConfig(cl Caller, digest string) (api.ConfigView, error) {
	by, err := c.who(cl, nil)
	if err != nil {
		return api.ConfigView{}, err
	}
	if !permission.ByPerson(by) {
		return api.ConfigView{}, c.needPerson("confirming a config.toml that loosens the answer path", config.ConfirmCommand)
	}
	next, waiting, ok := c.Config.PendingFile()
	switch {
	case !ok:
		return api.ConfigView{}, confirmError(config.ErrNothingPending)
	case digest != "" && digest != waiting:
		return api.ConfigView{}, confirmError(config.ErrPendingChanged)
	}
	digest = waiting // what is checked below is what is confirmed
	if v := next.Approvals.PAMService; v != nil && *v != "" {
		uid := os.Getuid()
		if !cl.window {
			if peer, ok := localapi.PeerFrom(cl.Context()); ok && peer.Unix {
				uid = peer.UID
			}
		}
		name, err := c.presence.userName(uid)
		if err != nil {
			return api.ConfigView{}, err
		}
		if err := c.presence.needsPassword(cl.Context(), *v, name); err != nil {
			return api.ConfigView{}, &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalid,
				Message: "config.toml's pam_service is refused: " + err.Error(),
				Hint:    "fix [approvals] pam_service in config.toml; until then the values in force stay"}
		}
	}
	keys := pendingKeys(c.Config.State())
	if _, err := c.Config.Confirm(digest); err != nil {
		return api.ConfigView{}, confirmError(err)
	}
	slog.Warn("the person confirmed a looser config.toml", "by", by, "keys", keys)
	return c.ConfigView(), nil
}

// confirmError is a refused confirmation with its way out.
func confirmError(err error) error {
	switch {
	case errors.Is(err, config.ErrPendingChanged):
		return api.Errorf(http.StatusConflict, api.CodeConflict, err.Error(),
			"run `"+config.ConfirmCommand+"` again: it confirms what waits now")
	case errors.Is(err, config.ErrNothingPending):
		return api.Errorf(http.StatusConflict, api.CodeConflict, err.Error(),
			"`airlock status` shows the configuration in force")
	}
	return err
}

func pendingKeys(st config.State) []string {
	if st.Pending == nil {
		return nil
	}
	return st.Pending.Keys
}
