package vm

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/sandbox/egress/egresstest"
)

// findImage finds a built image (FindImage with the repo's build/sandbox-image).
func findImage() (Config, string) {
	dir, _ := filepath.Abs(filepath.Join("..", "..", "build", "sandbox-image"))
	return FindImage(dir)
}

// testImage is findImage for a test, which skips when there is no image.
func testImage(t *testing.T) Config {
	t.Helper()
	c, reason := findImage()
	if reason != "" {
		t.Skip(reason)
	}
	return c
}

func run(t *testing.T, v *VM, argv ...string) (string, ExecResult) {
	t.Helper()
	var out bytes.Buffer
	res, err := v.Exec(context.Background(), ExecRequest{Argv: argv, Stdout: &out, Stderr: &out, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("%v: %v (%s)", argv, err, out.String())
	}
	return out.String(), res
}

// TestMicroVM boots two VMs from the same image at once (one boot's wall time): the first
// with the network off, the second with it on.
func TestMicroVM(t *testing.T) {
	c := testImage(t)
	c.Workspace = t.TempDir()
	c.CPUs = 1
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	imageBefore, err := os.Stat(c.Rootfs)
	if err != nil {
		t.Fatal(err)
	}

	ln := egresstest.Greeter(t, "hello from the host\n")
	outside := egresstest.NewOutside(t).GreeterOutside(t, "hello from outside\n")

	var v, v2 *VM
	var err2 error
	booted := make(chan struct{})
	go func() {
		defer close(booted)
		c2 := c
		c2.Network = true
		v2, err2 = Boot(ctx, c2, nil)
	}()
	v, err = Boot(ctx, c, nil)
	<-booted
	if v2 != nil {
		defer v2.Close()
	}
	if err != nil || err2 != nil {
		t.Fatalf("boot: %v / %v", err, err2)
	}
	defer v.Close()
	if v.Accel == "tcg" && v.Warning == "" {
		t.Error("TCG without a warning")
	}

	hostRelease, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	out, _ := run(t, v, "uname", "-r")
	if strings.TrimSpace(out) == "" || strings.TrimSpace(out) == strings.TrimSpace(string(hostRelease)) {
		t.Errorf("guest kernel %q, host %q: not a separate kernel", out, hostRelease)
	}
	for _, tool := range []string{"bash --version", "python3 --version", "node --version", "git --version"} {
		if _, res := run(t, v, "/bin/sh", "-c", tool); res.ExitCode != 0 {
			t.Errorf("%s: exit %d", tool, res.ExitCode)
		}
	}
	// The workspace is shared read-write; the rest of the disk is the VM's own.
	run(t, v, "/bin/sh", "-c", "echo from-guest > /workspace/out.txt; echo outside > /root/outside.txt")
	if b, err := os.ReadFile(filepath.Join(c.Workspace, "out.txt")); err != nil || string(b) != "from-guest\n" {
		t.Errorf("workspace file on the host: %q %v", b, err)
	}
	if out, res := run(t, v2, "/bin/sh", "-c", "test ! -e /root/outside.txt && cat /workspace/out.txt"); res.ExitCode != 0 || !strings.Contains(out, "from-guest") {
		t.Errorf("other VM: %q exit %d; want /root/outside.txt unseen and the workspace file seen", out, res.ExitCode)
	}
	// The guest's root cannot leave a setuid-root program in the workspace for the host.
	run(t, v, "/bin/sh", "-c", "cp /bin/sh /workspace/rootshell && chown 0:0 /workspace/rootshell; chmod 4755 /workspace/rootshell")
	if fi, err := os.Stat(filepath.Join(c.Workspace, "rootshell")); err != nil || fi.Mode()&os.ModeSetuid != 0 {
		t.Errorf("setuid file from the guest on the host: %v %v", fi.Mode(), err)
	}
	// No network device when the network is off; the host reachable when it is on.
	if out, res := run(t, v, "/bin/bash", "-c", "ls /sys/class/net; exec 3<>/dev/tcp/10.0.2.2/80"); res.ExitCode == 0 || strings.Contains(out, "eth") || strings.Contains(out, "enp") {
		t.Errorf("network reachable with the network off: %q exit %d", out, res.ExitCode)
	}
	// With it on, an outside host is reached, and the host's loopback (its X server, its
	// local services) is not: QEMU's 10.0.2.2 leads to its own namespace's.
	checkNetworkOn(t, v2, ln, outside)
	// A timeout kills the command.
	var sink bytes.Buffer
	res, _ := v.Exec(context.Background(), ExecRequest{Argv: []string{"sleep", "60"}, Stdout: &sink, Timeout: 500 * time.Millisecond})
	if !res.TimedOut {
		t.Errorf("sleep past its timeout: %+v", res)
	}
	// When the VM stops, what it wrote outside the workspace is gone: the image is untouched.
	v.Close()
	imageAfter, err := os.Stat(c.Rootfs)
	if err != nil || imageAfter.Size() != imageBefore.Size() || !imageAfter.ModTime().Equal(imageBefore.ModTime()) {
		t.Errorf("the image changed while a VM ran: before %v %v, after %v %v", imageBefore.Size(), imageBefore.ModTime(), imageAfter.Size(), imageAfter.ModTime())
	}
}

// checkNetworkOn: in v (network on) an outside host (a server on this machine's
// non-loopback address) is reached, and the host's loopback (a server there, by QEMU's
// 10.0.2.2) is not.
func checkNetworkOn(t *testing.T, v *VM, loopback, outside net.Listener) {
	t.Helper()
	out, _ := run(t, v, "/bin/bash", "-c", fmt.Sprintf(`(exec 3<>/dev/tcp/%s/%d && cat <&3) || echo outside unreachable
(exec 3<>/dev/tcp/10.0.2.2/%d && cat <&3) && echo ESCAPE || echo loopback refused`,
		outside.Addr().(*net.TCPAddr).IP, outside.Addr().(*net.TCPAddr).Port, loopback.Addr().(*net.TCPAddr).Port))
	if !strings.Contains(out, "hello from outside") {
		t.Errorf("network on but an outside host is unreachable: %q", out)
	}
	if strings.Contains(out, "hello from the host") || !strings.Contains(out, "loopback refused") {
		t.Errorf("ESCAPE: with the network on the guest reached the host's loopback: %q", out)
	}
}

// TestBootFallsBackToTCGWhenKVMFails: a QEMU that aborts under KVM (as nested
// virtualization does, "failed to set MSR") still gets a VM, under TCG, with a warning that
// says why; later boots go straight to TCG.
func TestBootFallsBackToTCGWhenKVMFails(t *testing.T) {
	c := testImage(t)
	t.Cleanup(func() { setKVMFallback("") })
	wrapper := filepath.Join(t.TempDir(), "qemu")
	script := "#!/bin/sh\ncase \" $* \" in *\" -accel kvm \"*) echo 'qemu: error: failed to set MSR 0x10a to 0x69' >&2; exit 1;; esac\nexec " + c.QEMU + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c.QEMU, c.Workspace, c.CPUs = wrapper, t.TempDir(), 1
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	v, err := Boot(ctx, c, nil)
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	defer v.Close()
	if v.Accel != "tcg" || !strings.Contains(v.Warning, "TCG") {
		t.Errorf("accel %q, warning %q: want tcg with a warning", v.Accel, v.Warning)
	}
	// Why: the wrapper's error, or — on a machine so loaded that the KVM probe itself timed
	// out first — the probe's own reason. Either way the person reads why.
	why := func(s string) bool {
		return strings.Contains(s, "failed to set MSR") || strings.Contains(s, "did not boot under KVM")
	}
	if KVMUsable() && !why(v.Warning) {
		t.Errorf("the warning does not say why KVM was not used: %q", v.Warning)
	}
	if KVMUsable() && !why(KVMFallback()) {
		t.Errorf("KVMFallback (the status the person sees) = %q", KVMFallback())
	}
	if out, res := run(t, v, "uname", "-r"); res.ExitCode != 0 || strings.TrimSpace(out) == "" {
		t.Errorf("uname -r under TCG: %q exit %d", out, res.ExitCode)
	}
}

// TestSocketDirFitsAUnixSocket: a TMPDIR too deep for a unix socket path (a sandbox's
// nested temporary directory) does not stop the VM: the socket goes to /tmp instead.
func TestSocketDirFitsAUnixSocket(t *testing.T) {
	deep := t.TempDir()
	for len(deep) < 120 {
		deep = filepath.Join(deep, "nested-temporary-directory")
	}
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", deep)
	dir, err := socketDir()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if n := len(filepath.Join(dir, "agent.sock")); n >= 108 {
		t.Errorf("socket path %d bytes long: %s", n, dir)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory %s: %v %v, want 0700", dir, fi.Mode(), err)
	}
	if left, _ := os.ReadDir(deep); len(left) != 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}
}
