package app

import (
	"context"
	"net/http"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/permission"
)

// handle serves one route of the table with h (localapi.Handle, whose error mapper is
// apiError).
func handle[In, Out any](c *Core, rt api.Route[In, Out], h func(r *http.Request, in In) (Out, error)) {
	localapi.Handle(c.api, rt, h)
}

// Caller is who performs an operation of the core: the window (a click there is a
// person, by construction) or a request over the local API, whose proof of a person
// travels with it and is judged from how it arrived. The HTTP routes and the window's
// façade call the same operation with their Caller, so an operation is written once.
type Caller struct {
	window bool
	r      *http.Request
	proof  api.Proof
}

// WindowCaller is the window's Caller.
func WindowCaller() Caller { return Caller{window: true} }

// APICaller is the Caller of a local API request, with the proof it sent.
func APICaller(r *http.Request, proof api.Proof) Caller { return Caller{r: r, proof: proof} }

// Context is the caller's context: the request's, or a background one for the window
// (its methods bound their own time).
func (cl Caller) Context() context.Context {
	if cl.r != nil {
		return cl.r.Context()
	}
	return context.Background()
}

// who establishes who performs the act: permission.ByWindow for the window, else what
// the API request proves (answerer). confirmed checks a typed confirmation (nil: none).
func (c *Core) who(cl Caller, confirmed func(string) bool) (string, error) {
	if cl.window {
		return permission.ByWindow, nil
	}
	if cl.r == nil {
		return permission.ByAPI, nil
	}
	return c.answerer(cl.r, personProof(cl.proof), confirmed)
}
