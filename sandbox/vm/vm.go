//go:build linux

package vm

import (
	"context"
	"errors"
	"fmt"
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
	// netns is QEMU's network namespace with the guest's way out and its ask-only
	// channel (nil when QEMU runs in Airlock's: no network and no channel).
	netns *sandbox.OwnNetns
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
	v.cmd = exec.Command(c.QEMU, args...)
	if c.guestNIC() {
		if v.netns, err = sandbox.NewOwnNetns(c.networkMode(), derefEgress(c.Egress), derefEgress(c.Ask)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("vm: QEMU's network namespace: %w", err)
		}
		v.cmd = v.netns.Command(c.QEMU, args...)
	}
	var stderr strings.Builder
	v.cmd.Stderr = &lockedBuilder{b: &stderr}
	v.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = v.cmd.Start()
	if v.netns != nil {
		v.netns.Started()
	}
	if err != nil {
		if v.netns != nil {
			v.netns.Close()
		}
		os.RemoveAll(dir)
		return nil, fmt.Errorf("vm: start %s: %w", v.cmd.Args[0], err)
	}
	go func() { v.waitErr = v.cmd.Wait(); close(v.exited) }()
	fail := func(err error) (*VM, error) {
		tail := consoleTail(console) // before Close removes it
		v.Close()
		return nil, &BootError{Err: err, QEMU: strings.TrimSpace(v.cmd.Stderr.(*lockedBuilder).String()), Console: tail}
	}
	if v.netns != nil {
		// QEMU is held back until its namespace has its way out (or none), the egress
		// proxy and the ask-only channel. They live as long as the VM (Close stops
		// them), not as long as this boot's context: a KVM attempt's is cancelled once
		// the guest is up.
		if err := v.netns.Connect(context.WithoutCancel(ctx)); err != nil {
			return fail(err)
		}
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
		if v.netns != nil {
			v.netns.Close()
		}
		os.RemoveAll(v.dir)
	})
	return nil
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
