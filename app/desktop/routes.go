package desktop

import (
	"net/http"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
)

// windowShower is what the route needs of the shell.
type windowShower interface{ ShowWindow() }

// Routes registers the desktop-only routes on the core's local API; pass it to
// core.Run.
func (s *Shell) Routes(srv *localapi.Server) { registerRoutes(srv, s) }

func registerRoutes(srv *localapi.Server, w windowShower) {
	localapi.Handle(srv, api.ShowWindow, func(*http.Request, api.None) (api.Shown, error) {
		w.ShowWindow()
		return api.Shown{Shown: true}, nil
	})
}
