// Package vm boots the micro-VM of the `sandbox` execution mode and runs commands in it.
//
// QEMU boots the installed kernel, initramfs and root filesystem (see sandbox/vminstall)
// with KVM when /dev/kvm is usable and TCG emulation otherwise (with a warning). The disk
// is opened with snapshot=on, so whatever a command installs or writes outside the
// workspace is thrown away with the VM; the workspace is shared read-write over 9p and
// mounted at /workspace; the network is absent unless allowed. Commands go to the guest
// agent (cmd/airlock-guest, protocol in sandbox/vm/agent) over a virtio-serial port.
package vm
