package desktop

import (
	"net/http"

	"github.com/airlock-app/airlock/app/localapi"
)

// WindowShowPath is the desktop-only route a second launch calls to bring the running
// window to the front.
const WindowShowPath = "/v1/window/show"

// windowShower is what the route needs of the shell.
type windowShower interface{ ShowWindow() }

// Routes registers the desktop-only routes on the core's local API; pass it to
// core.Run.
func (s *Shell) Routes(srv *localapi.Server) { registerRoutes(srv, s) }

func registerRoutes(srv *localapi.Server, w windowShower) {
	srv.Handle("POST "+WindowShowPath, func(rw http.ResponseWriter, _ *http.Request) {
		w.ShowWindow()
		localapi.WriteJSON(rw, http.StatusOK, map[string]bool{"shown": true})
	})
}
