package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/permission/preflight"
	"github.com/airlock-app/airlock/redact"
)

// permissionSettings maps config.toml's permission keys onto the broker's settings.
func permissionSettings(f config.File) permission.Settings {
	var s permission.Settings
	if f.ApprovalPolicy != nil {
		s.ApprovalPolicy = *f.ApprovalPolicy
	}
	if f.ApprovalsReviewer != nil {
		s.ApprovalsReviewer = *f.ApprovalsReviewer
	}
	s.Permission.Tiers = f.Permission.Tiers
	s.Permission.RequestTimeout = f.Permission.RequestTimeout
	for _, r := range f.Permission.Rules {
		s.Permission.Rules = append(s.Permission.Rules, permission.RuleSetting{Tool: r.Tool, Pattern: r.Pattern, Action: r.Action})
	}
	for _, h := range f.Hooks.BeforeToolUse {
		s.Hooks.BeforeToolUse = append(s.Hooks.BeforeToolUse, permission.HookSetting{Command: h.Command, Tools: h.Tools, Timeout: h.Timeout})
	}
	for _, h := range f.Hooks.AfterToolUse {
		s.Hooks.AfterToolUse = append(s.Hooks.AfterToolUse, permission.HookSetting{Command: h.Command, Tools: h.Tools, Timeout: h.Timeout})
	}
	s.Reviewer.Command = f.Reviewer.Command
	s.Reviewer.Timeout = f.Reviewer.Timeout
	s.Ops.Strict = f.Ops.Strict
	return s
}

// preflightOptions tell the classifier where Airlock keeps what an agent must not touch.
func (c *Core) preflightOptions() preflight.Options {
	return preflight.Options{Home: c.getenv("HOME"), AirlockPaths: []string{
		c.Paths.ConfigFile, c.Paths.DataDir, c.Paths.Database, c.Paths.RuntimeDir, c.Paths.Socket,
	}}
}

func (c *Core) openPermission(ctx context.Context) error {
	eff, err := c.resolvePermission()
	if err != nil {
		return fmt.Errorf("permission settings: %w", err)
	}
	c.Broker, err = permission.NewBroker(ctx, permission.BrokerOptions{
		DB: c.DB, Settings: eff, Publisher: c.Bus, Preflight: c.preflightOptions(), SettingsFor: c.permissionFor,
		Isolation: permission.SandboxIsolation{PolicyFor: c.sandboxPolicyFor},
	})
	return err
}

// RevokeGrant revokes a remembered allow (the next identical request asks again) and
// tells the windows (grants.changed).
func (c *Core) RevokeGrant(ctx context.Context, id string) error {
	if err := c.Broker.Grants().Revoke(ctx, id); err != nil {
		return err
	}
	c.Bus.Publish(api.TopicGrantsChanged, api.GrantsChanged{Revoked: id})
	return nil
}

// answerRequest is the body of POST /v1/approvals/{id}/answer. Who answered is not in
// it: the core sets that from how the answer arrived (answerer), so a `by` or
// `interactive` the caller sends is ignored.
type answerRequest struct {
	Allow   bool             `json:"allow"`
	Scope   permission.Scope `json:"scope,omitempty"`
	Pattern string           `json:"pattern,omitempty"`
	Reason  string           `json:"reason,omitempty"`
	personProof
	// By and Interactive are accepted and ignored: a caller's word for who it is.
	By          string `json:"by,omitempty"`
	Interactive bool   `json:"interactive,omitempty"`
}

func (c *Core) permissionRoutes() {
	c.api.Handle("POST /v1/permission/check", func(w http.ResponseWriter, r *http.Request) {
		var req permission.Request
		if err := localapi.ReadJSON(r, &req); err != nil {
			localapi.WriteError(w, err)
			return
		}
		localapi.WriteJSON(w, http.StatusOK, c.Broker.Check(r.Context(), req))
	})
	// Await blocks until the request is decided or the caller hangs up.
	c.api.Handle("POST /v1/permission/await", func(w http.ResponseWriter, r *http.Request) {
		var req permission.Request
		if err := localapi.ReadJSON(r, &req); err != nil {
			localapi.WriteError(w, err)
			return
		}
		if peer, ok := localapi.PeerFrom(r.Context()); ok && peer.PID > 0 {
			req.Context.Caller.PID = peer.PID
		}
		d, err := c.Broker.Await(r.Context(), req)
		if err != nil {
			localapi.WriteError(w, apiError(err))
			return
		}
		c.noteDenial(r.Context(), req, d)
		localapi.WriteJSON(w, http.StatusOK, d)
	})
	c.api.Handle("GET /v1/approvals", func(w http.ResponseWriter, r *http.Request) {
		localapi.WriteJSON(w, http.StatusOK, c.Broker.Pending())
	})
	// How a person at a terminal proves presence: the CLI asks the password under os.
	c.api.Handle("GET /v1/approvals/proof", func(w http.ResponseWriter, r *http.Request) {
		localapi.WriteJSON(w, http.StatusOK, c.Proof())
	})
	c.api.Handle("POST /v1/approvals/{id}/answer", func(w http.ResponseWriter, r *http.Request) {
		var a answerRequest
		if err := localapi.ReadJSON(r, &a); err != nil {
			localapi.WriteError(w, err)
			return
		}
		id := r.PathValue("id")
		by, err := c.answerer(r, a.personProof, func(typed string) bool {
			// The first 6 characters of the id, or the whole id when it is shorter (run-2).
			return len(typed) >= min(6, len(id)) && strings.HasPrefix(id, typed)
		})
		if err != nil {
			localapi.WriteError(w, err)
			return
		}
		d, err := c.Broker.Answer(r.Context(), id, permission.Answer{Allow: a.Allow, Scope: a.Scope, Pattern: a.Pattern,
			Reason: a.Reason, By: by, Interactive: permission.ByPerson(by)})
		if err != nil {
			localapi.WriteError(w, apiError(err))
			return
		}
		localapi.WriteJSON(w, http.StatusOK, d)
	})
	c.api.Handle("GET /v1/grants", func(w http.ResponseWriter, r *http.Request) {
		list, err := c.Broker.Grants().List(r.Context(), permission.GrantFilter{})
		if err != nil {
			localapi.WriteError(w, err)
			return
		}
		localapi.WriteJSON(w, http.StatusOK, list)
	})
	c.api.Handle("DELETE /v1/grants/{id}", func(w http.ResponseWriter, r *http.Request) {
		if err := c.RevokeGrant(r.Context(), r.PathValue("id")); err != nil {
			localapi.WriteError(w, apiError(err))
			return
		}
		localapi.WriteJSON(w, http.StatusOK, map[string]string{"revoked": r.PathValue("id")})
	})
	c.api.Handle("GET /v1/audit", func(w http.ResponseWriter, r *http.Request) {
		q := permission.AuditQuery{Tool: r.URL.Query().Get("tool"), Run: r.URL.Query().Get("run"),
			Session: r.URL.Query().Get("session"), Verdict: permission.Verdict(r.URL.Query().Get("verdict"))}
		if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil {
			q.Limit = n
		}
		if s := r.URL.Query().Get("since"); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil {
				localapi.WriteError(w, &api.Error{Status: http.StatusBadRequest, Code: "bad_since", Message: fmt.Sprintf("since=%q is not a duration", s), Hint: "use for example since=24h"})
				return
			}
			q.Since = time.Now().Add(-d)
		}
		_ = c.Broker.FlushAudit(r.Context())
		recs, err := c.Broker.Audit(r.Context(), q)
		if err != nil {
			localapi.WriteError(w, err)
			return
		}
		localapi.WriteJSON(w, http.StatusOK, recs)
	})
}

// noteDenial tells dispatch about a denied tool call made during one of its runs
// (the run's processes carry AIRLOCK_RUN_ID): the same request denied three times
// pauses the run instead of letting an agent retry in a loop.
func (c *Core) noteDenial(ctx context.Context, req permission.Request, d permission.Decision) {
	if d.Verdict != permission.Deny || req.Context.Run == "" || c.Dispatch == nil {
		return
	}
	id, err := strconv.ParseUint(req.Context.Run, 10, 64)
	if err != nil {
		return
	}
	subject := req.Tool + " " + req.Subject()
	if paused, err := c.Dispatch.RecordDenial(ctx, uint(id), subject); err != nil {
		slog.Warn("record a denial for its run", "run", id, "error", err)
	} else if paused {
		slog.Info("run paused after the same request was denied three times", "run", id, "request", redact.String(subject))
	}
}
