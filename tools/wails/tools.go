//go:build tools

// Package tools pins the Wails CLI that scripts/build-desktop.sh builds into .tools/wails.
// It is a module of its own: the CLI's golang.org/x/tools must be newer than Wails v2.9.2
// asks for, or it does not build with Go 1.26 (RECIPES.md), and the app's go.mod stays clean.
package tools

import _ "github.com/wailsapp/wails/v2/cmd/wails"
