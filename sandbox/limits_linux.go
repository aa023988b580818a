package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Where the cgroup file systems are found. Tests point them elsewhere (a directory that
// is no cgroup file system gives the no-cgroup message).
var (
	cgroupRoot     = "/sys/fs/cgroup"
	procSelfCgroup = "/proc/self/cgroup"
)

// limitPoll is how often a running command's cgroup events are read: a limit reached
// ends the run, so a fork bomb spinning against pids.max does not hold the run until its
// timeout.
const limitPoll = 100 * time.Millisecond

// v1Controllers are the hierarchies a cgroup v1 (hybrid) machine needs, in the order
// they are joined.
var v1Controllers = []string{"pids", "memory", "cpu"}

// cgroupSystem is where this process may create the cgroups of its commands: a cgroup
// v2 directory with the memory, pids and cpu controllers, or (hybrid machines, where
// those controllers are still on cgroup v1) a directory per v1 hierarchy.
type cgroupSystem struct {
	// v2 is the parent of the commands' cgroups on the unified hierarchy, mounted at
	// v2Mount.
	v2, v2Mount string
	// v1 maps a controller to the parent of the commands' cgroups in its hierarchy, and
	// v1Own to this process's own cgroup there (where the starting thread returns).
	v1, v1Own map[string]string
	// err says why there is neither; nil when one of them works.
	err error
}

var (
	cgroupOnce sync.Once
	cgroupSys  *cgroupSystem
	cgroupSeq  atomic.Uint64
)

// cgroups detects, once per process, where commands' cgroups go.
func cgroups() *cgroupSystem {
	cgroupOnce.Do(func() { cgroupSys = detectCgroups(cgroupRoot, procSelfCgroup) })
	return cgroupSys
}

// resetCgroups makes the next cgroups() detect again (tests that move the root).
func resetCgroups() { cgroupOnce = sync.Once{}; cgroupSys = nil }

func detectCgroups(root, self string) *cgroupSystem {
	own, err := readOwnCgroups(self)
	if err != nil {
		return &cgroupSystem{err: fmt.Errorf("read this process's cgroups (%s): %w", self, err)}
	}
	var v2err error
	for _, unified := range []string{root, filepath.Join(root, "unified")} {
		if _, err := os.Stat(filepath.Join(unified, "cgroup.controllers")); err != nil {
			continue
		}
		dir, err := setupV2(unified, own[""])
		if err == nil {
			return &cgroupSystem{v2: dir, v2Mount: unified}
		}
		v2err = err
		break
	}
	sys, v1err := setupV1(root, own)
	if v1err == nil {
		return sys
	}
	switch {
	case v2err != nil:
		return &cgroupSystem{err: fmt.Errorf("cgroup v2: %w; cgroup v1: %w", v2err, v1err)}
	default:
		return &cgroupSystem{err: fmt.Errorf("no cgroup v2 file system with the memory, pids and cpu controllers at %s; cgroup v1: %w", root, v1err)}
	}
}

// readOwnCgroups maps each controller of /proc/self/cgroup to this process's cgroup
// there; "" is the unified hierarchy.
func readOwnCgroups(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	own := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	return own, nil
}

// isCgroupFS reports whether dir is on a cgroup file system (v1 or v2): a look-alike
// directory tree must never pass for limits.
func isCgroupFS(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	return st.Type == unix.CGROUP2_SUPER_MAGIC || st.Type == unix.CGROUP_SUPER_MAGIC
}

// setupV2 makes the process's own v2 cgroup able to hold children with the memory, pids
// and cpu controllers. A cgroup with processes cannot enable controllers for its
// children ("no internal processes"), so this process first moves into a leaf of its own
// beside the commands' cgroups, as a delegated service does.
func setupV2(unified, own string) (string, error) {
	base := filepath.Join(unified, filepath.Clean("/"+own))
	if !isCgroupFS(base) {
		return "", fmt.Errorf("%s is not a cgroup file system", base)
	}
	avail, err := os.ReadFile(filepath.Join(base, "cgroup.controllers"))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", filepath.Join(base, "cgroup.controllers"), err)
	}
	have := strings.Fields(string(avail))
	for _, c := range []string{"memory", "pids", "cpu"} {
		if !slices.Contains(have, c) {
			return "", fmt.Errorf("the %s controller is not available in %s (it has: %s)", c, base, strings.Join(have, " "))
		}
	}
	enable := func() error {
		return os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+memory +pids +cpu"), 0)
	}
	removeStale(base)
	err = enable()
	if errors.Is(err, unix.EBUSY) && base != unified {
		leaf := filepath.Join(base, fmt.Sprintf("airlock-%d", os.Getpid()))
		if merr := os.Mkdir(leaf, 0o755); merr != nil && !errors.Is(merr, os.ErrExist) {
			return "", fmt.Errorf("create %s: %w", leaf, merr)
		}
		if merr := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte("0"), 0); merr != nil {
			return "", fmt.Errorf("move into %s: %w", leaf, merr)
		}
		err = enable()
	}
	if err != nil {
		return "", fmt.Errorf("enable memory, pids and cpu for the children of %s: %w", base, err)
	}
	return base, nil
}

// removeStale removes the cgroups that Airlock processes which have ended left under base:
// the leaves they moved into (a process cannot remove the cgroup it is in) and their
// commands' cgroups, when they were killed before removing them.
func removeStale(base string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "airlock-")
		if !ok || !e.IsDir() {
			continue
		}
		rest = strings.TrimPrefix(rest, "run-")
		rest, _, _ = strings.Cut(rest, "-")
		pid, err := strconv.Atoi(rest)
		if err != nil || pid <= 0 || pid == os.Getpid() || !errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			continue
		}
		_ = unix.Rmdir(filepath.Join(base, e.Name())) // refused while anything is in it
	}
}

// setupV1 finds the pids, memory and cpu hierarchies of a cgroup v1 (hybrid) machine
// where this process's own cgroups are writable.
func setupV1(root string, own map[string]string) (*cgroupSystem, error) {
	sys := &cgroupSystem{v1: map[string]string{}, v1Own: map[string]string{}}
	for _, c := range v1Controllers {
		mount := filepath.Join(root, c)
		if !isCgroupFS(mount) {
			return nil, fmt.Errorf("no %s hierarchy at %s", c, mount)
		}
		path, ok := own[c]
		if !ok {
			return nil, fmt.Errorf("this process is in no %s cgroup", c)
		}
		dir := filepath.Join(mount, filepath.Clean("/"+path))
		// Whether it may create cgroups there is found out by creating one: at a
		// command's start (the error says where), or by the status's probe.
		if unix.Access(dir, unix.W_OK) != nil {
			return nil, fmt.Errorf("cannot create cgroups under %s: not writable by this user", dir)
		}
		removeStale(dir)
		sys.v1[c], sys.v1Own[c] = dir, dir
	}
	return sys, nil
}

// describe says where commands' cgroups go, for the status.
func (s *cgroupSystem) describe() string {
	if s.v2 != "" {
		return "cgroup v2 under " + s.v2
	}
	return "cgroup v1 (memory, pids and cpu hierarchies) under " + s.v1["pids"]
}

// runCgroup is one command's cgroup: on v2 one directory, on v1 one per hierarchy.
type runCgroup struct {
	lim     cgroupLimits
	limits  Limits
	v2      string            // the directory (v2)
	v1      map[string]string // controller → directory (v1)
	own     map[string]string // v1: where the starting thread returns
	fd      int               // v2: the directory, for CLONE_INTO_CGROUP
	reached atomic.Value      // string: the limit that ended the command
	stop    chan struct{}
	done    chan struct{}
}

// newRunCgroup creates a command's cgroup with its limits written.
func newRunCgroup(sys *cgroupSystem, l Limits) (*runCgroup, error) {
	lim, err := parseLimits(l)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("airlock-run-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	g := &runCgroup{lim: lim, limits: l, fd: -1, stop: make(chan struct{}), done: make(chan struct{})}
	g.reached.Store("")
	write := func(dir, file, val string) error {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(val), 0); err != nil {
			return fmt.Errorf("set %s to %s: %w", filepath.Join(dir, file), val, err)
		}
		return nil
	}
	if sys.v2 != "" {
		g.v2 = filepath.Join(sys.v2, name)
		if err := os.Mkdir(g.v2, 0o755); err != nil {
			return nil, fmt.Errorf("create the cgroup %s: %w", g.v2, err)
		}
		mem, cpu := "max", "max"
		if lim.memory > 0 {
			mem = strconv.FormatInt(lim.memory, 10)
		}
		if lim.cpuPercent > 0 {
			cpu = fmt.Sprintf("%d 100000", lim.cpuPercent*1000)
		}
		err := errors.Join(write(g.v2, "memory.max", mem), write(g.v2, "pids.max", strconv.FormatInt(lim.pids, 10)), write(g.v2, "cpu.max", cpu))
		if err == nil {
			// Without these a limited run swaps instead, and its OOM kills one process
			// and leaves the rest running; best effort (older kernels lack them).
			if lim.memory > 0 {
				_ = write(g.v2, "memory.swap.max", "0")
			}
			_ = write(g.v2, "memory.oom.group", "1")
			g.fd, err = unix.Open(g.v2, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				err = fmt.Errorf("open the cgroup %s: %w", g.v2, err)
			}
		}
		if err != nil {
			g.remove()
			return nil, err
		}
		return g, nil
	}
	g.v1, g.own = map[string]string{}, sys.v1Own
	for _, c := range v1Controllers {
		dir := filepath.Join(sys.v1[c], name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			g.remove()
			return nil, fmt.Errorf("create the cgroup %s: %w", dir, err)
		}
		g.v1[c] = dir
	}
	err = write(g.v1["pids"], "pids.max", strconv.FormatInt(lim.pids, 10))
	if err == nil && lim.memory > 0 {
		err = write(g.v1["memory"], "memory.limit_in_bytes", strconv.FormatInt(lim.memory, 10))
		_ = write(g.v1["memory"], "memory.memsw.limit_in_bytes", strconv.FormatInt(lim.memory, 10)) // no swap beyond it, where swap accounting is on
	}
	if err == nil && lim.cpuPercent > 0 {
		err = errors.Join(write(g.v1["cpu"], "cpu.cfs_period_us", "100000"), write(g.v1["cpu"], "cpu.cfs_quota_us", strconv.FormatInt(lim.cpuPercent*1000, 10)))
	}
	if err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

// start starts cmd inside the cgroup, so that nothing it runs is ever outside it: on v2
// with CLONE_INTO_CGROUP, on v1 by forking from a thread that joined the cgroup for the
// fork and leaves it after.
func (g *runCgroup) start(cmd *exec.Cmd) error {
	if g.v2 != "" {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, g.fd
		return cmd.Start()
	}
	runtime.LockOSThread()
	tid := []byte(strconv.Itoa(unix.Gettid()))
	var joined []string
	leave := func() bool {
		ok := true
		for _, c := range joined {
			if os.WriteFile(filepath.Join(g.own[c], "tasks"), tid, 0) != nil {
				ok = false
			}
		}
		return ok
	}
	var err error
	for _, c := range v1Controllers {
		if err = os.WriteFile(filepath.Join(g.v1[c], "tasks"), tid, 0); err != nil {
			err = fmt.Errorf("join the cgroup %s: %w", g.v1[c], err)
			break
		}
		joined = append(joined, c)
	}
	if err == nil {
		err = cmd.Start()
	}
	if leave() {
		runtime.UnlockOSThread()
	} // else the thread stays locked, and the runtime ends it with this goroutine
	return err
}

// watch ends the command (kill) as soon as one of its limits is reached: the pids
// limit refused a fork, or the memory limit's OOM killer ran.
func (g *runCgroup) watch(kill func()) {
	go func() {
		defer close(g.done)
		t := time.NewTicker(limitPoll)
		defer t.Stop()
		for {
			select {
			case <-g.stop:
				return
			case <-t.C:
			}
			if which := g.check(); which != "" {
				g.reached.Store(which)
				kill()
				g.killAll()
				return
			}
		}
	}()
}

// check reads the cgroup's events: the limit that was reached, or "".
func (g *runCgroup) check() string {
	if g.v2 != "" {
		if eventCount(filepath.Join(g.v2, "memory.events"), "oom_kill") > 0 {
			return LimitMemory
		}
		if eventCount(filepath.Join(g.v2, "pids.events"), "max") > 0 {
			return LimitPids
		}
		return ""
	}
	if eventCount(filepath.Join(g.v1["memory"], "memory.oom_control"), "oom_kill") > 0 {
		return LimitMemory
	}
	if eventCount(filepath.Join(g.v1["pids"], "pids.events"), "max") > 0 {
		return LimitPids
	}
	return ""
}

// eventCount reads one "name count" line of a cgroup events file (0 when absent).
func eventCount(file, name string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// procsFile lists the cgroup's processes.
func (g *runCgroup) procsFile() string {
	if g.v2 != "" {
		return filepath.Join(g.v2, "cgroup.procs")
	}
	return filepath.Join(g.v1["pids"], "cgroup.procs")
}

// killAll kills every process left in the cgroup (cgroup.kill where the kernel has it;
// otherwise a few passes over cgroup.procs, which a pids-limited tree cannot outrun).
func (g *runCgroup) killAll() {
	if g.v2 != "" && os.WriteFile(filepath.Join(g.v2, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	for range 100 {
		data, err := os.ReadFile(g.procsFile())
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			return
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// finish stops watching, reads the limit that ended the command (into res), kills what
// is left and removes the cgroup.
func (g *runCgroup) finish(res *Result) {
	close(g.stop)
	<-g.done
	which, _ := g.reached.Load().(string)
	if which == "" {
		which = g.check()
	}
	if which != "" {
		res.Limit = which
		res.LimitMessage = LimitReached(which, g.limits)
	}
	g.killAll()
	g.remove()
}

// remove deletes the cgroup; the kernel refuses while exiting processes are still in
// it, so it tries for a moment.
func (g *runCgroup) remove() {
	if g.fd >= 0 {
		_ = unix.Close(g.fd)
		g.fd = -1
	}
	dirs := []string{g.v2}
	if g.v2 == "" {
		dirs = dirs[:0]
		for _, c := range v1Controllers {
			if d := g.v1[c]; d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	for _, d := range dirs {
		for i := 0; i < 200; i++ {
			if err := unix.Rmdir(d); err == nil || errors.Is(err, unix.ENOENT) || !errors.Is(err, unix.EBUSY) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// startLimited starts cmd in a cgroup of its own with the policy's limits, watching
// them: kill ends the command when a limit is reached. Where no cgroup can be created
// the command starts without them and res.Warning says so, unless the policy requires
// them (then an *ExecError wrapping ErrLimitsUnavailable). The returned cgroup (nil
// without one) is finished with finishLimited after Wait.
func startLimited(pr *prepared, cmd *exec.Cmd, res *Result, kill func()) (*runCgroup, error) {
	l := pr.req.Policy.Limits
	if l.IsZero() {
		return nil, cmd.Start()
	}
	sys := cgroups()
	var g *runCgroup
	err := sys.err
	if err == nil {
		g, err = newRunCgroup(sys, l)
	}
	if err != nil {
		if errors.Is(err, ErrBadLimit) {
			return nil, &ExecError{Code: ExitSandboxFailed, Err: err}
		}
		if pr.req.Policy.LimitsRequired {
			return nil, &ExecError{Code: ExitSandboxFailed, Err: fmt.Errorf("%w (%s) and [limits] required = true: %v; %s", ErrLimitsUnavailable, LimitsString(l), err, noCgroupFix)}
		}
		res.Warning = joinWarn(limitsNotAppliedWarning(l, err), res.Warning)
		return nil, cmd.Start()
	}
	if err := g.start(cmd); err != nil {
		g.remove()
		return nil, err
	}
	g.watch(kill)
	return g, nil
}

// finishLimited records the limit that ended the command, if any, and removes its cgroup.
func finishLimited(g *runCgroup, res *Result) {
	if g != nil {
		g.finish(res)
	}
}

// limitsProbe is the status's line about resource limits.
func limitsProbe() Probe {
	p := Probe{Name: ProbeLimits}
	sys := cgroups()
	err := sys.err
	if err == nil {
		// The one way to know that cgroups can be created here is to create one.
		var g *runCgroup
		if g, err = newRunCgroup(sys, DefaultLimits); err == nil {
			g.remove()
		}
	}
	if err != nil {
		p.Detail = "resource limits ([limits]) are not applied: " + err.Error()
		p.Fix = noCgroupFix
		return p
	}
	return passed(p, "each run and each MCP bash call gets a cgroup of its own with [limits] memory, pids and cpu ("+sys.describe()+")")
}
