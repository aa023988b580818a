//go:build bindings

package desktop

// BindingsOnly is true in the build `wails build` makes (tag bindings) to generate
// frontend/wailsjs: main then runs Wails with a nil core and no window.
const BindingsOnly = true
