//go:build linux

package vm

import (
	"context"
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

// Boot starts QEMU and waits (bounded by ctx) until the guest agent is ready.
func Boot(ctx context.Context, c Config, log *slog.Logger) (*VM, error) {
	if log == nil {
		log = slog.Default()
	}
	v := &VM{exited: make(chan struct{})}
	if c.Accel == "" {
		c.Accel = "tcg"
		if KVMUsable() {
			c.Accel = "kvm"
		}
	}
	v.Accel = c.Accel
	c.Seccomp = SeccompSupported(c.QEMU)
	if !c.Seccomp {
		log.Warn("this QEMU has no seccomp support (-sandbox): QEMU itself runs unconfined", "qemu", c.QEMU)
	}
	if c.Accel == "tcg" {
		v.Warning = "no usable /dev/kvm: the micro-VM runs under TCG emulation, several times slower"
		log.Warn(v.Warning)
	}
	dir, err := os.MkdirTemp("", "airlock-vm-")
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
	var stderr strings.Builder
	v.cmd.Stderr = &lockedBuilder{b: &stderr}
	v.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := v.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("vm: start %s: %w", c.QEMU, err)
	}
	go func() { v.waitErr = v.cmd.Wait(); close(v.exited) }()
	fail := func(err error) (*VM, error) {
		tail := consoleTail(console) // before Close removes it
		v.Close()
		return nil, fmt.Errorf("vm: %w (qemu: %s; guest console: %s)", err, strings.TrimSpace(v.cmd.Stderr.(*lockedBuilder).String()), tail)
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
		os.RemoveAll(v.dir)
	})
	return nil
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
