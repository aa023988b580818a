// Package desktop is the only package that imports Wails. It holds the window's shell
// (start-up, shutdown, showing the window when a second launch asks for it, quitting on a
// signal), the façade whose methods the frontend calls through the generated bindings, and
// the forwarder that re-emits every event of the core's bus to the window, so nothing in
// the frontend polls.
//
// Domain packages never see the Wails runtime: Wails kills the process when handed a
// context it did not create, so only this package holds the context OnStartup gives.
package desktop
