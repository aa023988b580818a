//go:build production

// Package frontend holds Airlock's web UI (Svelte 5 + TypeScript, built by Vite into
// dist/). For Go it is one value: Assets, the built files the window serves.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Assets is the built frontend, embedded in production builds (`wails build`); run
// `npm run build` in frontend/ first (scripts/build-desktop.sh does).
var Assets fs.FS = distRoot()

func distRoot() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		// Unreachable: "dist" is a valid path. Serve the embedded tree as is.
		return dist
	}
	return sub
}
