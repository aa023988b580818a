package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// start runs name with args and kills it when the test ends.
func start(t *testing.T, attr *syscall.SysProcAttr, name string, args ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(name, args...)
	c.SysProcAttr = attr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	return c
}

// child waits for pid's first child and returns it.
func child(t *testing.T, pid int) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		raw, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
		if f := strings.Fields(string(raw)); len(f) > 0 {
			c, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	t.Fatalf("pid %d started no child", pid)
	return 0
}

// A command name may hold spaces and parentheses: the fields are read after the last
// ')', so a name that imitates the stat line does not shift them.
func TestStatWithAHostileName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "x) S 1 1 1 34816 (y")
	if err := os.WriteFile(name, data, 0o755); err != nil {
		t.Fatal(err)
	}
	c := start(t, nil, name, "30")
	f, err := Stat(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if ppid, err := ParentPID(c.Process.Pid); err != nil || ppid != os.Getpid() {
		t.Fatalf("ParentPID = %d, %v; want this test's pid %d (fields %q)", ppid, err, os.Getpid(), f)
	}
}

func TestStatOfAMissingProcess(t *testing.T) {
	if _, err := Stat(1 << 30); !os.IsNotExist(err) {
		t.Fatalf("Stat of no process = %v, want a not-exist error", err)
	}
	if HasControllingTTY(1 << 30) {
		t.Fatal("a missing process has a terminal")
	}
}

// A process in its own session has no controlling terminal, whatever this test has.
func TestNoControllingTTYInANewSession(t *testing.T) {
	c := start(t, &syscall.SysProcAttr{Setsid: true}, "sleep", "30")
	if HasControllingTTY(c.Process.Pid) {
		t.Fatal("a process in a new session has a controlling terminal")
	}
}

func TestDescendsFrom(t *testing.T) {
	sh := start(t, nil, "sh", "-c", "sleep 30 & wait")
	grandchild := child(t, sh.Process.Pid)
	other := start(t, nil, "sleep", "30")
	for _, tc := range []struct {
		name          string
		pid, ancestor int
		want          bool
	}{
		{"itself", sh.Process.Pid, sh.Process.Pid, true},
		{"its child", grandchild, sh.Process.Pid, true},
		{"its grandchild", grandchild, os.Getpid(), true},
		{"a sibling", grandchild, other.Process.Pid, false},
		{"the parent from the child", os.Getpid(), sh.Process.Pid, false},
		{"no ancestor", grandchild, 0, false},
		{"a missing process", 1 << 30, os.Getpid(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DescendsFrom(tc.pid, tc.ancestor); got != tc.want {
				t.Fatalf("DescendsFrom(%d, %d) = %v, want %v", tc.pid, tc.ancestor, got, tc.want)
			}
		})
	}
}

// A recorded sandbox and everything it starts count as inside it until the sandbox is
// forgotten; an unknown peer counts as inside one.
func TestSandboxesContain(t *testing.T) {
	s := NewSandboxes()
	sh := start(t, nil, "sh", "-c", "sleep 30 & wait")
	inner := child(t, sh.Process.Pid)
	if s.Contains(os.Getpid()) || s.Contains(inner) {
		t.Fatal("an empty set contains a process of the core's namespaces")
	}
	forget := s.Add(sh.Process.Pid)
	if !s.Contains(sh.Process.Pid) || !s.Contains(inner) {
		t.Fatal("a recorded sandbox, or a process it started, is not contained")
	}
	if s.Contains(os.Getpid()) {
		t.Fatal("the process that started the sandbox is contained")
	}
	forget()
	if s.Contains(inner) {
		t.Fatal("a forgotten sandbox is still contained")
	}
	for _, pid := range []int{0, -1} {
		if !s.Contains(pid) {
			t.Fatalf("an unknown peer (pid %d) is not treated as sandboxed", pid)
		}
	}
}

// A process in another pid namespace (as every bubblewrap sandbox is) is inside a
// sandbox even when the core never recorded it: a sandbox someone else started.
func TestSandboxesContainAnotherNamespace(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("no bubblewrap")
	}
	if out, err := exec.Command(bwrap, "--unshare-pid", "--unshare-user", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true").CombinedOutput(); err != nil {
		t.Skipf("bubblewrap cannot unshare here: %v %s", err, out)
	}
	b := start(t, nil, bwrap, "--unshare-pid", "--unshare-user", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "sleep", "30")
	// bwrap's child is PID 1 of the new namespace; its own child runs sleep.
	inner := child(t, child(t, b.Process.Pid))
	if !NewSandboxes().Contains(inner) {
		t.Fatalf("pid %d in another pid namespace is not contained", inner)
	}
}

// Children finds a process's children (and only them); Cmdline gives their arguments.
func TestChildrenAndCmdline(t *testing.T) {
	sh := start(t, nil, "sh", "-c", "sleep 31 & wait")
	kid := child(t, sh.Process.Pid)
	if got := Children(sh.Process.Pid); len(got) != 1 || got[0] != kid {
		t.Fatalf("Children(%d) = %v, want [%d]", sh.Process.Pid, got, kid)
	}
	if got := Children(kid); len(got) != 0 {
		t.Fatalf("a sleep has children: %v", got)
	}
	argv, err := Cmdline(kid)
	if err != nil || len(argv) != 2 || argv[1] != "31" {
		t.Fatalf("Cmdline(%d) = %q, %v", kid, argv, err)
	}
	if _, err := Cmdline(1 << 30); err == nil {
		t.Fatal("a missing process has arguments")
	}
}
