package ops

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLocalRunner(t *testing.T) {
	dir := t.TempDir()
	r := LocalRunner{}
	ctx := context.Background()

	res, err := r.Run(ctx, RunSpec{Command: Command{Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 7"}}, Dir: dir})
	if err != nil || res.ExitCode != 7 || string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" || res.TimedOut {
		t.Fatalf("exit status run: %+v %v", res, err)
	}
	res, err = r.Run(ctx, RunSpec{Command: Command{Shell: "pwd"}, Dir: dir})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != dir {
		t.Fatalf("working directory: %q %v", res.Stdout, err)
	}
	res, err = r.Run(ctx, RunSpec{Command: Command{Shell: "head -c 100000 /dev/zero"}, Dir: dir, OutputCap: 1000})
	if err != nil || len(res.Stdout) != 1000 || !res.Truncated || res.ExitCode != 0 {
		t.Fatalf("output cap: %d bytes, truncated %v, %v", len(res.Stdout), res.Truncated, err)
	}
	if _, err := r.Run(ctx, RunSpec{Command: Command{Argv: []string{"/nonexistent/program"}}, Dir: dir}); err == nil {
		t.Fatal("a missing program is not an error")
	}
}

func TestLocalRunnerTimeoutKillsTheWholeGroup(t *testing.T) {
	dir := t.TempDir()
	// The command starts a background child that outlives its parent shell unless the
	// whole process group is killed.
	res, err := LocalRunner{}.Run(context.Background(), RunSpec{
		Command: Command{Shell: "sleep 60 & echo $! > child.pid; wait"}, Dir: dir, Timeout: 500 * time.Millisecond})
	if err != nil || !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("timeout: %+v %v", res, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// The child was sent SIGKILL before Run returned.
	if !dies(pid) {
		t.Fatalf("background child %d survived the timeout", pid)
	}
}

func TestLocalRunnerKillsLeftoversAfterExit(t *testing.T) {
	dir := t.TempDir()
	res, err := LocalRunner{}.Run(context.Background(), RunSpec{
		Command: Command{Shell: "sleep 60 >/dev/null 2>&1 & echo $! > child.pid"}, Dir: dir, Timeout: 10 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "child.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if !dies(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("a process the command left behind (%d) survived", pid)
	}
}

// dies reports whether pid is gone (or a zombie) within a generous grace period: SIGKILL
// is delivered asynchronously.
func dies(pid int) bool {
	for range 500 {
		if err := syscall.Kill(pid, 0); err != nil {
			return true
		}
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
