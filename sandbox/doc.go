// Package sandbox owns isolation: the sandbox policy and its resolution, the
// application-layer path and command checks, the OS backends (bubblewrap, Landlock,
// Seatbelt), the start-up probes, execution modes, and the micro-VM runtime installer.
//
// It imports no other Airlock package.
package sandbox
