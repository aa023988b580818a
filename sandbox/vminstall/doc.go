// Package vminstall installs the micro-VM runtime (QEMU) and image (kernel plus root
// filesystem carrying Airlock's guest agent) that the `sandbox` and `auto` execution modes
// run commands in.
//
// The flow is detect → download runtime → download image → ready. Every artifact is named in
// a JSON manifest (name, kind, version, url, sha256, size), streamed to NAME.part, resumed
// with an HTTP Range request after an interruption, verified against its sha256 and only then
// renamed into place. The runtime download is skipped when a usable system QEMU exists. One
// install runs at a time: a second caller shares the first one's progress and result.
//
// Status changes are published on the topic "sandbox.install" through a Publisher. The
// package imports no other Airlock package and no database code, so the CLI can link it.
package vminstall
