package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/airlock-app/airlock/sandbox/egress/rules"
	"github.com/airlock-app/airlock/sandbox/nsfd"
)

// With the network on, slirp4netns makes every connection the sandbox asks for from the
// host's namespace: --disable-host-loopback keeps 127.0.0.1 out, but a service listening
// on all interfaces (an X server with -listen tcp, a dev server on 0.0.0.0) also answers
// on the machine's other addresses, and the LAN is one hop away. So, unless allow_local,
// the sandbox's own routing table gets a "prohibit" route for each local range
// (rules.LocalPrefixes4: private, CGNAT, link-local, multicast, reserved), for each of
// the host's own addresses and for the networks they are on: connect() there fails at once with EACCES, before slirp4netns
// sees a packet. The routes are the namespace's, set before the command runs; the
// sandboxed process has no CAP_NET_ADMIN over that namespace (its user namespace is a
// child of the namespace's owner, and every capability is dropped), so it cannot remove
// them. Bound to tap0 (SO_BINDTODEVICE) a socket skips the failed lookup and asks on the
// link, where slirp4netns answers ARP for its gateway and DNS addresses only. slirp4netns
// has no IPv6 here (no --enable-ipv6), so no IPv6 destination is reachable at all.

// slirpReserved are slirp4netns' own addresses in the namespace (gateway, DNS, the tap):
// never refused, even when a host address happens to be one of them.
var slirpReserved = []netip.Addr{netip.MustParseAddr("10.0.2.2"), netip.MustParseAddr(sandboxDNS), netip.MustParseAddr("10.0.2.100")}

// slirpNet is slirp4netns' network inside the namespace (its default --cidr).
var slirpNet = netip.MustParsePrefix("10.0.2.0/24")

// localRefusals are the IPv4 prefixes a network-on sandbox is refused: the local ranges,
// each of the host's own IPv4 addresses (loopback aside: the namespace's own lo), and the
// networks they are on (a LAN numbered from public space), slirp4netns' own network aside.
func localRefusals() ([]netip.Prefix, error) {
	out := rules.LocalPrefixes4()
	own, err := rules.OwnNetworks()
	if err != nil {
		return nil, fmt.Errorf("this machine's addresses: %w", err)
	}
	for _, p := range own {
		a := p.Addr()
		switch {
		case !a.Is4() || a.IsLoopback() || slices.Contains(slirpReserved, a) || slices.Contains(out, p):
			continue
		case !p.IsSingleIP() && p.Overlaps(slirpNet):
			continue // the 10/8 route covers it; the stack's own /24 stays
		}
		out = append(out, p)
	}
	return out, nil
}

// refuseLocal installs the prohibit routes in the namespace netns (owned by userns).
func refuseLocal(netns, userns *os.File) error {
	prefixes, err := localRefusals()
	if err != nil {
		return err
	}
	sock, err := netlinkInNetns(netns, userns)
	if err != nil {
		return fmt.Errorf("a routing socket in the sandbox's namespace: %w", err)
	}
	defer sock.Close()
	for i, p := range prefixes {
		if err := addProhibitRoute(int(sock.Fd()), uint32(i+1), p); err != nil {
			return fmt.Errorf("refuse %s in the sandbox's namespace: %w", p, err)
		}
	}
	return nil
}

// forceNetlinkHelper makes netlinkInNetns use the nsenter helper (tests, as root).
var forceNetlinkHelper bool

// netlinkInNetns returns a NETLINK_ROUTE socket created in netns. Writing routes through
// it needs CAP_NET_ADMIN over the namespace, which this process has as the owner of its
// user namespace. With CAP_SYS_ADMIN (root) a locked thread setns()s there and back;
// otherwise (setns into a network namespace wants CAP_SYS_ADMIN in the caller's own user
// namespace too) a short-lived helper, this binary run by nsenter in the namespace's
// user and network namespaces, creates it and passes it back.
func netlinkInNetns(netns, userns *os.File) (*os.File, error) {
	if !forceNetlinkHelper {
		f, err := netlinkBySetns(netns)
		if !errors.Is(err, unix.EPERM) {
			return f, err
		}
	}
	return netlinkByHelper(netns, userns)
}

func netlinkSocket() (int, error) {
	return unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
}

func netlinkBySetns(netns *os.File) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer self.Close()
		if err := unix.Setns(int(netns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("setns: %w", err)}
			return
		}
		fd, err := netlinkSocket()
		var f *os.File
		if err == nil {
			f = os.NewFile(uintptr(fd), "netlink")
		}
		if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) != nil {
			ch <- result{f, err} // left locked: the runtime ends the thread with the goroutine
			return
		}
		runtime.UnlockOSThread()
		ch <- result{f, err}
	}()
	r := <-ch
	return r.f, r.err
}

// netlinkHelperEnv makes a re-executed binary the routing-socket helper; its socket pair
// end is fd 5 (after the two namespace fds nsenter reads as 3 and 4).
const netlinkHelperEnv = "AIRLOCK_SANDBOX_NETLINK_HELPER"

const netlinkHelperFD = nsfd.ChildFD

func init() {
	if os.Getenv(netlinkHelperEnv) != "1" {
		return
	}
	os.Unsetenv(netlinkHelperEnv)
	// Only the process netlinkByHelper started has the socket pair there.
	var st unix.Stat_t
	if unix.Fstat(netlinkHelperFD, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return
	}
	fd, err := netlinkSocket()
	if err != nil {
		_, _ = unix.Write(netlinkHelperFD, []byte(err.Error()))
		os.Exit(1)
	}
	if err := unix.Sendmsg(netlinkHelperFD, []byte("ok"), unix.UnixRights(fd), nil, 0); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

func netlinkByHelper(netns, userns *os.File) (*os.File, error) {
	return nsfd.Receive(userns, netns, netlinkHelperEnv+"=1", "netlink")
}

// addProhibitRoute adds `prohibit p` to the main table through the routing socket fd
// and waits for the kernel's acknowledgement.
func addProhibitRoute(fd int, seq uint32, p netip.Prefix) error {
	addr := p.Addr().AsSlice()
	family := uint8(unix.AF_INET)
	if p.Addr().Is6() {
		family = unix.AF_INET6
	}
	attrLen := unix.SizeofRtAttr + len(addr)
	total := unix.NLMSG_HDRLEN + unix.SizeofRtMsg + rtaAlign(attrLen)
	b := make([]byte, total)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(total))
	ne.PutUint16(b[4:], unix.RTM_NEWROUTE)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	ne.PutUint32(b[8:], seq)
	rt := b[unix.NLMSG_HDRLEN:]
	rt[0], rt[1] = family, uint8(p.Bits()) // family, dst_len
	rt[4] = unix.RT_TABLE_MAIN
	rt[5] = unix.RTPROT_STATIC
	rt[6] = unix.RT_SCOPE_UNIVERSE
	rt[7] = unix.RTN_PROHIBIT
	at := rt[unix.SizeofRtMsg:]
	ne.PutUint16(at[0:], uint16(attrLen))
	ne.PutUint16(at[2:], unix.RTA_DST)
	copy(at[unix.SizeofRtAttr:], addr)
	if err := unix.Sendto(fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	resp := make([]byte, 4096)
	for {
		n, _, err := unix.Recvfrom(fd, resp, 0)
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(resp[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Header.Seq != seq || m.Header.Type != unix.NLMSG_ERROR || len(m.Data) < 4 {
				continue
			}
			if code := int32(ne.Uint32(m.Data[0:4])); code != 0 {
				return unix.Errno(-code)
			}
			return nil
		}
	}
}

func rtaAlign(n int) int { return (n + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1) }
