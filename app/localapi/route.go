package localapi

import (
	"net/http"

	"github.com/airlock-app/airlock/api"
)

// Router is where routes are served: the local API's Server, or a Mux of a narrower
// listener (a sandbox's ask-only channel serves a few of the table's routes).
type Router interface {
	Handle(pattern string, h http.HandlerFunc)
	mapError(err error) error
}

// Mux serves routes on a listener of the caller's, with one error mapper (nil: every
// error is a 500 unless it is an *api.Error).
type Mux struct {
	*http.ServeMux
	MapError func(error) error
}

// NewMux returns an empty Mux.
func NewMux(mapError func(error) error) *Mux {
	return &Mux{ServeMux: http.NewServeMux(), MapError: mapError}
}

// Handle registers a handler.
func (m *Mux) Handle(pattern string, h http.HandlerFunc) { m.ServeMux.Handle(pattern, h) }

func (m *Mux) mapError(err error) error {
	if m.MapError != nil {
		return m.MapError(err)
	}
	return err
}

func (s *Server) mapError(err error) error {
	if s.opts.MapError != nil {
		return s.opts.MapError(err)
	}
	return err
}

// Handle serves one route of the table (package api) with h: the JSON body, or the URL
// query for GET and DELETE, is decoded into In; h's error goes through the router's
// error mapper (Options.MapError); Out is written as JSON. Every route Airlock serves
// is served through here, so a route's path, its types and its error mapping are each
// written once.
func Handle[In, Out any](s Router, rt api.Route[In, Out], h func(r *http.Request, in In) (Out, error)) {
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
			WriteError(w, s.mapError(err))
			return
		}
		WriteJSON(w, http.StatusOK, out)
	})
}

func isNone(v any) bool { _, ok := v.(api.None); return ok }
