//go:build linux

// Command airlock-guest is Airlock's agent inside the micro-VM. It runs as the guest's init
// (PID 1, kernel command line init=/usr/local/sbin/airlock-guest): it mounts what a shell
// needs, mounts the workspace the host shares over 9p (tag "workspace") on /workspace, then
// serves the JSON protocol of package sandbox/vm/agent on the virtio-serial port named
// org.airlock.agent, and powers the VM off when the host closes the port.
//
// Run by hand with --port PATH to serve on another device or file (for debugging).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-app/airlock/sandbox/vm/agent"
)

func main() {
	port := flag.String("port", "", "serial device to serve on (default: the virtio port named "+agent.PortName+")")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	pid1 := os.Getpid() == 1
	children := agent.NewChildren()
	if pid1 {
		setupGuest(log)
		go reapOrphans(children)
	}
	err := serve(*port, children, log)
	if err != nil {
		log.Error("airlock-guest", "err", err)
	}
	if pid1 {
		syscall.Sync()
		syscall.Reboot(syscall.LINUX_REBOOT_CMD_POWER_OFF)
	}
	if err != nil {
		os.Exit(1)
	}
}

func serve(port string, children *agent.Children, log *slog.Logger) error {
	if port == "" {
		var err error
		if port, err = findPort(agent.PortName, 10*time.Second); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(port, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", port, err)
	}
	defer f.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log.Info("airlock-guest serving", "port", port)
	return agent.Serve(ctx, f, f, agent.Options{Kernel: kernelRelease(), Children: children})
}

// findPort looks the virtio-serial port up by name in sysfs (no udev in the guest, so no
// /dev/virtio-ports symlinks), waiting for the driver to appear.
func findPort(name string, wait time.Duration) (string, error) {
	deadline := time.Now().Add(wait)
	for {
		matches, _ := filepath.Glob("/sys/class/virtio-ports/*/name")
		for _, m := range matches {
			if b, err := os.ReadFile(m); err == nil && strings.TrimSpace(string(b)) == name {
				return "/dev/" + filepath.Base(filepath.Dir(m)), nil
			}
		}
		if p := "/dev/virtio-ports/" + name; fileExists(p) {
			return p, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no virtio-serial port named %s (is virtio_console loaded and the -device virtserialport name=%s given?)", name, name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// setupGuest mounts the pseudo file systems, /tmp and the workspace. Mounts that already
// exist (the initramfs moves /dev, /proc, /sys, /run) are left alone.
func setupGuest(log *slog.Logger) {
	mounts := []struct{ src, dst, fstype, data string }{
		{"proc", "/proc", "proc", ""},
		{"sysfs", "/sys", "sysfs", ""},
		{"devtmpfs", "/dev", "devtmpfs", ""},
		{"devpts", "/dev/pts", "devpts", "gid=5,mode=620,ptmxmode=666"},
		{"tmpfs", "/dev/shm", "tmpfs", "mode=1777"},
		{"tmpfs", "/run", "tmpfs", "mode=755"},
		{"tmpfs", "/tmp", "tmpfs", "mode=1777"},
		{"workspace", "/workspace", "9p", "trans=virtio,version=9p2000.L,msize=524288,cache=none"},
	}
	for _, m := range mounts {
		os.MkdirAll(m.dst, 0o755)
		if err := syscall.Mount(m.src, m.dst, m.fstype, 0, m.data); err != nil && !errors.Is(err, syscall.EBUSY) {
			log.Warn("mount", "target", m.dst, "type", m.fstype, "err", err)
		}
	}
	syscall.Sethostname([]byte("airlock-sandbox"))
	os.Setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	os.Setenv("HOME", "/root")
	// Loopback up for local servers; the host decides whether any other network exists.
	run(log, "/usr/sbin/ip", "link", "set", "lo", "up")
	if cmdline, err := os.ReadFile("/proc/cmdline"); err == nil && slices.Contains(strings.Fields(string(cmdline)), "airlock.net=user") {
		setupUserNetwork(log)
	}
}

// setupUserNetwork configures QEMU's user-mode network (fixed addresses, no DHCP client
// in the image): guest 10.0.2.15/24, gateway 10.0.2.2, DNS 10.0.2.3.
func setupUserNetwork(log *slog.Logger) {
	iface := ""
	ents, _ := os.ReadDir("/sys/class/net")
	for _, e := range ents {
		if e.Name() != "lo" {
			iface = e.Name()
			break
		}
	}
	if iface == "" {
		log.Warn("network allowed but no network interface found (virtio_net missing?)")
		return
	}
	run(log, "/usr/sbin/ip", "addr", "add", "10.0.2.15/24", "dev", iface)
	run(log, "/usr/sbin/ip", "link", "set", iface, "up")
	run(log, "/usr/sbin/ip", "route", "add", "default", "via", "10.0.2.2")
	if err := os.WriteFile("/etc/resolv.conf", []byte("nameserver 10.0.2.3\n"), 0o644); err != nil {
		log.Warn("resolv.conf", "err", err)
	}
}

// run runs a setup command and logs its failure.
func run(log *slog.Logger, argv0 string, args ...string) {
	p, err := os.StartProcess(argv0, append([]string{argv0}, args...), &os.ProcAttr{Files: []*os.File{nil, os.Stderr, os.Stderr}})
	if err == nil {
		var st *os.ProcessState
		if st, err = p.Wait(); err == nil && !st.Success() {
			err = fmt.Errorf("%s", st)
		}
	}
	if err != nil {
		log.Warn("setup", "cmd", argv0+" "+strings.Join(args, " "), "err", err)
	}
}

// reapOrphans collects the orphans re-parented to PID 1, never a command the agent waits for.
func reapOrphans(children *agent.Children) {
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, syscall.SIGCHLD)
	for range ch {
		children.ReapOrphans()
	}
}

func kernelRelease() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return ""
	}
	var b strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return b.String()
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
