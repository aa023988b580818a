package vminstall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/sandbox/lazyre"
)

// MinQEMUMajor is the oldest system QEMU used instead of downloading the runtime
// (9p, virtio-serial and -snapshot all work from 5.0 on).
const MinQEMUMajor = 5

// Support is what the host offers for the micro-VM (the wire type).
type Support = api.VMSupport

// QEMUBinaryFor names the QEMU system emulator for a GOARCH ("" when there is none).
func QEMUBinaryFor(arch string) string {
	switch arch {
	case "amd64":
		return "qemu-system-x86_64"
	case "arm64":
		return "qemu-system-aarch64"
	}
	return ""
}

// MachineFor picks the QEMU machine type for a GOARCH.
func MachineFor(arch string) string {
	if arch == "arm64" {
		return "virt"
	}
	return "q35"
}

// Detect probes the host: architecture, /dev/kvm, a system QEMU (its --version run with a
// 3 s limit), and whether that QEMU can run a guest under KVM (ProbeKVM).
func Detect(ctx context.Context) Support {
	s := Support{OS: runtime.GOOS, Arch: runtime.GOARCH, QEMUBinary: QEMUBinaryFor(runtime.GOARCH)}
	switch {
	case s.QEMUBinary == "":
		s.Reason = fmt.Sprintf("the micro-VM needs an amd64 or arm64 host, this one is %s; use execution_mode = \"local\"", s.Arch)
		return s
	case s.OS != "linux" && s.OS != "darwin":
		s.Reason = fmt.Sprintf("the micro-VM runs on Linux and macOS, not %s; use execution_mode = \"local\"", s.OS)
		return s
	}
	s.Supported = true
	s.Accel = "tcg"
	switch s.OS {
	case "linux":
		if f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0); err == nil {
			f.Close()
			s.KVM, s.Accel = true, "kvm"
		} else {
			s.Warning = fmt.Sprintf("no usable /dev/kvm (%v): the VM runs under TCG emulation, several times slower; enable virtualization or add yourself to the kvm group", err)
		}
	case "darwin":
		s.Accel = "hvf"
	}
	if path, err := exec.LookPath(s.QEMUBinary); err == nil {
		vctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		out, err := exec.CommandContext(vctx, path, "--version").Output()
		cancel()
		if err == nil {
			if v, major, ok := ParseQEMUVersion(string(out)); ok && major >= MinQEMUMajor {
				s.SystemQEMU, s.QEMUVersion = path, v
			}
		}
	}
	if s.Accel == "kvm" && s.SystemQEMU != "" {
		if err := ProbeKVM(ctx, s.SystemQEMU); err != nil {
			s.Accel = "tcg"
			s.Warning = fmt.Sprintf("/dev/kvm opens but QEMU cannot run a guest under it (%v; nested virtualization?): the VM runs under TCG emulation, several times slower", err)
		}
	}
	return s
}

// kvmProbes remembers ProbeKVM's answer per QEMU binary for this process: the host does
// not change under it, and Detect and every Boot ask.
var kvmProbes sync.Map // qemu path → error (nil: KVM works)

// ProbeKVM starts qemu paused under KVM with the host's CPU and quits it over QMP, in
// about 50 ms, once per process and QEMU. /dev/kvm can open and still refuse the CPU's
// setup (nested virtualization: "failed to set MSR 0x10a"), which only QEMU shows; nil
// when KVM works.
func ProbeKVM(ctx context.Context, qemu string) error {
	if v, ok := kvmProbes.Load(qemu); ok {
		err, _ := v.(error)
		return err
	}
	err := probeKVM(ctx, qemu)
	if ctx.Err() == nil {
		kvmProbes.Store(qemu, err)
	}
	return err
}

func probeKVM(ctx context.Context, qemu string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, "-accel", "kvm", "-cpu", "host", "-machine", MachineFor(runtime.GOARCH), "-m", "64",
		"-nodefaults", "-no-user-config", "-display", "none", "-S", "-monitor", "none", "-qmp", "stdio")
	cmd.Stdin = strings.NewReader("{\"execute\":\"qmp_capabilities\"}\n{\"execute\":\"quit\"}\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if line, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n"); line != "" {
			return errors.New(line)
		}
		return fmt.Errorf("%s under KVM: %w", qemu, err)
	}
	return nil
}

var qemuVersionRE = lazyre.New(`QEMU emulator version (\d+)\.(\d+)(?:\.(\d+))?`)

// ParseQEMUVersion reads `qemu-system-* --version` output ("QEMU emulator version 7.2.18
// (Debian 1:7.2+dfsg-7+deb12u18)") and returns "7.2.18" and the major version.
func ParseQEMUVersion(out string) (version string, major int, ok bool) {
	m := qemuVersionRE().FindStringSubmatch(out)
	if m == nil {
		return "", 0, false
	}
	major, err := strconv.Atoi(m[1])
	if err != nil {
		return "", 0, false
	}
	version = m[1] + "." + m[2]
	if m[3] != "" {
		version += "." + m[3]
	}
	return version, major, true
}
