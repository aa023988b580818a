package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

func probePlatform(ctx context.Context, st *Status) {
	st.Platform = "linux"
	bw := probeBwrap(ctx)
	ns := probeUserNS(ctx, bw.OK)
	ll := probeLandlock()
	sc := probeSeccomp()
	kvm := probeKVM()
	stack := probeNetStack(ctx)
	limits := limitsProbe()
	st.Probes = []Probe{bw, ns, ll, sc, kvm, stack, limits}
	chooseBackend(st, bw, ns, ll, sc)
	networkStatus(st, stack)
	if limits.OK {
		st.Guarantees = append(st.Guarantees, limits.Detail)
	} else {
		st.Limitations = append(st.Limitations, limits.Detail+" — a fork bomb or a leak in a run can take the machine down ("+limits.Fix+")")
	}
}

// networkStatus says what network_access = true gives with the chosen backend: a
// namespace of the run's own, or a refusal with the way out; never the host's silently.
func networkStatus(st *Status, stack Probe) {
	switch {
	case st.Backend == BackendNameBwrap && stack.OK:
		st.Guarantees = append(st.Guarantees,
			"network on is a network namespace of the run's own, connected out through slirp4netns (whose gateway does not lead to the host's loopback; DNS through it): "+
				"the host's loopback services, its abstract unix sockets (X11, some session buses) and so the window stay unreachable; AF_UNIX sockets are denied by seccomp with the network on too")
		st.Limitations = append(st.Limitations,
			"with the network on, a run reaches what any outside host could: the internet, the local network and this machine's own non-loopback addresses "+
				"(services listening on all interfaces included, such as an X server started with TCP listening on)")
	case st.Backend == BackendNameBwrap:
		st.Limitations = append(st.Limitations, "network_access = true runs are refused: slirp4netns, which connects the run's own network namespace out, is missing ("+stack.Fix+")")
	case st.Backend == BackendNameLandlock:
		st.Limitations = append(st.Limitations, "network_access = true runs are refused: Landlock gives no network namespace of the run's own (the host's loopback services would be reachable); "+
			"install bubblewrap and slirp4netns (apt install bubblewrap slirp4netns) with unprivileged user namespaces allowed")
	case st.Backend == BackendNameApp:
		st.Limitations = append(st.Limitations, "with the network on, commands use the host's network as it is, its loopback services included")
	}
	allowlistStatus(st)
}

// allowlistStatus says what network_access = "allowlist" gives with the chosen backend.
func allowlistStatus(st *Status) {
	if st.Backend == BackendNameBwrap {
		st.Guarantees = append(st.Guarantees,
			`network_access = "allowlist" is a network namespace of the run's own whose only way out is Airlock's egress proxy inside it (127.0.0.1:3128, `+
				"the proxy variables set): only the allowed domains, denied domains and local destinations refused after DNS, an unknown domain asked; "+
				"the host's loopback, its abstract sockets and unix sockets stay unreachable; "+
				"web_fetch, ops commands and scheduled runs in the micro-VM go through the same lists")
		st.Limitations = append(st.Limitations,
			`with network_access = "allowlist", airlock exec with no Airlock running gets no proxy, so no network; the micro-VM is connected `+
				"to the proxy for scheduled runs and airlock exec (with Airlock running) and refuses an allowlist command elsewhere (the MCP bash); "+
				"a program that ignores the proxy variables gets no network at all")
		return
	}
	st.Limitations = append(st.Limitations, `network_access = "allowlist" gives no network with this backend: the egress proxy needs bubblewrap's network namespace`)
}

// probeNetStack finds slirp4netns (and says whether pasta is there: Airlock uses slirp4netns).
func probeNetStack(ctx context.Context) Probe {
	p := Probe{Name: ProbeNetStack, Fix: "install slirp4netns: apt install slirp4netns"}
	pasta := "pasta is not installed"
	if path, err := exec.LookPath("pasta"); err == nil {
		pasta = "pasta at " + path + " is not used"
	}
	path := slirpPath()
	if path == "" {
		p.Detail = "slirp4netns not found in PATH: network-on runs are refused (" + pasta + ")"
		return p
	}
	out, err := versionOf(ctx, path)
	if err != nil {
		p.Detail = err.Error()
		return p
	}
	version, _, _ := strings.Cut(out, "\n")
	if hint := tunHint(); hint != "" {
		p.Detail = version + " at " + path + ", but" + hint
		p.Fix = "make " + tunDevice + " read-write for your user: chmod 0666 " + tunDevice
		return p
	}
	return passed(p, version+" at "+path+" ("+pasta+")")
}

// chooseBackend picks the strongest available backend for st.Requested.
func chooseBackend(st *Status, bw, ns, ll, sc Probe) {
	switch {
	case Backend(st.Requested) == BackendApp:
		st.Backend = BackendNameApp
		st.Warning = "isolation backend is \"app\": commands are checked by the application layer only; the OS does not confine them"
	case bw.OK && ns.OK && sc.OK:
		st.Backend = BackendNameBwrap
	case ll.OK && sc.OK:
		st.Backend = BackendNameLandlock
	case Backend(st.Requested) == BackendOS:
		st.Backend = ""
		st.Error = "isolation backend \"os\" is required but no OS backend is available: runs are refused. " + firstFix(bw, ns, ll, sc)
	default:
		st.Backend = BackendNameApp
		st.Warning = appOnlyWarning
	}
	st.Guarantees, st.Limitations = guarantees(st.Backend, landlockABI())
}

func firstFix(ps ...Probe) string {
	for _, p := range ps {
		if !p.OK && p.Fix != "" {
			return p.Fix
		}
	}
	return ""
}

func probeBwrap(ctx context.Context) Probe {
	p := Probe{Name: ProbeBwrap, Fix: "install bubblewrap: apt install bubblewrap"}
	path, err := exec.LookPath("bwrap")
	if err != nil {
		p.Detail = "bwrap not found in PATH"
		return p
	}
	out, err := versionOf(ctx, path)
	if err != nil {
		p.Detail = err.Error()
		return p
	}
	return passed(p, out+" at "+path)
}

// probeUserNS runs bwrap with the real flags: user namespaces must actually work.
func probeUserNS(ctx context.Context, haveBwrap bool) Probe {
	p := Probe{Name: ProbeUserNS, Fix: userNSFix(readSysctl)}
	if !haveBwrap {
		p.Detail = "not tested: bubblewrap is missing"
		p.Fix = "install bubblewrap: apt install bubblewrap"
		return p
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		p.Detail = "cannot find true(1) to test with"
		return p
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	args := append(append([]string(nil), bwrapBaseFlags...), "--unshare-net", "--", truePath)
	out, err := exec.CommandContext(ctx, bwrapPath(), args...).CombinedOutput()
	if err != nil {
		p.Detail = fmt.Sprintf("bwrap could not create the sandbox: %v: %s", err, strings.TrimSpace(string(out)))
		return p
	}
	return passed(p, "bwrap --unshare-user --unshare-pid --unshare-net … true succeeded")
}

// AppArmor's restriction of unprivileged user namespaces (Ubuntu 23.10 and later), and
// the profile AppArmor ships to let bubblewrap alone create them.
const (
	sysctlAppArmorUserNS = "kernel/apparmor_restrict_unprivileged_userns"
	sysctlUserNSClone    = "kernel/unprivileged_userns_clone"
	bwrapProfileShipped  = "/usr/share/apparmor/extra-profiles/bwrap-userns-restrict"
	bwrapProfile         = "/etc/apparmor.d/bwrap-userns-restrict"
)

// userNSFix is the way out when bubblewrap cannot create user namespaces. Where AppArmor
// restricts them it loads the bwrap profile (only bwrap gets them), and names the global
// switch only as the last resort: it gives every program unprivileged user namespaces.
// read reads a /proc/sys entry ("" when absent).
func userNSFix(read func(string) string) string {
	if read(sysctlAppArmorUserNS) == "1" {
		return "AppArmor restricts unprivileged user namespaces here: load AppArmor's bubblewrap profile, which allows them to bwrap alone. " +
			"On Ubuntu 24.04: sudo apt install apparmor-profiles && sudo install -m 0644 " + bwrapProfileShipped + " " + bwrapProfile +
			" && sudo apparmor_parser -r " + bwrapProfile + " (Ubuntu 25.04 and later ship " + bwrapProfile + " in the apparmor package: " +
			"sudo apparmor_parser -r " + bwrapProfile + "). Only as the last resort, since it allows them to every program: " +
			"sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
	}
	if read(sysctlUserNSClone) == "0" {
		return "allow unprivileged user namespaces: sudo sysctl -w kernel.unprivileged_userns_clone=1, then persist it in /etc/sysctl.d/"
	}
	return "allow unprivileged user namespaces (user.max_user_namespaces above 0; on Debian kernel.unprivileged_userns_clone=1; " +
		"under Ubuntu's AppArmor restriction load " + bwrapProfile + " with sudo apparmor_parser -r " + bwrapProfile + ")"
}

// readSysctl reads /proc/sys/<name>, trimmed ("" when it cannot be read).
func readSysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func probeLandlock() Probe {
	p := Probe{Name: ProbeLandlock, Fix: "boot a kernel with Landlock enabled (CONFIG_SECURITY_LANDLOCK=y, and landlock in the lsm= boot parameter)"}
	abi := landlockABI()
	if abi < 1 {
		p.Detail = "Landlock is not available in this kernel"
		return p
	}
	return passed(p, fmt.Sprintf("Landlock ABI %d", abi))
}

func probeSeccomp() Probe {
	p := Probe{Name: ProbeSeccomp, Fix: "use a kernel built with CONFIG_SECCOMP_FILTER=y"}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		p.Detail = fmt.Sprintf("prctl(PR_GET_SECCOMP): %v", err)
		return p
	}
	if _, err := seccompProgram(seccompOptions{networkOff: true}); err != nil {
		p.Detail = fmt.Sprintf("cannot build the filter: %v", err)
		return p
	}
	return passed(p, "seccomp filters supported")
}

func probeKVM() Probe {
	p := Probe{Name: ProbeKVM, Fix: "for the micro-VM execution mode: enable virtualization in the firmware, load kvm_intel or kvm_amd, and give the user access to /dev/kvm (the kvm group)"}
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			p.Detail = "/dev/kvm does not exist"
		} else {
			p.Detail = fmt.Sprintf("/dev/kvm: %v", err)
		}
		return p
	}
	f.Close()
	return passed(p, "/dev/kvm opens read-write (only the micro-VM needs it; its status below says whether QEMU can run under it)")
}

// guarantees says what holds with a backend, honestly.
func guarantees(backend string, abi int) (holds, not []string) {
	switch backend {
	case BackendNameBwrap:
		return []string{
			"writes only inside the writable roots; protected paths (.git, .airlock, …) read-only and uncreatable",
			"network off is a network namespace of the run's own with no device but loopback (no TCP, UDP or DNS out; AF_UNIX sockets denied by seccomp)",
			"private /tmp, /dev/shm, PID, IPC and UTS namespaces; no capabilities; no_new_privs; seccomp (no ptrace, process_vm_*, io_uring, mount, unshare)",
			"Airlock's socket directory, the session bus, keyring and SSH agent sockets, and your credentials (~/.ssh, ~/.gnupg, ~/.aws, ~/.kube, ~/.netrc, browser profiles, …) are hidden in every mode but full-access",
			"every process the run started dies with it (PID namespace, die-with-parent)",
		}, nil
	case BackendNameLandlock:
		holds = []string{
			fmt.Sprintf("writes only inside the writable roots (Landlock ABI %d); protected paths read-only and uncreatable", abi),
			"network off by seccomp: no socket but netlink can be created (no TCP, UDP or DNS)",
			"no unix sockets in any mode (seccomp): Airlock's socket, the session bus, keyring and SSH agent are unreachable",
			"no capabilities; no_new_privs; seccomp (no ptrace, process_vm_*, io_uring, mount, unshare, System V IPC)",
			"every process the run started is killed when it ends (a subreaper stage)",
			"your credential files (~/.ssh, ~/.aws, ~/.netrc, …), the keyring and Airlock's run directory cannot be read: no Landlock rule reaches them",
			"TMPDIR is a private directory removed after the run; host /tmp and /dev/shm are read-only",
		}
		not = []string{
			"new files or directories cannot be created directly at the top level of a writable root (Landlock cannot protect .git there otherwise); create them in a subdirectory",
			"/dev/shm is not writable: Python multiprocessing queues and pools (POSIX semaphores) fail",
			"the host's processes are visible in /proc (read-only); the names in hidden directories (~/.ssh, the keyring, Airlock's run directory) can be listed, though not their files read",
		}
		if abi >= 6 {
			holds = append(holds, "signals and abstract unix sockets are scoped to the sandbox: host processes cannot be killed")
		} else {
			not = append(not, "Landlock ABI < 6: a sandboxed process can signal (kill) your other processes")
		}
		return holds, not
	case BackendNameApp:
		return appGuarantees, appLimitations
	}
	return nil, nil
}

// versionOf is what `path --version` prints, trimmed, within ProbeTimeout.
func versionOf(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version failed: %w", path, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// passed is p as a probe that succeeded: OK, with what it found and no fix to give.
func passed(p Probe, detail string) Probe {
	p.OK, p.Fix, p.Detail = true, "", detail
	return p
}
