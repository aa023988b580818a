//go:build linux

package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vminstall"
)

// VM is a running micro-VM with its agent connection.
type VM struct {
	*Client
	cmd     *exec.Cmd
	dir     string // socket and console log
	Kernel  string // the guest's `uname -r`
	Accel   string // kvm | tcg | hvf
	Warning string // e.g. running under TCG
	exited  chan struct{}
	waitErr error
	once    sync.Once
	// egressStop stops the egress proxy of an allowlist VM (nil otherwise).
	egressStop func()
}

// KVMUsable reports whether /dev/kvm opens read-write.
func KVMUsable() bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// kvmBootLimit bounds a boot under KVM when the accelerator was not chosen: a guest that
// is not ready by then (nested virtualization where /dev/kvm opens but QEMU aborts setting
// an MSR, or the guest hangs early) is booted again under TCG. A healthy KVM boot takes
// about a second.
const kvmBootLimit = 12 * time.Second

// kvmBroken remembers, for this process, why a guest did not boot under KVM, so later boots
// go straight to TCG instead of waiting out kvmBootLimit again.
var kvmBroken struct {
	sync.Mutex
	why string
}

// KVMFallback says why guests of this process boot under TCG although /dev/kvm opens
// ("" when KVM works or was never tried), for the status the person sees.
func KVMFallback() string {
	kvmBroken.Lock()
	defer kvmBroken.Unlock()
	return kvmBroken.why
}

func setKVMFallback(why string) {
	kvmBroken.Lock()
	kvmBroken.why = why
	kvmBroken.Unlock()
}

// Boot starts QEMU and waits (bounded by ctx) until the guest agent is ready. With no
// accelerator given it uses KVM when /dev/kvm is usable and the guest boots under it, TCG
// otherwise (with a warning saying why).
func Boot(ctx context.Context, c Config, log *slog.Logger) (*VM, error) {
	if log == nil {
		log = slog.Default()
	}
	if c.Accel != "" {
		return boot(ctx, c, log, "")
	}
	why := KVMFallback()
	if why == "" && !KVMUsable() {
		why = "no usable /dev/kvm"
	}
	if why == "" {
		// ~50 ms once per process, and it spares the boot below when /dev/kvm opens but
		// QEMU cannot set the CPU up under it.
		if err := vminstall.ProbeKVM(ctx, c.QEMU); err != nil && ctx.Err() == nil {
			why = "/dev/kvm is there but QEMU cannot run a guest under KVM (" + firstLine(err.Error()) + ")"
			setKVMFallback(why)
		}
	}
	if why == "" {
		kc := c
		kc.Accel = "kvm"
		kctx, cancel := context.WithTimeout(ctx, kvmBootLimit)
		v, err := boot(kctx, kc, log, "")
		cancel()
		if err == nil || ctx.Err() != nil {
			return v, err
		}
		detail := err.Error()
		if be := (*BootError)(nil); errors.As(err, &be) && be.QEMU != "" {
			detail = be.QEMU // e.g. "error: failed to set MSR 0x10a" under nested virtualization
		}
		why = "/dev/kvm is there but the guest did not boot under KVM (" + firstLine(detail) + ")"
		setKVMFallback(why)
	}
	c.Accel = "tcg"
	return boot(ctx, c, log, why)
}

// BootError is a boot that failed once QEMU started, with what QEMU and the guest said.
type BootError struct {
	Err     error
	QEMU    string // QEMU's standard error
	Console string // the end of the guest's serial console
}

func (e *BootError) Error() string {
	return fmt.Sprintf("vm: %v (qemu: %s; guest console: %s)", e.Err, e.QEMU, e.Console)
}

func (e *BootError) Unwrap() error { return e.Err }

// firstLine is s up to its first line break, at most 200 bytes.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// boot boots c as given; tcgWhy says why it runs under TCG when it does.
func boot(ctx context.Context, c Config, log *slog.Logger, tcgWhy string) (*VM, error) {
	v := &VM{exited: make(chan struct{})}
	v.Accel = c.Accel
	c.Seccomp = SeccompSupported(c.QEMU)
	if !c.Seccomp {
		log.Warn("this QEMU has no seccomp support (-sandbox): QEMU itself runs unconfined", "qemu", c.QEMU)
	}
	if c.Accel == "tcg" {
		if tcgWhy == "" {
			tcgWhy = "TCG chosen"
		}
		v.Warning = tcgWhy + ": the micro-VM runs under TCG emulation, several times slower"
		log.Warn(v.Warning)
	}
	dir, err := socketDir()
	if err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	v.dir = dir
	socket, console := filepath.Join(dir, "agent.sock"), filepath.Join(dir, "console.log")
	args, err := qemuArgs(c, socket, console)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	name := c.QEMU
	var infoR, infoW *os.File // bubblewrap's --info-fd: the pid of QEMU, in its namespace
	if c.Egress != nil {
		if name, args, infoR, infoW, err = inOwnNetns(c.QEMU, args); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		defer infoR.Close()
	}
	v.cmd = exec.Command(name, args...)
	var stderr strings.Builder
	v.cmd.Stderr = &lockedBuilder{b: &stderr}
	v.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if infoW != nil {
		v.cmd.ExtraFiles = []*os.File{infoW} // fd 3 in bubblewrap
	}
	err = v.cmd.Start()
	if infoW != nil {
		infoW.Close() // bubblewrap holds it now: reading ends when it closes it
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("vm: start %s: %w", name, err)
	}
	go func() { v.waitErr = v.cmd.Wait(); close(v.exited) }()
	fail := func(err error) (*VM, error) {
		tail := consoleTail(console) // before Close removes it
		v.Close()
		return nil, &BootError{Err: err, QEMU: strings.TrimSpace(v.cmd.Stderr.(*lockedBuilder).String()), Console: tail}
	}
	if c.Egress != nil {
		pid, err := readChildPid(infoR)
		if err != nil {
			return fail(fmt.Errorf("%w: QEMU's network namespace: %w", sandbox.ErrEgressFailed, err))
		}
		// The proxy lives as long as the VM (Close stops it), not as long as this boot's
		// context: a KVM attempt's is cancelled once the guest is up.
		stop, err := (*c.Egress)(context.WithoutCancel(ctx), pid, sandbox.EgressAddr)
		if err != nil {
			return fail(fmt.Errorf("%w: %w", sandbox.ErrEgressFailed, err))
		}
		v.egressStop = stop
	}
	var conn net.Conn
	for conn == nil {
		select {
		case <-ctx.Done():
			return fail(fmt.Errorf("boot: %w", ctx.Err()))
		case <-v.exited:
			return fail(fmt.Errorf("qemu exited during boot: %v", v.waitErr))
		case <-time.After(20 * time.Millisecond):
		}
		conn, _ = net.Dial("unix", socket)
	}
	v.Client = NewClient(conn)
	kernel, err := v.Client.WaitReady(ctx)
	if err != nil {
		return fail(fmt.Errorf("boot: waiting for the guest agent: %w", err))
	}
	v.Kernel = kernel
	log.Info("micro-VM ready", "kernel", kernel, "accel", c.Accel, "workspace", c.Workspace, "network", c.Network)
	return v, nil
}

// BootWarning is what the person should know about how this VM runs (e.g. under TCG).
func (v *VM) BootWarning() string { return v.Warning }

// Close stops QEMU (the snapshot disk goes with it) and removes the socket directory.
func (v *VM) Close() error {
	v.once.Do(func() {
		if v.Client != nil {
			v.Client.Close()
		}
		if v.cmd != nil && v.cmd.Process != nil {
			select {
			case <-v.exited:
			case <-time.After(2 * time.Second):
				syscall.Kill(-v.cmd.Process.Pid, syscall.SIGKILL)
				<-v.exited
			}
		}
		if v.egressStop != nil {
			v.egressStop()
		}
		os.RemoveAll(v.dir)
	})
	return nil
}

// inOwnNetns wraps QEMU's command line in bubblewrap: the same filesystem (so the agent's
// socket, the image and /dev/kvm are where they were), a new network namespace with only
// its loopback, and QEMU's pid reported on an info pipe. It returns the command, the
// arguments, and the pipe's two ends (the write end is the child's fd 3).
func inOwnNetns(qemu string, args []string) (name string, out []string, r, w *os.File, err error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return "", nil, nil, nil, fmt.Errorf("vm: %w: the micro-VM under network_access = \"allowlist\" runs QEMU in a network namespace of its own with bubblewrap, which is not installed (apt install bubblewrap): %w", sandbox.ErrEgressFailed, err)
	}
	r, w, err = os.Pipe()
	if err != nil {
		return "", nil, nil, nil, fmt.Errorf("vm: info pipe: %w", err)
	}
	out = append([]string{"--dev-bind", "/", "/", "--unshare-net", "--die-with-parent", "--info-fd", "3", "--", qemu}, args...)
	return bwrap, out, r, w, nil
}

// readChildPid reads bubblewrap's info ({"child-pid": N}): the process in the new
// namespace. It ends when bubblewrap writes it or exits.
func readChildPid(r io.Reader) (int, error) {
	var info struct {
		ChildPid int `json:"child-pid"`
	}
	if err := json.NewDecoder(r).Decode(&info); err != nil {
		return 0, fmt.Errorf("bubblewrap's child pid: %w", err)
	}
	if info.ChildPid <= 0 {
		return 0, errors.New("bubblewrap reported no child pid")
	}
	return info.ChildPid, nil
}

// socketDir makes the directory of the agent's socket: in $TMPDIR, or in /tmp when that
// path is too long for a unix socket (108 bytes, e.g. TMPDIR nested in a sandbox's).
func socketDir() (string, error) {
	dir, err := os.MkdirTemp("", "airlock-vm-")
	if err != nil || len(filepath.Join(dir, "agent.sock")) < 108 {
		return dir, err
	}
	os.Remove(dir)
	return os.MkdirTemp("/tmp", "airlock-vm-")
}

// consoleTail is the end of the guest's console log, for boot errors.
func consoleTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(none)"
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
