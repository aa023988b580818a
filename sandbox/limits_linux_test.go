package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// limitedPolicy is a policy of the given mode with small limits, on a machine where
// Airlock can create cgroups (the test is skipped elsewhere, saying why).
func limitedPolicy(t *testing.T, mode string, l Limits) Policy {
	t.Helper()
	if sys := cgroups(); sys.err != nil {
		t.Skipf("no cgroup to apply limits with here: %v", sys.err)
	}
	p, _ := testPolicy(t, mode, false)
	p.Limits = l
	return p
}

// leftCgroups lists the cgroups this process created that still exist.
func leftCgroups(t *testing.T) []string {
	t.Helper()
	sys := cgroups()
	var dirs []string
	if sys.v2 != "" {
		dirs = append(dirs, sys.v2)
	}
	for _, d := range sys.v1 {
		dirs = append(dirs, d)
	}
	var left []string
	for _, d := range dirs {
		m, _ := filepath.Glob(filepath.Join(d, fmt.Sprintf("airlock-run-%d-*", os.Getpid())))
		left = append(left, m...)
	}
	return left
}

// TestForkBombEndedByThePidsLimit: a fork bomb is contained by the pids limit — the
// machine goes on — and is ended as soon as it reaches it, with every process it
// started, saying which limit ended it. Under bubblewrap and with no OS sandbox alike.
func TestForkBombEndedByThePidsLimit(t *testing.T) {
	for _, mode := range []string{"workspace-write", "full-access"} {
		t.Run(mode, func(t *testing.T) {
			p := limitedPolicy(t, mode, Limits{Memory: "512MiB", Pids: 64, CPU: "100%"})
			var out bytes.Buffer
			res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"bash", "-c", ":(){ :|:& };:; sleep 600"},
				Stdout: &out, Stderr: &out, Timeout: 5 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if res.TimedOut || res.Limit != LimitPids || !strings.Contains(res.LimitMessage, "ended: the pids limit (64) was reached") {
				t.Fatalf("result %+v, want ended by the pids limit", res)
			}
			if left := leftCgroups(t); len(left) > 0 {
				t.Fatalf("cgroups left behind: %v", left)
			}
		})
	}
}

// TestMemoryHogEndedByTheMemoryLimit: a command that takes more memory than the limit is
// ended by it, and says so.
func TestMemoryHogEndedByTheMemoryLimit(t *testing.T) {
	for _, mode := range []string{"workspace-write", "full-access"} {
		t.Run(mode, func(t *testing.T) {
			p := limitedPolicy(t, mode, Limits{Memory: "64MiB", Pids: 64, CPU: "max"})
			var out bytes.Buffer
			// bash holds the whole 256 MiB in one variable.
			res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"bash", "-c", "x=$(head -c 268435456 /dev/zero | tr '\\0' a); echo ${#x}"},
				Stdout: &out, Stderr: &out, Timeout: 5 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if res.Limit != LimitMemory || res.ExitCode == 0 || !strings.Contains(res.LimitMessage, "ended: the memory limit (64MiB) was reached") {
				t.Fatalf("result %+v (output %q), want ended by the memory limit", res, out.String())
			}
		})
	}
}

// TestLimitsAreWritten: the command's cgroup holds exactly the policy's limits, and a
// command under them that stays within them runs as usual.
func TestLimitsAreWritten(t *testing.T) {
	p := limitedPolicy(t, "workspace-write", Limits{Memory: "300MiB", Pids: 77, CPU: "150%"})
	var files map[string]string
	res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"sleep", "0.2"}, OnStart: func(pid int) {
		files = cgroupFilesOf(t, pid)
	}})
	if err != nil || res.ExitCode != 0 || res.Limit != "" || res.Warning != "" {
		t.Fatalf("%+v %v", res, err)
	}
	want := map[string]string{"memory": fmt.Sprint(300 << 20), "pids": "77", "cpu": "150000"}
	for k, v := range want {
		if !strings.Contains(files[k], v) {
			t.Errorf("%s limit = %q, want %s", k, files[k], v)
		}
	}
}

// cgroupFilesOf reads the memory, pids and cpu limits of the cgroup pid is in.
func cgroupFilesOf(t *testing.T, pid int) map[string]string {
	own, err := readOwnCgroups(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	read := func(parts ...string) string {
		b, _ := os.ReadFile(filepath.Join(parts...))
		return strings.TrimSpace(string(b))
	}
	sys := cgroups()
	if sys.v2 != "" {
		dir := filepath.Join(sys.v2Mount, own[""])
		return map[string]string{"memory": read(dir, "memory.max"), "pids": read(dir, "pids.max"), "cpu": read(dir, "cpu.max")}
	}
	return map[string]string{
		"memory": read(cgroupRoot, "memory", own["memory"], "memory.limit_in_bytes"),
		"pids":   read(cgroupRoot, "pids", own["pids"], "pids.max"),
		"cpu":    read(cgroupRoot, "cpu", own["cpu"], "cpu.cfs_quota_us"),
	}
}

// TestNoCgroupSaysSo: where Airlock cannot create cgroups (here: the cgroup root is a
// directory that is no cgroup file system), a command still runs, and the result, the
// status and the probe say that the limits are not applied and what to do; with
// [limits] required = true it is refused.
func TestNoCgroupSaysSo(t *testing.T) {
	fake := t.TempDir()
	for _, d := range []string{"unified", "pids", "memory", "cpu"} {
		os.MkdirAll(filepath.Join(fake, d), 0o755)
	}
	os.WriteFile(filepath.Join(fake, "unified", "cgroup.controllers"), []byte("memory pids cpu\n"), 0o644)
	oldRoot := cgroupRoot
	cgroupRoot = fake
	resetCgroups()
	t.Cleanup(func() { cgroupRoot = oldRoot; resetCgroups() })

	p, _ := testPolicy(t, "workspace-write", false)
	p.Limits = Limits{Memory: "1GiB", Pids: 100, CPU: "100%"}
	var out bytes.Buffer
	res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"echo", "ran"}, Stdout: &out})
	if err != nil || strings.TrimSpace(out.String()) != "ran" {
		t.Fatalf("without cgroups the command must still run: %v %q", err, out.String())
	}
	for _, w := range []string{"resource limits are NOT applied", "memory 1GiB, pids 100, cpu 100%", fake, "is not a cgroup file system", "Delegate=yes", "required = true"} {
		if !strings.Contains(res.Warning, w) {
			t.Errorf("warning %q does not say %q", res.Warning, w)
		}
	}
	pr := limitsProbe()
	if pr.OK || !strings.Contains(pr.Detail, "not applied") || pr.Fix == "" {
		t.Errorf("probe %+v, want a failed probe with the way out", pr)
	}
	st := ProbeStatus(context.Background(), BackendAuto)
	if st.Probe(ProbeLimits).OK || !strings.Contains(strings.Join(st.Limitations, "\n"), "fork bomb") {
		t.Errorf("status %+v does not say the limits are missing", st)
	}

	p.LimitsRequired = true
	out.Reset()
	_, err = Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"echo", "ran"}, Stdout: &out})
	var ee *ExecError
	if !errors.Is(err, ErrLimitsUnavailable) || !errors.As(err, &ee) || ee.Code != ExitSandboxFailed || out.Len() != 0 {
		t.Fatalf("required limits without cgroups: %v (output %q), want ErrLimitsUnavailable and nothing run", err, out.String())
	}
}

// BenchmarkRunCgroup is what the limits add to every command: creating its cgroup with
// the limits written, and removing it.
func BenchmarkRunCgroup(b *testing.B) {
	sys := cgroups()
	if sys.err != nil {
		b.Skip(sys.err)
	}
	for b.Loop() {
		g, err := newRunCgroup(sys, DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		g.remove()
	}
}

// TestStaleCgroupsAreRemoved: the cgroups a killed Airlock process left behind are
// removed when the next one starts; those of a live process stay.
func TestStaleCgroupsAreRemoved(t *testing.T) {
	sys := cgroups()
	if sys.err != nil {
		t.Skipf("no cgroup to apply limits with here: %v", sys.err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	parent := sys.v2
	if parent == "" {
		parent = sys.v1["pids"]
	}
	stale := filepath.Join(parent, fmt.Sprintf("airlock-run-%d-1", dead.Process.Pid))
	live := filepath.Join(parent, fmt.Sprintf("airlock-run-%d-999", os.Getpid()))
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.Remove(live)
	removeStale(parent)
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s of an ended process is still there", stale)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s of this live process was removed", live)
	}
}
