//go:build !production

// Package frontend holds Airlock's web UI (Svelte 5 + TypeScript, built by Vite into
// dist/). For Go it is one value: Assets, the built files the window serves.
package frontend

import (
	"io/fs"
	"os"
)

// Assets outside production builds is frontend/dist read from disk, relative to the
// working directory: the `dev` build serves its -assetdir instead (RECIPES.md, browser
// end-to-end recipe) and the bindings build serves nothing. Not embedding here keeps
// `go vet ./...` and `go test ./...` working on a clean clone before the frontend is built.
var Assets fs.FS = os.DirFS("frontend/dist")
