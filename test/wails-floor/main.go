// Command wails-floor is the reference the desktop benchmarks compare Airlock's window
// with (scripts/bench-desktop.sh): the same Wails v2 and WebKitGTK, one static page and
// nothing else — the floor any Wails window pays for start-up, memory and idle CPU. It
// logs "window ready" on DOM ready, as airlock-desktop does.
//
//	go build -tags desktop,production,webkit2_41 -o build/bin/wails-floor ./test/wails-floor
package main

import (
	"context"
	"embed"
	"fmt"
	"log/slog"
	"os"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
)

//go:embed index.html
var assets embed.FS

func main() {
	err := wails.Run(&options.App{
		Title: "Wails floor", Width: 1100, Height: 720,
		AssetServer: &assetserver.Options{Assets: assets},
		OnDomReady:  func(context.Context) { slog.Info("window ready") },
		// As airlock-desktop (app/desktop/shell.go): software rendering.
		Linux: &linux.Options{WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "wails-floor:", err)
		os.Exit(1)
	}
}
