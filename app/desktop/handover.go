package desktop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app"
	"github.com/airlock-app/airlock/app/localapi"
)

// ErrDaemonRunning says the instance holding the socket is the headless daemon, not a
// window: the desktop app cannot attach to it and does not start a second core.
var ErrDaemonRunning = errors.New("the headless Airlock daemon is running")

// handoverTimeout bounds the whole conversation with the running instance.
const handoverTimeout = 5 * time.Second

// HandOver is what a second launch does when running says another instance holds the
// socket: if that instance is the desktop app, it asks it to show and focus its window
// and returns nil (the launch has done its job); if it is the daemon, it returns an
// error wrapping ErrDaemonRunning that says how to get a window.
func HandOver(ctx context.Context, running *localapi.AlreadyRunningError) error {
	ctx, cancel := context.WithTimeout(ctx, handoverTimeout)
	defer cancel()
	client := localapi.NewClient(running.Socket)
	st, err := localapi.Call(ctx, client, api.GetStatus, api.None{})
	if err != nil {
		return fmt.Errorf("%v; it did not answer a status request (%w): if it is stuck, stop it (kill %d) and open Airlock again", running, err, running.PID)
	}
	if st.Kind != string(app.KindDesktop) {
		return fmt.Errorf("%w (pid %d) on %s: the window and the daemon share one core, so both cannot run; stop the daemon (kill %d, or Ctrl-C in its terminal) and open Airlock again", ErrDaemonRunning, st.PID, running.Socket, st.PID)
	}
	if _, err := localapi.Call(ctx, client, api.ShowWindow, api.None{}); err != nil {
		return fmt.Errorf("ask the running Airlock window (pid %d) to come to the front: %w", st.PID, err)
	}
	return nil
}
