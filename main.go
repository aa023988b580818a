// Command airlock-desktop is the Airlock app a person double-clicks: it hosts the core
// (database, configuration, local API, and later dispatch and the approval broker) and
// shows the window. Build it with scripts/build-desktop.sh (`wails build -tags
// webkit2_41`); the command line, `airlock`, is a separate executable that links no
// WebKit.
//
// Only one core runs per user (per AIRLOCK_HOME). A second launch asks the running window
// to come to the front and exits 0; if the headless daemon holds the core instead, it
// says so on stderr and exits 1. SIGINT and SIGTERM quit cleanly (exit 0).
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/wailsapp/wails/v2"

	"github.com/airlock-app/airlock/app"
	"github.com/airlock-app/airlock/app/desktop"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/frontend"
)

//go:embed build/appicon.png
var icon []byte

func main() { os.Exit(run()) }

func run() int {
	if desktop.BindingsOnly {
		// `wails build` runs the app built with the bindings tag to generate
		// frontend/wailsjs: no core, no window.
		if err := wails.Run(desktop.NewShell(nil).Options(frontend.Assets, icon)); err != nil {
			fmt.Fprintln(os.Stderr, "airlock-desktop: generate bindings:", err)
			return 1
		}
		return 0
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	core, err := app.Open(ctx, app.Options{Kind: app.KindDesktop})
	var running *localapi.AlreadyRunningError
	if errors.As(err, &running) {
		if err := desktop.HandOver(ctx, running); err != nil {
			fmt.Fprintln(os.Stderr, "airlock-desktop:", err)
			return 1
		}
		fmt.Fprintln(os.Stderr, "airlock-desktop: Airlock is already open; brought its window to the front")
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "airlock-desktop:", err)
		return 1
	}

	shell := desktop.NewShell(core)
	coreDone := make(chan error, 1)
	go func() {
		err := core.Run(ctx, shell.Routes)
		if err != nil {
			slog.Error("the core stopped", "error", err)
		}
		coreDone <- err
		shell.Quit() // no core, no app: close the window too
	}()
	go func() {
		<-ctx.Done() // SIGINT or SIGTERM
		shell.Quit()
	}()

	// Blocks until Quit is called (tray, signal, a lost core) — or the window is closed
	// when there is no tray (no session bus); with the tray, closing only hides it.
	opts := shell.Options(frontend.Assets, icon)
	// `airlock mcp` starts the app with AIRLOCK_START_HIDDEN=1 when an agent needs a core
	// and none runs: the window stays hidden until someone opens Airlock (a second
	// launch hands over and shows it).
	opts.StartHidden = os.Getenv("AIRLOCK_START_HIDDEN") == "1"
	uiErr := wails.Run(opts)
	stop()
	closeErr := core.Close()
	runErr := <-coreDone
	if err := errors.Join(uiErr, runErr, closeErr); err != nil {
		fmt.Fprintln(os.Stderr, "airlock-desktop:", err)
		return 1
	}
	return 0
}
