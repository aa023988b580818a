package cli

import (
	"context"
	"io"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
)

// call performs one route of the local API on the running core. args fill the route's
// path values.
func call[In, Out any](ctx context.Context, e *env, rt api.Route[In, Out], in In, args ...string) (Out, error) {
	c, err := e.client()
	if err != nil {
		var zero Out
		return zero, err
	}
	return localapi.Call(ctx, c, rt, in, args...)
}

// printRoute calls one route of the local API and prints its answer: JSON under
// --json, else human. args fill the route's path values.
func printRoute[In, Out any](ctx context.Context, e *env, rt api.Route[In, Out], in In, human func(io.Writer, Out), args ...string) error {
	out, err := call(ctx, e, rt, in, args...)
	if err != nil {
		return err
	}
	return e.print(out, func(w io.Writer) { human(w, out) })
}
