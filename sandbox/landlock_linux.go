package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// innerStageMarker is the marker's value; the spec arrives on fd 3.
const innerStageMarker = "landlock-v1"

// innerSpec is what the outer stage hands the inner stage (on fd 3, never argv or env).
type innerSpec struct {
	Argv    []string `json:"argv"`
	Path    string   `json:"path"`
	Cwd     string   `json:"cwd"`
	Mode    Mode     `json:"mode"`
	Network bool     `json:"network"`
	// ConnectPorts, when Network is false, are the TCP ports the command may still
	// connect to (a sandbox nested in an Airlock sandbox: the enclosing one's egress
	// proxy and ask-only channel, in the enclosing network namespace).
	ConnectPorts   []uint16 `json:"connect_ports,omitempty"`
	Writable       []string `json:"writable"`
	Protected      []string `json:"protected"`
	ProtectedNames []string `json:"protected_names"`
	// Hidden are credential directories and files (and Airlock's run directory): no rule
	// reaches them, so they can be neither read nor written.
	Hidden []string `json:"hidden,omitempty"`
	// Reveal are directories inside hidden ones that stay readable (Policy.Unhidden).
	Reveal []string `json:"reveal,omitempty"`
	Tmp    string   `json:"tmp"`
}

// landlockABI returns the kernel's Landlock ABI version (0: none).
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

func landlockAvailable() bool {
	return forcedBackend != BackendNameBwrap && forcedBackend != forcedNone && landlockABI() >= 1
}

// runLandlock re-executes this binary as the inner stage, which applies
// Landlock and seccomp to itself, runs the command as a subreaper and kills
// every descendant when it ends.
func runLandlock(ctx context.Context, pr *prepared) (Result, error) {
	res := Result{Backend: BackendNameLandlock}
	p := pr.req.Policy
	outer, nested := Enclosing()
	var ports []uint16
	network := false
	switch {
	case nested:
		// Inside an Airlock sandbox the enclosing network namespace is the boundary:
		// nothing but its own services, or the network it was given.
		network, ports = nestedNetwork(p.Network, outer)
		if p.Network.On() && !network {
			res.Warning = fmt.Sprintf("network_access = %q asked inside a sandbox whose network_access is %q: the enclosing sandbox's rules apply", p.Network, outer)
		}
	case p.Network.On():
		// No network namespace here: "on" would be the host's, loopback services and all.
		return res, &ExecError{Code: ExitSandboxFailed, Err: ErrNetworkNeedsNamespace}
	case p.Network == NetworkAllowlist:
		// No namespace to put the proxy in: the run stays off, and says so.
		res.Warning = EgressNotConnected
	}
	plan, err := planMounts(p, pr.hidden) // fails closed on protected symlinks
	if err != nil {
		return res, &ExecError{Code: ExitSandboxFailed, Err: err}
	}
	self, err := os.Executable()
	if err != nil {
		return res, execErr(ExitSandboxFailed, "exec: find the airlock binary for the Landlock stage: %w", err)
	}
	tmp, err := os.MkdirTemp("", "airlock-sandbox-tmp-")
	if err != nil {
		return res, execErr(ExitSandboxFailed, "exec: private temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	spec := innerSpec{Argv: pr.req.Argv, Path: pr.path, Cwd: pr.cwd, Mode: p.Mode, Network: network, ConnectPorts: ports,
		Protected: p.Protected, ProtectedNames: p.ProtectedNames, Tmp: tmp,
		Hidden: append(slices.Clone(plan.hiddenDirs), plan.hiddenFiles...), Reveal: plan.reveal}
	if p.Mode == ModeWorkspaceWrite {
		spec.Writable = p.WritableRoots
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return res, execErr(ExitSandboxFailed, "exec: %w", err)
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		return res, execErr(ExitSandboxFailed, "exec: spec pipe: %w", err)
	}
	defer specR.Close()
	go func() {
		_, _ = specW.Write(data)
		specW.Close()
	}()

	ctx, cancel := withTimeout(ctx, pr.req.Timeout)
	defer cancel()
	env := append(slices.Clone(pr.env), "TMPDIR="+tmp, innerStageEnv+"="+innerStageMarker)
	cmd := exec.CommandContext(ctx, self)
	cmd.Args = []string{"airlock-sandbox"}
	cmd.Dir = pr.cwd
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pr.req.Stdin, pr.req.Stdout, pr.req.Stderr
	cmd.ExtraFiles = []*os.File{specR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) } // it kills its tree, then exits
	cmd.WaitDelay = waitDelay
	lim, err := startLimited(pr, cmd, &res, killGroup(cmd))
	if err != nil {
		var ee *ExecError
		if errors.As(err, &ee) {
			return res, err
		}
		return res, execErr(ExitSandboxFailed, "exec: start the Landlock stage: %w", err)
	}
	res.HostPid = cmd.Process.Pid
	if pr.req.OnStart != nil {
		pr.req.OnStart(cmd.Process.Pid)
	}
	werr := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	finishLimited(lim, &res)
	return finish(ctx, cmd, werr, res)
}

// init lets every binary that links sandbox serve as the Landlock inner stage
// (runLandlock re-executes os.Executable()): the CLI, the daemon, the window and every
// test binary, with no call in main that a new binary could forget. A forgotten one
// re-ran the whole program instead of the command: airlockd and airlock-desktop started
// a second core, a test binary its own tests, until the command's timeout.
func init() { runInnerStageIfRequested() }

// runInnerStageIfRequested: when this process is the Landlock inner stage it applies
// the sandbox, runs the command and exits with its status: it never returns. Otherwise
// it returns at once.
func runInnerStageIfRequested() {
	if os.Getenv(innerStageEnv) != innerStageMarker {
		return
	}
	os.Unsetenv(innerStageEnv)
	code, err := innerStage()
	if err != nil {
		fmt.Fprintf(os.Stderr, "airlock sandbox (landlock): %v\n", err)
		os.Exit(ExitSandboxFailed)
	}
	os.Exit(code)
}

func innerStage() (int, error) {
	// go-landlock restricts each thread on its own before ABI 8, so every
	// thread gets its own domain, and signals are scoped to a domain: the
	// command must be started and signalled from one and the same thread.
	runtime.LockOSThread()
	f := os.NewFile(3, "spec")
	if f == nil {
		return 0, errors.New("no sandbox spec on fd 3")
	}
	var spec innerSpec
	err := json.NewDecoder(f).Decode(&spec)
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("read sandbox spec: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return 0, err
	}
	if err := applyLandlock(spec); err != nil {
		return 0, err
	}
	filter, err := seccompProgram(seccompOptions{socketsOnlyNetlink: !spec.Network && len(spec.ConnectPorts) == 0, denyUnix: true, denySysVIPC: true})
	if err != nil {
		return 0, err
	}
	if err := loadSeccomp(filter); err != nil {
		return 0, err
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("become subreaper: %w", err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	cmd := exec.Command(spec.Path, spec.Argv[1:]...)
	cmd.Args[0] = spec.Argv[0]
	cmd.Dir = spec.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal: no TIOCSTI into the user's shell
	if err := cmd.Start(); err != nil {
		return ExitCannotExecute, fmt.Errorf("exec %s: %w", spec.Argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case s := <-sigs:
		// Kill first, reap after: reaping the command here would leave cmd.Wait blocked.
		for _, pid := range descendants(os.Getpid()) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		<-done
		killDescendants()
		return 128 + int(s.(syscall.Signal)), nil
	}
	killDescendants()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return cmd.ProcessState.ExitCode(), nil
}

// dropCapabilities empties the bounding, ambient, effective, permitted and
// inheritable sets on every thread (as root, Landlock alone would leave every capability).
func dropCapabilities() error {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		_, _, _ = psx.Syscall3(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0) // EPERM when unprivileged: nothing to drop
	}
	_, _, _ = psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, errno := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); errno != 0 {
		return fmt.Errorf("drop capabilities: %w", errno)
	}
	return nil
}

// applyLandlock restricts this process: reads everywhere, writes only under the
// writable roots minus the protected paths (whose creation is refused too),
// the private temp dir and the terminal/null devices; TCP off when the network
// is; signals and abstract unix sockets scoped to the sandbox.
func applyLandlock(spec innerSpec) error {
	all := landlock.V7.HandledAccessFS
	if abi := landlockABI(); abi >= 9 {
		all = landlock.V9.HandledAccessFS // also resolve_unix: named sockets outside the rules stay unreachable
	}
	read, err := readTree("/", spec.Hidden)
	if err != nil {
		return err
	}
	for _, r := range spec.Reveal {
		// Inside a hidden directory no rule reaches: this one alone is granted back.
		read = append(read, landlock.RODirs(r).IgnoreIfMissing())
	}
	rules := append(read,
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx").WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs(spec.Tmp),
	)
	for _, root := range spec.Writable {
		r, err := grantTree(root, append(slices.Clone(spec.Protected), spec.Hidden...), spec.ProtectedNames)
		if err != nil {
			return err
		}
		rules = append(rules, r...)
	}
	cfg := landlock.Config{HandledAccessFS: all, Scoped: landlock.V7.Scoped}
	if !spec.Network {
		cfg.HandledAccessNet = landlock.V7.HandledAccessNet
		for _, port := range spec.ConnectPorts {
			rules = append(rules, landlock.ConnectTCP(port))
		}
	}
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("apply Landlock: %w", err)
	}
	return nil
}

// grantTree grants full access below dir except to protected paths: a
// directory that holds a protected path gets no rights itself (so nothing can
// be created or renamed in it) and its other entries are granted one by one.
// Symlinks are not granted (a rule would follow them out of the root).
func grantTree(dir string, protected, names []string) ([]landlock.Rule, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("writable root %s: %w", dir, err)
	}
	var rules []landlock.Rule
	for _, e := range entries {
		full := filepath.Join(dir, e.Name())
		if slices.Contains(names, e.Name()) || slices.Contains(protected, full) || e.Type()&os.ModeSymlink != 0 {
			continue
		}
		holds := false
		for _, prot := range protected {
			if strings.HasPrefix(prot, full+"/") {
				holds = true
				break
			}
		}
		switch {
		case holds && e.IsDir():
			sub, err := grantTree(full, protected, names)
			if err != nil {
				return nil, err
			}
			rules = append(rules, sub...)
		case e.IsDir():
			rules = append(rules, landlock.RWDirs(full).WithRefer().WithIoctlDev().IgnoreIfMissing())
		default:
			rules = append(rules, landlock.RWFiles(full).IgnoreIfMissing())
		}
	}
	return rules, nil
}

// readTree grants read and execute below dir, except on the hidden paths: a directory
// that holds one may only be listed (Landlock rights are inherited, so reading its files
// would reach the hidden ones), and its other entries are granted one by one.
func readTree(dir string, hidden []string) ([]landlock.Rule, error) {
	holds := false
	for _, h := range hidden {
		if h == dir {
			return nil, nil
		}
		if strings.HasPrefix(h, strings.TrimSuffix(dir, "/")+"/") {
			holds = true
		}
	}
	if !holds {
		return []landlock.Rule{landlock.RODirs(dir).IgnoreIfMissing()}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read rules for %s: %w", dir, err)
	}
	rules := []landlock.Rule{landlock.PathAccess(landlock.AccessFSSet(llsys.AccessFSReadDir), dir)}
	for _, e := range entries {
		full := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			sub, err := readTree(full, hidden)
			if err != nil {
				return nil, err
			}
			rules = append(rules, sub...)
		case e.Type()&os.ModeSymlink != 0:
			// A rule on a symlink applies to its target: the target is granted (or not)
			// where it lives.
		case !slices.Contains(hidden, full):
			rules = append(rules, landlock.ROFiles(full).IgnoreIfMissing())
		}
	}
	return rules, nil
}

// loadSeccomp installs the filter on every thread (no_new_privs is already set by Landlock).
func loadSeccomp(filter []byte) error {
	n := len(filter) / 8
	insns := make([]unix.SockFilter, n)
	for i := range insns {
		insns[i] = *(*unix.SockFilter)(unsafe.Pointer(&filter[i*8]))
	}
	prog := unix.SockFprog{Len: uint16(n), Filter: &insns[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return fmt.Errorf("load seccomp filter: %w", errno)
	}
	return nil
}

// killDescendants SIGKILLs every process below this one (as a subreaper, all
// orphans are reparented here) and reaps them, until none is left. Call it
// only after the command itself was waited for.
func killDescendants() {
	self := os.Getpid()
	for range 100 {
		kids := descendants(self)
		for _, pid := range kids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err != nil || pid <= 0 {
				break
			}
		}
		if len(kids) == 0 {
			return
		}
	}
}

// descendants lists the pids below root by walking /proc/PID/task/TID/children
// (only root's own tree is read, so it stays cheap on a busy machine).
func descendants(root int) []int {
	var out []int
	queue := []int{root}
	for len(queue) > 0 && len(out) < 1<<16 {
		p := queue[0]
		queue = queue[1:]
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		if err != nil {
			continue
		}
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + task.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// parentPid reads the ppid of pid from /proc/PID/stat (0 when unreadable).
func parentPid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
