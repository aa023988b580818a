package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sandboxDNS is the address of slirp4netns' DNS forwarder inside the namespace.
const sandboxDNS = "10.0.2.3"

// sandboxResolvConf names the stack's DNS forwarder: the host's resolver (often
// 127.0.0.53) is not reachable from the run's own namespace.
const sandboxResolvConf = "# written by Airlock: this sandbox has a network namespace of its own; its network stack forwards DNS\nnameserver " + sandboxDNS + "\n"

// netStackReadyTimeout bounds how long a run waits for its network stack to come up.
const netStackReadyTimeout = 30 * time.Second

var (
	slirpOnce sync.Once
	slirpBin  string
	// slirpOverride replaces the PATH lookup in tests ("" = look up).
	slirpOverride string
)

// slirpPath returns slirp4netns' path ("" when missing): one PATH lookup per process.
func slirpPath() string {
	if slirpOverride != "" {
		if _, err := os.Stat(slirpOverride); err != nil {
			return ""
		}
		return slirpOverride
	}
	slirpOnce.Do(func() {
		if p := os.Getenv("AIRLOCK_SLIRP4NETNS"); p != "" {
			slirpBin = p
			return
		}
		slirpBin, _ = exec.LookPath("slirp4netns")
	})
	return slirpBin
}

// slirp4netns rather than pasta: it says when the namespace is configured (--ready-fd)
// and ends when a pipe closes (--exit-fd), so the command never races it and it never
// outlives Airlock, while pasta daemonizes (or, in the foreground, gives no ready signal);
// pasta copies the host's addresses into the namespace (this machine's own address then
// is local inside) and maps ports both ways unless told not to; and as root it switches
// to nobody, which cannot open bwrap's user namespace.
//
// slirpArgs are slirp4netns' flags: the gateway (10.0.2.2) does not lead to the host's
// loopback, slirp4netns confines itself with a seccomp filter, fd 3 says when the
// namespace is configured, and it exits when fd 4 closes, which happens when this
// process ends however it ends. Run by root it also gets --enable-sandbox (an empty
// mount namespace, no capabilities): that needs uid 0 mapped in the sandbox's user
// namespace, which bwrap maps for root only (for another user slirp4netns fails at
// setegid(0)); a user's slirp4netns has no more rights than the user anyway.
func slirpArgs() []string {
	args := []string{"--configure", "--mtu=65520", "--disable-host-loopback", "--enable-seccomp", "--ready-fd=3", "--exit-fd=4"}
	if os.Geteuid() == 0 {
		args = append(args, "--enable-sandbox")
	}
	return args
}

// netSetup is the network part of one bwrap run with the network on: the pipes bwrap
// gets (--info-fd, --block-fd, --ro-bind-data for resolv.conf) and the stack's process.
type netSetup struct {
	// egress, when set, connects an allowlist run instead of a stack: it is called with
	// the sandbox's pid before the command is released, and its stop when the run ends.
	egress     Egress
	egressStop func()
	ask        Egress // the ask-only channel, served like the proxy
	askStop    func()
	withStack  bool // the network on: slirp4netns connects the namespace
	// allowLocal leaves the host's addresses and the local ranges reachable through the
	// stack (allow_local); otherwise refuseLocal closes them before the command runs.
	allowLocal     bool
	infoR, infoW   *os.File // bwrap writes the sandbox's pid here
	blockR, blockW *os.File // bwrap waits on blockR before it runs the command
	resolvR        *os.File // the generated resolv.conf
	resolvTarget   string   // where it is bound ("" when the host has none)
	stack          *exec.Cmd
	stackOut       limitedWriter // slirp4netns' messages, for the error when it fails
	exitW          *os.File      // closing it ends slirp4netns
}

// newNetSetup makes the pipes. The caller hands childFiles to bwrap (their fd numbers
// start at firstFD) and calls close when the run is over. With egress (an allowlist
// run) there is no stack and no resolv.conf: names are resolved by the proxy; without
// stack (the network off) neither: only ask is served in the namespace.
func newNetSetup(egress, ask Egress, stack bool) (*netSetup, error) {
	n := &netSetup{egress: egress, ask: ask, withStack: stack && egress == nil}
	var err error
	if n.infoR, n.infoW, err = os.Pipe(); err != nil {
		return nil, execErr(ExitSandboxFailed, "exec: info pipe: %w", err)
	}
	if n.blockR, n.blockW, err = os.Pipe(); err != nil {
		n.close()
		return nil, execErr(ExitSandboxFailed, "exec: block pipe: %w", err)
	}
	if egress != nil || !stack {
		return n, nil
	}
	if slirpPath() == "" {
		n.close()
		return nil, &ExecError{Code: ExitSandboxFailed, Err: ErrNoNetworkStack}
	}
	n.resolvTarget = resolvConfTarget()
	if n.resolvTarget != "" {
		var w *os.File
		if n.resolvR, w, err = os.Pipe(); err != nil {
			n.close()
			return nil, execErr(ExitSandboxFailed, "exec: resolv.conf pipe: %w", err)
		}
		_, err = w.WriteString(sandboxResolvConf) // < pipe buffer: never blocks
		w.Close()
		if err != nil {
			n.close()
			return nil, execErr(ExitSandboxFailed, "exec: write resolv.conf: %w", err)
		}
	}
	return n, nil
}

// resolvConfTarget is the file to cover with the generated resolv.conf: /etc/resolv.conf,
// or what its symlink leads to (bwrap mounts on the file itself). "" when there is none:
// nothing can be created in the read-only root.
func resolvConfTarget() string {
	real, err := filepath.EvalSymlinks("/etc/resolv.conf")
	if err != nil {
		return ""
	}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return real
}

// childFiles are the fds bwrap inherits, in order, from firstFD on.
func (n *netSetup) childFiles() []*os.File {
	fs := []*os.File{n.infoW, n.blockR}
	if n.resolvR != nil {
		fs = append(fs, n.resolvR)
	}
	return fs
}

// bwrapArgs are bwrap's arguments for the network: its own namespace, the info and block
// fds, and the generated resolv.conf.
func (n *netSetup) bwrapArgs(firstFD int) []string {
	args := []string{"--unshare-net", "--info-fd", strconv.Itoa(firstFD), "--block-fd", strconv.Itoa(firstFD + 1)}
	if n.resolvR != nil {
		args = append(args, "--ro-bind-data", strconv.Itoa(firstFD+2), n.resolvTarget)
	}
	return args
}

// afterStart closes the child's ends once bwrap holds them.
func (n *netSetup) afterStart() {
	closeAll(n.infoW, n.blockR, n.resolvR)
	n.infoW, n.blockR, n.resolvR = nil, nil, nil
}

// connect waits for bwrap to report the sandbox's pid and to finish setting the sandbox
// up, attaches slirp4netns to its network namespace, waits until the namespace is
// configured, and lets bwrap run the command. sandboxStarted false: bwrap ended before
// it made the sandbox (its own error is then the one to report). Any other failure is
// an *ExecError wrapping ErrNetworkStackFailed; the caller kills bwrap.
func (n *netSetup) connect(ctx context.Context) (sandboxStarted bool, err error) {
	var info struct {
		ChildPid int `json:"child-pid"`
	}
	// bwrap writes the pid once the namespaces exist, or ends: the read always returns
	// (ctx's end kills bwrap, which closes the pipe).
	if err := json.NewDecoder(n.infoR).Decode(&info); err != nil || info.ChildPid <= 0 {
		return false, nil
	}
	netns, userns, err := awaitSandboxSetUp(ctx, info.ChildPid)
	if errors.Is(err, errSandboxGone) {
		return false, nil
	}
	if err != nil {
		return true, n.fail("%w", err)
	}
	defer netns.Close()
	defer userns.Close()
	if n.ask != nil {
		stop, err := n.ask(ctx, info.ChildPid, AskAddr)
		if err != nil {
			return true, &ExecError{Code: ExitSandboxFailed, Err: fmt.Errorf("exec: %w: %w", ErrAskFailed, err)}
		}
		n.askStop = stop
	}
	if n.egress != nil {
		return true, n.connectEgress(ctx, info.ChildPid)
	}
	if !n.withStack { // the network off: only the ask-only channel was wanted
		return true, n.release()
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return true, n.fail("ready pipe: %w", err)
	}
	defer readyR.Close()
	exitR, exitW, err := os.Pipe()
	if err != nil {
		readyW.Close()
		return true, n.fail("exit pipe: %w", err)
	}
	// fds 5 and 6: the namespaces as they are now (the pid's own user namespace is
	// bwrap's inner one, which has no say over the network namespace).
	args := append(slirpArgs(), "--netns-type=path", "--userns-path=/proc/self/fd/6", "/proc/self/fd/5", "tap0")
	cmd := exec.Command(slirpPath(), args...)
	cmd.Args[0] = "slirp4netns"
	n.stackOut.max = 16 << 10
	cmd.Stdout, cmd.Stderr = &n.stackOut, &n.stackOut
	cmd.ExtraFiles = []*os.File{readyW, exitR, netns, userns}
	// Its own group (a terminal's ^C goes to Airlock, which ends it), and SIGKILL
	// when Airlock's thread dies: with the exit fd, it never outlives the run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	readyW.Close()
	exitR.Close()
	if err != nil {
		exitW.Close()
		return true, n.fail("start slirp4netns: %w (install it: apt install slirp4netns)", err)
	}
	n.stack, n.exitW = cmd, exitW

	ready := make(chan error, 1)
	go func() {
		b := make([]byte, 1)
		_, err := readyR.Read(b) // EOF: slirp4netns ended before it was ready
		ready <- err
	}()
	timer := time.NewTimer(netStackReadyTimeout)
	defer timer.Stop()
	select {
	case err := <-ready:
		if err != nil {
			n.stop(true)
			return true, n.fail("slirp4netns ended before the network was up: %s%s", n.stackOut.String(), tunHint())
		}
	case <-ctx.Done():
		return true, n.fail("%w", ctx.Err())
	case <-timer.C:
		return true, n.fail("slirp4netns was not ready after %s: %s", netStackReadyTimeout, n.stackOut.String())
	}
	if !n.allowLocal {
		if err := refuseLocal(netns, userns); err != nil {
			return true, n.fail("%w (the run is refused rather than given this machine and its network)", err)
		}
	}
	return true, n.release()
}

// connectEgress starts the egress proxy for the sandbox (its listener in the sandbox's
// namespace, on EgressAddr) and releases the command. bwrap has brought lo up by now
// (awaitSandboxSetUp), so the listener can bind.
func (n *netSetup) connectEgress(ctx context.Context, pid int) error {
	stop, err := n.egress(ctx, pid, EgressAddr)
	if err != nil {
		return &ExecError{Code: ExitSandboxFailed, Err: fmt.Errorf("exec: %w: %w", ErrEgressFailed, err)}
	}
	n.egressStop = stop
	return n.release()
}

// release lets bwrap run the command.
func (n *netSetup) release() error {
	if _, err := n.blockW.Write([]byte{1}); err != nil {
		return n.fail("release the sandbox: %w", err)
	}
	n.blockW.Close()
	n.blockW = nil
	return nil
}

// tunDevice is what slirp4netns opens to make the namespace's interface.
const tunDevice = "/dev/net/tun"

// tunHint names the fix when this user cannot open the tun device (some containers
// make it root-only; Debian's default is crw-rw-rw-).
func tunHint() string {
	if err := unix.Access(tunDevice, unix.R_OK|unix.W_OK); err != nil {
		return fmt.Sprintf(" (%s: %v: slirp4netns needs it read-write for your user: chmod 0666 %s, Debian's default)", tunDevice, err, tunDevice)
	}
	return ""
}

// nsGetUserns is ioctl_ns(2)'s NS_GET_USERNS: the user namespace owning a namespace.
const nsGetUserns = 0xb701

// awaitSandboxSetUp waits until bwrap's child pid has set the sandbox up, and returns
// its network namespace and the user namespace owning it. bwrap brings the namespace's
// loopback up first and enters an inner user namespace (--disable-userns) near the end:
// once the pid's user namespace is no longer the network namespace's owner, bwrap
// touches the network no more, and slirp4netns (which brings lo up too) cannot collide
// with it. Any error: the pid is gone (bwrap failed) or ctx ended.
func awaitSandboxSetUp(ctx context.Context, pid int) (netns, userns *os.File, err error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/ns/"
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, time.Millisecond) {
		if netns == nil {
			// Refused while bwrap's child is not dumpable (before it drops its privileges).
			if f, err := os.Open(dir + "net"); err == nil {
				netns = f
				fd, err := unix.IoctlRetInt(int(f.Fd()), nsGetUserns)
				if err != nil {
					f.Close()
					return nil, nil, fmt.Errorf("owner of the sandbox's network namespace: %w", err)
				}
				userns = os.NewFile(uintptr(fd), "userns")
			}
		}
		if netns != nil {
			var own, cur unix.Stat_t
			if err := unix.Fstat(int(userns.Fd()), &own); err != nil {
				break
			}
			if err := unix.Stat(dir+"user", &cur); err == nil && cur.Ino != own.Ino {
				return netns, userns, nil
			}
		}
		if _, err := os.Stat(dir); err != nil {
			break // bwrap's child is gone
		}
		select {
		case <-ctx.Done():
			closeAll(netns, userns)
			return nil, nil, ctx.Err()
		case <-time.After(delay):
		}
	}
	closeAll(netns, userns)
	return nil, nil, errSandboxGone
}

// errSandboxGone: bwrap's child ended while the sandbox was being set up (bwrap failed).
var errSandboxGone = errors.New("the sandbox ended during its set-up")

func (n *netSetup) fail(format string, args ...any) error {
	base := ErrNetworkStackFailed
	if n.egress != nil {
		base = ErrEgressFailed
	}
	return &ExecError{Code: ExitSandboxFailed, Err: fmt.Errorf("exec: %w: %w", base, fmt.Errorf(format, args...))}
}

// stop ends the stack (if it runs). Its exit tears the tap device down, which takes the
// kernel tens of milliseconds: it is reaped in the background, unless wait (its
// messages are wanted).
func (n *netSetup) stop(wait bool) {
	if n.egressStop != nil {
		n.egressStop()
		n.egressStop = nil
	}
	if n.askStop != nil {
		n.askStop()
		n.askStop = nil
	}
	if n.stack == nil {
		return
	}
	n.exitW.Close()
	_ = n.stack.Process.Kill()
	if wait {
		_ = n.stack.Wait()
	} else {
		go n.stack.Wait()
	}
	n.stack, n.exitW = nil, nil
}

// close ends the stack and closes every pipe still open.
func (n *netSetup) close() {
	n.stop(false)
	closeAll(n.infoR, n.infoW, n.blockR, n.blockW, n.resolvR)
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// limitedWriter keeps the first max bytes written to it and drops the rest.
type limitedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (w *limitedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(w.buf.String())
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
