// Package buildinfo holds what the build stamps into every executable.
package buildinfo

// Version is set at build time with
// -ldflags "-X github.com/airlock-app/airlock/app/buildinfo.Version=…".
var Version = "dev"
