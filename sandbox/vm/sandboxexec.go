package vm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// guestPath is the PATH commands get in the guest (the host's PATH means nothing there).
const guestPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// hostOnlyEnv are variables that describe the host and would mislead a command in the guest.
var hostOnlyEnv = map[string]bool{
	"PATH": true, "HOME": true, "TMPDIR": true, "USER": true, "LOGNAME": true, "SHELL": true, "PWD": true, "OLDPWD": true,
	"DISPLAY": true, "WAYLAND_DISPLAY": true, "DBUS_SESSION_BUS_ADDRESS": true, "SSH_AUTH_SOCK": true, "GNUPGHOME": true,
	"AIRLOCK_HOME": true,
	// The host's channel address means nothing in the guest; the guest's own is set below.
	sandbox.EnvAskSocket: true,
}

// GuestRequest maps a sandbox request to the VM: the workspace shared at /workspace is the
// policy's working directory (the run's writable root), the command's directory maps below
// it, the network is the policy's, and the environment keeps the request's variables
// except those that describe the host (PATH, HOME, XDG_*, display, sockets), which get
// guest values. With the request's ask-only channel (ExecRequest.Ask), the guest's
// AIRLOCK_ASK_SOCKET names where the guest reaches it (sandbox.MicroVMAskAddr).
func GuestRequest(req sandbox.ExecRequest) (workspace string, network bool, g ExecRequest, err error) {
	workspace = req.Policy.Cwd
	cwd := req.Cwd
	if cwd == "" {
		cwd = workspace
	}
	rel, err := filepath.Rel(workspace, cwd)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false, ExecRequest{}, fmt.Errorf("micro-VM: the command's directory %s is outside the workspace %s shared with the VM; run it from inside the workspace", cwd, workspace)
	}
	g = ExecRequest{
		Argv: req.Argv, Cwd: filepath.ToSlash(filepath.Join(GuestWorkspace, rel)),
		Env:   []string{"PATH=" + guestPath, "HOME=/root", "LANG=C.UTF-8", "AIRLOCK_MICROVM=1"},
		Stdin: req.Stdin, Stdout: req.Stdout, Stderr: req.Stderr, Timeout: req.Timeout,
	}
	for _, kv := range req.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || hostOnlyEnv[k] || strings.HasPrefix(k, "XDG_") || k == "LANG" || k == "AIRLOCK_MICROVM" {
			continue
		}
		g.Env = append(g.Env, kv)
	}
	if req.Ask != nil {
		g.Env = append(g.Env, sandbox.EnvAskSocket+"="+sandbox.MicroVMAskAddr)
	}
	if req.Policy.Network == sandbox.NetworkAllowlist {
		if req.Egress == nil {
			return "", false, ExecRequest{}, fmt.Errorf("micro-VM: %w", ErrAllowlistNotConnected)
		}
		// The guest's only way out is the proxy (see Config.Egress); names are resolved there.
		g.Env = sandbox.ProxyEnv(g.Env, GuestEgressAddr)
		return workspace, true, g, nil
	}
	return workspace, req.Policy.Network.On(), g, nil
}

// ErrAllowlistNotConnected refuses a micro-VM command under network_access =
// "allowlist" whose caller connects no egress proxy (ExecRequest.Egress): it is never
// given the whole network, nor started without the network it was promised.
var ErrAllowlistNotConnected = errors.New(`network_access = "allowlist" in the micro-VM needs Airlock's egress proxy, which this caller ` +
	`does not connect to the VM (scheduled runs, and airlock exec while Airlock runs, do): run the command with execution_mode = "local" ` +
	`(bubblewrap connects it to the proxy), or give it network_access = false (no network) or true (the whole network)`)

// guestEgress is the proxy hook a VM for req boots with: the request's, under an allowlist.
func guestEgress(req sandbox.ExecRequest) *sandbox.Egress {
	if req.Policy.Network == sandbox.NetworkAllowlist && req.Egress != nil {
		return &req.Egress
	}
	return nil
}

// guestAsk is the ask-only channel a VM for req boots with: the request's, if any.
func guestAsk(req sandbox.ExecRequest) *sandbox.Egress {
	if req.Ask != nil {
		return &req.Ask
	}
	return nil
}

// sandboxResult maps the VM's result to sandbox.Exec's.
func sandboxResult(r ExecResult, warning string) sandbox.Result {
	out := sandbox.Result{ExitCode: r.ExitCode, TimedOut: r.TimedOut, Backend: sandbox.BackendNameMicroVM, Warning: warning}
	if r.Signal != 0 {
		out.Signal = syscall.Signal(r.Signal).String()
	}
	return out
}

// SandboxExec runs a sandbox.ExecRequest in the pool's warm VM of the request's workspace
// (booting one when needed). It has sandbox.MicroVM's signature: pass pool.SandboxExec as
// ExecRequest.MicroVM. Its VMs are shared by every caller, so they serve no ask-only
// channel (req.Ask is dropped: its questions would carry the identity of whichever
// caller booted the VM); a caller with one uses a Session.
func (p *Pool) SandboxExec(ctx context.Context, req sandbox.ExecRequest) (sandbox.Result, error) {
	req.Ask = nil
	return p.sandboxExec(ctx, "", req)
}

// SandboxExec is Pool.SandboxExec within the session.
func (s *Session) SandboxExec(ctx context.Context, req sandbox.ExecRequest) (sandbox.Result, error) {
	return s.p.sandboxExec(ctx, s.id, req)
}

func (p *Pool) sandboxExec(ctx context.Context, session string, req sandbox.ExecRequest) (sandbox.Result, error) {
	ws, network, g, err := GuestRequest(req)
	if err != nil {
		return sandbox.Result{ExitCode: sandbox.ExitSandboxFailed}, &sandbox.ExecError{Code: sandbox.ExitSandboxFailed, Err: err}
	}
	r, warning, err := p.exec(ctx, session, ws, network, guestEgress(req), guestAsk(req), g)
	if err != nil && ctx.Err() == nil && !r.TimedOut {
		return sandboxResult(r, warning), &sandbox.ExecError{Code: sandbox.ExitSandboxFailed, Err: err}
	}
	return sandboxResult(r, warning), nil
}

// ExecOnce returns a sandbox.MicroVM that boots a VM from base for one command and stops
// it afterwards (what `airlock exec --execution-mode sandbox` uses without a daemon).
func ExecOnce(base Config, log *slog.Logger) sandbox.MicroVM {
	return func(ctx context.Context, req sandbox.ExecRequest) (sandbox.Result, error) {
		ws, network, g, err := GuestRequest(req)
		if err != nil {
			return sandbox.Result{ExitCode: sandbox.ExitSandboxFailed}, &sandbox.ExecError{Code: sandbox.ExitSandboxFailed, Err: err}
		}
		c := base
		c.Workspace, c.Network, c.Egress, c.Ask = ws, network, guestEgress(req), guestAsk(req)
		v, err := Boot(ctx, c, log)
		if err != nil {
			return sandbox.Result{ExitCode: sandbox.ExitSandboxFailed}, &sandbox.ExecError{Code: sandbox.ExitSandboxFailed, Err: err}
		}
		defer v.Close()
		r, err := v.Exec(ctx, g)
		if err != nil && ctx.Err() == nil && !r.TimedOut {
			return sandboxResult(r, v.Warning), &sandbox.ExecError{Code: sandbox.ExitSandboxFailed, Err: err}
		}
		return sandboxResult(r, v.Warning), nil
	}
}

// ImageConfig is the configuration for an image directory as `make sandbox-image` writes it
// (vmlinuz, initrd.img, rootfs.qcow2) with the system's QEMU; for tests and benchmarks.
func ImageConfig(dir, qemu string) (Config, error) {
	c := Config{QEMU: qemu, Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.img"), Rootfs: filepath.Join(dir, "rootfs.qcow2")}
	for _, f := range []string{c.Kernel, c.Initrd, c.Rootfs} {
		if !fileExists(f) {
			return c, fmt.Errorf("no micro-VM image in %s (%s missing): run `make sandbox-image` or set AIRLOCK_SANDBOX_IMAGE=DIR", dir, filepath.Base(f))
		}
	}
	return c, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// FindImage finds a built image for tests and benchmarks: $AIRLOCK_SANDBOX_IMAGE, else
// fallbackDir, with the system's QEMU. reason (when not "") says why the VM cannot boot,
// with the way out, for t.Skip.
func FindImage(fallbackDir string) (c Config, reason string) {
	dir := os.Getenv("AIRLOCK_SANDBOX_IMAGE")
	if dir == "" {
		dir = fallbackDir
	}
	c, err := ImageConfig(dir, "")
	if err != nil {
		return c, err.Error() + " to run the micro-VM tests; CI without a built image skips them"
	}
	qemu, err := exec.LookPath(vminstall.QEMUBinaryFor(runtime.GOARCH))
	if err != nil {
		return c, "no " + vminstall.QEMUBinaryFor(runtime.GOARCH) + " on this machine (apt-get install qemu-system-x86): cannot boot the micro-VM"
	}
	c.QEMU = qemu
	return c, ""
}
