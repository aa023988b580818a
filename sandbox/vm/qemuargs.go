package vm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vm/agent"
	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// GuestWorkspace is where the shared workspace is mounted in the guest.
const GuestWorkspace = "/workspace"

// Config describes one VM.
type Config struct {
	QEMU      string // qemu-system-* binary (vminstall Status.Runtime)
	Kernel    string // vmlinuz
	Initrd    string // initrd.img ("" = none)
	Rootfs    string // root filesystem image; .qcow2 is qcow2, anything else raw
	Workspace string // host directory shared read-write at /workspace
	// Network gives the guest QEMU's user-mode network (NAT). QEMU then runs in a network
	// namespace of its own (sandbox.OwnNetns), connected out by slirp4netns as a
	// bubblewrap sandbox with the network on is: the guest's 10.0.2.2 leads to that
	// namespace's loopback, never to the host's (its X server, its local services).
	// Without Network (and without Ask) the guest has no network device at all.
	Network  bool
	Accel    string // kvm | tcg | hvf; "" = kvm when /dev/kvm is usable, else tcg
	MemoryMB int    // 0 = 1024
	CPUs     int    // 0 = 2
	// Seccomp confines QEMU with SeccompArgs (Boot sets it when the QEMU supports it).
	Seccomp bool
	// Egress, with Network, confines the guest's network to Airlock's egress proxy
	// (network_access = "allowlist"): QEMU runs in a network namespace of its own
	// (bubblewrap --unshare-net), where the hook serves the proxy on sandbox.EgressAddr
	// before the guest boots. The guest's user-mode network has no other way out: it
	// reaches the proxy at GuestEgressAddr, and nothing else listens in that namespace
	// (no DNS either). A pointer, so that Config stays comparable.
	Egress *sandbox.Egress
	// Ask serves the guest's ask-only channel: on sandbox.AskAddr in QEMU's own network
	// namespace, which the guest reaches at sandbox.MicroVMAskAddr. The guest gets a
	// network device for it even with the network off (whose namespace then has nothing
	// else to reach). A pointer, so that Config stays comparable.
	Ask *sandbox.Egress
}

// guestNIC reports whether the guest gets a network device; QEMU then runs in a network
// namespace of its own, which decides what the device leads to.
func (c Config) guestNIC() bool { return c.Network || c.Egress != nil || c.Ask != nil }

// networkMode is the sandbox network of QEMU's namespace.
func (c Config) networkMode() sandbox.NetworkMode {
	switch {
	case c.Egress != nil:
		return sandbox.NetworkAllowlist
	case c.Network:
		return sandbox.NetworkOn
	}
	return sandbox.NetworkOff
}

func derefEgress(e *sandbox.Egress) sandbox.Egress {
	if e == nil {
		return nil
	}
	return *e
}

// GuestEgressAddr is where a guest reaches its egress proxy: QEMU's user-mode network
// maps 10.0.2.2 to the loopback of QEMU's namespace, where the proxy listens on
// sandbox.EgressAddr's port.
const GuestEgressAddr = "10.0.2.2:3128"

// kernelCmdline boots the rootfs with the agent as init. airlock.net=user asks the agent
// to configure QEMU's user-mode network.
func kernelCmdline(c Config) string {
	s := "console=ttyS0 root=/dev/vda rw init=/usr/local/sbin/airlock-guest panic=-1 quiet loglevel=3"
	if c.guestNIC() {
		s += " airlock.net=user"
	}
	return s
}

// securityModel picks the 9p security model. As a normal user "none": files the guest
// writes belong to that user. As root, "none" would let the guest's root chown files to
// root and set the setuid bit on the host (a setuid-root shell left in the workspace);
// "mapped-xattr" keeps guest ownership and modes in extended attributes instead, so host
// files are plain root-owned 0600/0700 files without setuid bits.
func securityModel(euid int) string {
	if euid == 0 {
		return "mapped-xattr"
	}
	return "none"
}

// qemuArgs builds QEMU's command line; socket is the agent's unix socket, console the file
// the guest's serial console goes to.
func qemuArgs(c Config, socket, console string) ([]string, error) {
	for name, v := range map[string]string{"kernel": c.Kernel, "rootfs": c.Rootfs, "workspace": c.Workspace} {
		if v == "" {
			return nil, fmt.Errorf("vm: no %s given", name)
		}
	}
	if strings.ContainsAny(c.Workspace, ",") || strings.ContainsAny(c.Rootfs, ",") || strings.ContainsAny(socket, ",") {
		return nil, errors.New("vm: paths with a comma cannot be passed to QEMU; move the workspace or the data directory")
	}
	mem, cpus := c.MemoryMB, c.CPUs
	if mem <= 0 {
		mem = 1024
	}
	if cpus <= 0 {
		cpus = 2
	}
	format := "raw"
	if filepath.Ext(c.Rootfs) == ".qcow2" {
		format = "qcow2"
	}
	cpu := "max"
	if c.Accel == "kvm" || c.Accel == "hvf" {
		cpu = "host"
	}
	args := []string{
		// No default devices, no monitor anywhere (the only socket is the agent's, in a
		// 0700 directory of the user running QEMU).
		"-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot",
		"-machine", vminstall.MachineFor(runtime.GOARCH), "-accel", c.Accel, "-cpu", cpu,
		"-m", strconv.Itoa(mem), "-smp", strconv.Itoa(cpus),
		"-kernel", c.Kernel,
		"-append", kernelCmdline(c),
		"-drive", "file=" + c.Rootfs + ",if=virtio,format=" + format + ",snapshot=on",
		"-fsdev", "local,id=ws,path=" + c.Workspace + ",security_model=" + securityModel(os.Geteuid()),
		"-device", "virtio-9p-pci,fsdev=ws,mount_tag=workspace",
		"-chardev", "socket,id=agent,path=" + socket + ",server=on,wait=off",
		"-device", "virtio-serial-pci",
		"-device", "virtserialport,chardev=agent,name=" + agent.PortName,
		"-serial", "file:" + console,
	}
	if c.Seccomp {
		args = append(args, SeccompArgs...)
	}
	if c.Initrd != "" {
		args = append(args, "-initrd", c.Initrd)
	}
	if c.guestNIC() {
		args = append(args, "-nic", "user,model=virtio-net-pci")
	} else {
		args = append(args, "-nic", "none")
	}
	return args, nil
}
