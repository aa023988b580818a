package localapi

import (
	"net/http"

	"github.com/airlock-app/airlock/api"
)

// Handle serves one route of the table (package api) with h: the JSON body, or the URL
// query for GET and DELETE, is decoded into In; h's error goes through the server's
// error mapper (Options.MapError); Out is written as JSON. Every route of the local API
// is served through here, so a route's path, its types and its error mapping are each
// written once.
func Handle[In, Out any](s *Server, rt api.Route[In, Out], h func(r *http.Request, in In) (Out, error)) {
	s.Handle(rt.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		var in In
		switch {
		case rt.InQuery():
			if err := api.DecodeQuery(r.URL.Query(), &in); err != nil {
				WriteError(w, err)
				return
			}
		case isNone(in):
		default:
			if err := ReadJSON(r, &in); err != nil {
				WriteError(w, err)
				return
			}
		}
		out, err := h(r, in)
		if err != nil {
			if s.opts.MapError != nil {
				err = s.opts.MapError(err)
			}
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, out)
	})
}

func isNone(v any) bool { _, ok := v.(api.None); return ok }
