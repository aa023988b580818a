//go:build linux

package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/airlock-app/airlock/sandbox/nsfd"
)

// ListenInNetns listens on addr (a loopback address such as "127.0.0.1:3128") inside
// the network namespace of process pid, typically a bubblewrap sandbox started with
// --unshare-net. The listening socket belongs to that namespace, so programs inside
// reach it on their own loopback, while the proxy that accepts on it runs in this
// process, in the host's namespace, and dials out from there. Nothing of Airlock runs
// inside: no bridge process and no unix socket. That is why it replaces a unix socket
// bridged to 127.0.0.1 inside the sandbox: the sandbox's seccomp filter refuses AF_UNIX
// socket creation, so a bridge inside could not open one, and a bound unix socket
// would be one more host object reachable from inside.
//
// With CAP_SYS_ADMIN (root) a locked OS thread setns()s into the namespace, listens and
// setns()s back; if going back fails, that thread is left locked so that the runtime
// ends it rather than reuse it. Without it (an ordinary user) setns into a network
// namespace is refused even for the owner of its user namespace, because the kernel
// also wants CAP_SYS_ADMIN in the caller's own user namespace, and a multithreaded Go
// process cannot join a user namespace. Then a short-lived helper does it: nsenter
// (util-linux) joins the namespace's owning user namespace and the network namespace
// and executes this binary, which listens and passes the socket back over a socket
// pair made here, then exits.
func ListenInNetns(pid int, addr string) (net.Listener, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
		return nil, fmt.Errorf("egress: listen in the namespace of %d: %q is not a loopback address:port (such as 127.0.0.1:3128)", pid, addr)
	}
	target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return nil, fmt.Errorf("egress: the network namespace of process %d: %w", pid, err)
	}
	defer target.Close()
	ln, err := listenBySetns(target, addr)
	if errors.Is(err, unix.EPERM) {
		ln, err = listenByHelper(target, addr)
	}
	if err != nil {
		return nil, fmt.Errorf("egress: listen on %s in the network namespace of process %d: %w", addr, pid, err)
	}
	return ln, nil
}

func listenBySetns(target *os.File, addr string) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("this thread's network namespace: %w", err)}
			return
		}
		defer self.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("setns: %w", err)}
			return
		}
		ln, err := net.Listen("tcp", addr)
		if backErr := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); backErr != nil {
			// The thread stays in the sandbox's namespace: never unlock it, so it exits
			// with this goroutine. The listener is fine: a socket keeps the namespace
			// it was created in.
			ch <- result{ln, err}
			return
		}
		runtime.UnlockOSThread()
		ch <- result{ln, err}
	}()
	r := <-ch
	return r.ln, r.err
}

// listenHelperEnv makes a re-executed binary the listen helper; its value is the
// address. The helper's socket pair end is fd 5 (after the two namespace fds nsenter
// reads as 3 and 4).
const listenHelperEnv = "AIRLOCK_EGRESS_NETNS_LISTEN"

const listenHelperFD = nsfd.ChildFD

func init() {
	addr := os.Getenv(listenHelperEnv)
	if addr == "" {
		return
	}
	os.Unsetenv(listenHelperEnv)
	// Only the process listenByHelper started has the socket pair there; a stray
	// variable in someone's environment must not turn a program into the helper.
	var st unix.Stat_t
	if unix.Fstat(listenHelperFD, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return
	}
	os.Exit(runListenHelper(addr))
}

// runListenHelper runs inside the sandbox's namespaces (nsenter put it there): it
// listens and sends the socket back.
func runListenHelper(addr string) int {
	sock := os.NewFile(listenHelperFD, "egress-listen-helper")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_, _ = sock.Write([]byte(err.Error()))
		return 1
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		_, _ = sock.Write([]byte(err.Error()))
		return 1
	}
	if err := unix.Sendmsg(int(sock.Fd()), []byte("ok"), unix.UnixRights(int(f.Fd())), nil, 0); err != nil {
		return 1
	}
	return 0
}

func listenByHelper(target *os.File, addr string) (net.Listener, error) {
	ufd, err := unix.IoctlRetInt(int(target.Fd()), unix.NS_GET_USERNS)
	if err != nil {
		return nil, fmt.Errorf("the namespace's owning user namespace: %w", err)
	}
	userns := os.NewFile(uintptr(ufd), "userns")
	defer userns.Close()
	f, err := nsfd.Receive(userns, target, listenHelperEnv+"="+addr, "egress-listener")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("the helper's socket: %w", err)
	}
	return ln, nil
}
