package app

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/secrets"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/ops/sandboxrunner"
	"github.com/airlock-app/airlock/permission"
)

// registeringRunner runs ops commands in the sandbox and records each sandbox's pid
// for as long as it runs, so the local API refuses requests from inside it.
type registeringRunner struct {
	core  *Core
	inner sandboxrunner.Runner
}

func (r registeringRunner) Run(ctx context.Context, spec ops.RunSpec) (ops.RunResult, error) {
	inner := r.inner
	onStart, done := r.core.trackSandboxes(inner.OnStart)
	defer done()
	inner.OnStart = onStart
	return inner.Run(ctx, spec)
}

func (c *Core) openOps(ctx context.Context) error {
	runner := registeringRunner{core: c, inner: sandboxrunner.Runner{
		Policy: c.opsPolicy,
	}}
	svc, err := ops.Open(ctx, ops.Config{
		DB: c.DB, Runner: runner, Publisher: c.Bus, StateDir: filepath.Join(c.Paths.DataDir, "ops"),
		Keys: ops.StoredKeySource{Store: c.Secrets, IsNotFound: func(e error) bool { return errors.Is(e, secrets.ErrNotFound) }},
	})
	if err != nil {
		return err
	}
	c.Ops = svc
	return nil
}

// planFile is the body of POST /v1/ops/plans: the plan file as written, and the
// directory relative paths in it are relative to.
type planFile struct {
	Data    string `json:"data"`
	BaseDir string `json:"baseDir"`
	By      string `json:"by,omitempty"`
}

type approveBody struct {
	TTL               string `json:"ttl,omitempty"`
	ConfirmHashPrefix string `json:"confirmHashPrefix"`
	// Password proves the person to the operating system (answerer).
	Password string `json:"password,omitempty"`
}

func (c *Core) opsRoutes() {
	h := c.api.Handle
	h("POST /v1/ops/plans", func(w http.ResponseWriter, r *http.Request) {
		var f planFile
		if err := localapi.ReadJSON(r, &f); err != nil {
			localapi.WriteError(w, err)
			return
		}
		in, err := ops.DecodePlanInput([]byte(f.Data), f.BaseDir)
		if err != nil {
			localapi.WriteError(w, apiError(err))
			return
		}
		if in.By == "" {
			in.By = f.By
		}
		respond(w, func() (any, error) { return c.Ops.OpsPlan(r.Context(), in) })
	})
	h("GET /v1/ops/plans", func(w http.ResponseWriter, r *http.Request) {
		f := ops.PlanFilter{Project: r.URL.Query().Get("project"), Status: ops.Status(r.URL.Query().Get("status"))}
		respond(w, func() (any, error) { return c.Ops.List(r.Context(), f) })
	})
	h("GET /v1/ops/plans/{id}", func(w http.ResponseWriter, r *http.Request) {
		respond(w, func() (any, error) { return c.Ops.Plan(r.Context(), r.PathValue("id")) })
	})
	h("POST /v1/ops/plans/{id}/diff", func(w http.ResponseWriter, r *http.Request) {
		var in ops.DiffInput
		if err := localapi.ReadJSON(r, &in); err != nil {
			localapi.WriteError(w, err)
			return
		}
		in.PlanID = r.PathValue("id")
		respond(w, func() (any, error) { return c.Ops.OpsDiff(r.Context(), in) })
	})
	h("GET /v1/ops/plans/{id}/approval", func(w http.ResponseWriter, r *http.Request) {
		respond(w, func() (any, error) { return c.Ops.ApprovalPrompt(r.Context(), r.PathValue("id")) })
	})
	// Approve mints the single-use token. Over the API only a person at a terminal can,
	// proven as the approvals answer is (answerer), and having typed the plan hash's
	// first characters.
	h("POST /v1/ops/plans/{id}/approve", func(w http.ResponseWriter, r *http.Request) {
		var b approveBody
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		proof := personProof{Password: b.Password}
		if b.Password == "" {
			proof.Confirmation = b.ConfirmHashPrefix // terminal_proof = "tty"
		}
		by, err := c.answerer(r, proof, nil) // ops checks the hash prefix itself
		if err != nil {
			localapi.WriteError(w, err)
			return
		}
		if !permission.ByPerson(by) {
			localapi.WriteError(w, c.needPerson("approving a plan", "airlock ops approve "+r.PathValue("id")))
			return
		}
		in := ops.ApproveInput{PlanID: r.PathValue("id"), TTL: b.TTL, ConfirmHashPrefix: b.ConfirmHashPrefix}
		respond(w, func() (any, error) {
			return c.Ops.OpsApprove(r.Context(), in, ops.Attestation{By: by, Interactive: true})
		})
	})
	h("POST /v1/ops/plans/{id}/reject", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Reason string `json:"reason"`
		}
		if err := localapi.ReadJSON(r, &b); err != nil {
			localapi.WriteError(w, err)
			return
		}
		respond(w, func() (any, error) { return c.Ops.Reject(r.Context(), r.PathValue("id"), b.Reason, "cli") })
	})
	h("POST /v1/ops/plans/{id}/apply", func(w http.ResponseWriter, r *http.Request) {
		var in ops.ApplyInput
		if err := localapi.ReadJSON(r, &in); err != nil {
			localapi.WriteError(w, err)
			return
		}
		in.PlanID = r.PathValue("id")
		if in.By == "" {
			in.By = "cli" // the journal names who applied, or tried to
		}
		res, err := c.Ops.OpsApply(r.Context(), in)
		var ae *ops.ApplyError
		if errors.As(err, &ae) && res != nil {
			// The apply ran and failed: the result is the answer, with its reason.
			localapi.WriteJSON(w, http.StatusOK, res)
			return
		}
		if err != nil {
			localapi.WriteError(w, apiError(err))
			return
		}
		localapi.WriteJSON(w, http.StatusOK, res)
	})
	h("POST /v1/ops/plans/{id}/verify", func(w http.ResponseWriter, r *http.Request) {
		in := ops.VerifyInput{PlanID: r.PathValue("id"), By: "cli"}
		respond(w, func() (any, error) { return c.Ops.OpsVerify(r.Context(), in) })
	})
	h("GET /v1/ops/journal", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		in := ops.JournalInput{JournalQuery: ops.JournalQuery{Project: q.Get("project"), PlanID: q.Get("plan"),
			Status: ops.Status(q.Get("status"))}, Verify: q.Get("verify") == "1"}
		if n, err := strconv.Atoi(q.Get("limit")); err == nil {
			in.Limit = n
		}
		if in.Project == "" && in.PlanID != "" {
			if p, err := c.Ops.Plan(r.Context(), in.PlanID); err == nil {
				in.Project = p.Project
			}
		}
		respond(w, func() (any, error) { return c.Ops.OpsJournal(r.Context(), in) })
	})
	h("GET /v1/ops/projects", func(w http.ResponseWriter, r *http.Request) {
		respond(w, func() (any, error) { return c.Ops.Projects(r.Context()) })
	})
}

// respond writes f's result, or its error with a way out.
func respond(w http.ResponseWriter, f func() (any, error)) {
	v, err := f()
	if err != nil {
		localapi.WriteError(w, apiError(err))
		return
	}
	localapi.WriteJSON(w, http.StatusOK, v)
}
