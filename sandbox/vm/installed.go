package vm

import (
	"errors"
	"fmt"

	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// ErrNotReady means the runtime or the image is not installed; the `sandbox` execution
// mode fails with it and `auto` asks instead.
var ErrNotReady = errors.New("the micro-VM is not installed: install it from the Sandbox tab or with `airlock sandbox install --manifest URL`")

// ConfigFromInstall returns the VM configuration for what vminstall installed into dir
// (paths.Paths.SandboxDir), given the installer's status. Workspace and Network are the
// caller's to fill.
func ConfigFromInstall(dir string, st vminstall.Status) (Config, error) {
	if !st.Ready() {
		why := st.Error
		if why == "" {
			why = fmt.Sprintf("supported %v, runtime ready %v, image ready %v", st.Supported, st.RuntimeReady, st.ImageReady)
		}
		return Config{}, fmt.Errorf("%w (%s)", ErrNotReady, why)
	}
	inst, err := vminstall.LoadInstalled(dir)
	if err != nil {
		return Config{}, err
	}
	c := Config{
		QEMU:   st.Runtime,
		Kernel: inst.Path(dir, vminstall.KindKernel),
		Initrd: inst.Path(dir, vminstall.KindInitrd),
		Rootfs: inst.Path(dir, vminstall.KindRootfs),
	}
	if st.Support.Accel == "hvf" {
		c.Accel = "hvf"
	}
	// KVM or TCG is Boot's to choose: it probes KVM and says why when it falls back.
	if c.Kernel == "" || c.Rootfs == "" {
		return Config{}, fmt.Errorf("%w (no kernel or rootfs recorded in %s)", ErrNotReady, dir)
	}
	return c, nil
}
